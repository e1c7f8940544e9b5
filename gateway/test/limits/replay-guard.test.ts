import { describe, expect, test } from "vitest";
import { MemoryKvStore } from "../../src/kv/index.ts";
import { ReplayGuard } from "../../src/limits/replay-guard.ts";
import { sessionScope } from "../../src/sessions/session-registry.ts";

describe("JSON-RPC request ids", () => {
  const scope = (server: string, session: string, owner = "alice") => sessionScope(server, session, owner);

  test("an id is accepted once per session", async () => {
    const guard = new ReplayGuard(new MemoryKvStore());
    expect(await guard.requestId(scope("github", "session-1"), 7)).toBe("first");
    expect(await guard.requestId(scope("github", "session-1"), 7)).toBe("replay");
  });
  test("the same id in another session, another server, for another owner, or as a string is a different request", async () => {
    const guard = new ReplayGuard(new MemoryKvStore());
    await guard.requestId(scope("github", "session-1"), 7);
    expect(await guard.requestId(scope("github", "session-2"), 7)).toBe("first");
    expect(await guard.requestId(scope("jira", "session-1"), 7)).toBe("first");
    expect(await guard.requestId(scope("github", "session-1"), "7")).toBe("first");
    // Somebody presenting another user's session id cannot spend that user's ids.
    expect(await guard.requestId(scope("github", "session-1", "mallory"), 8)).toBe("first");
    expect(await guard.requestId(scope("github", "session-1"), 8)).toBe("first");
  });
});

describe("DPoP proofs", () => {
  // Verification is identity/dpop-proof.ts's (test/identity/dpop-proof.test.ts); the guard spends verified jtis.
  const proof = (thumbprint: string, jti: string) => ({ thumbprint, jti, ath: undefined });

  test("a proof's jti is single-use", async () => {
    const guard = new ReplayGuard(new MemoryKvStore());
    expect(await guard.dpopJti(proof("key-a", "j-1"))).toBe("first");
    expect(await guard.dpopJti(proof("key-a", "j-1"))).toBe("replay");
  });

  test("the same jti from another key is another proof: one client cannot burn another's jti", async () => {
    const guard = new ReplayGuard(new MemoryKvStore());
    expect(await guard.dpopJti(proof("key-a", "j-1"))).toBe("first");
    expect(await guard.dpopJti(proof("key-b", "j-1"))).toBe("first");
  });
});
