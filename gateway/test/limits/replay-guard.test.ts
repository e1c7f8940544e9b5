import { describe, expect, test } from "vitest";
import { MemoryKvStore } from "../../src/kv/index.ts";
import { ReplayGuard } from "../../src/limits/replay-guard.ts";

describe("JSON-RPC request ids", () => {
  test("an id is accepted once per session", async () => {
    const guard = new ReplayGuard(new MemoryKvStore());
    expect(await guard.requestId("github", "session-1", 7)).toBe("first");
    expect(await guard.requestId("github", "session-1", 7)).toBe("replay");
  });
  test("the same id in another session, another server, or as a string is a different request", async () => {
    const guard = new ReplayGuard(new MemoryKvStore());
    await guard.requestId("github", "session-1", 7);
    expect(await guard.requestId("github", "session-2", 7)).toBe("first");
    expect(await guard.requestId("jira", "session-1", 7)).toBe("first");
    expect(await guard.requestId("github", "session-1", "7")).toBe("first");
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
