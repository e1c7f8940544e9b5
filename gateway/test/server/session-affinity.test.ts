import { describe, expect, test } from "vitest";
import { stringify } from "yaml";
import { type ServerConfig, validateConfigText } from "../../src/config/index.ts";
import { createLogger } from "../../src/log/logger.ts";
import {
  findUnpinnedServers,
  type LookupAll,
  SessionAffinityWarnings,
} from "../../src/server/session-affinity.ts";

// The gateway cannot pin a session to one address of an https host (the certificate names the host), so
// `session_affinity: true` (the default) cannot be kept for an https host with several addresses: it warns at start
// and on reload. DNS is the part these tests stand in
// for (the machine's resolver cannot be given a multi-address name); the servers come from the real validator.

function serversOf(servers: Record<string, unknown>[]): ServerConfig[] {
  const result = validateConfigText(
    stringify({ version: "1.0", servers: servers.map((s) => ({ upstream_auth_type: "none", ...s })) }),
  );
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.config.servers;
}

/** A resolver answering from a table, counting the questions; unknown names fail as DNS does. */
function table(answers: Record<string, string[]>): LookupAll & { asked: string[] } {
  const asked: string[] = [];
  const lookup = async (host: string) => {
    asked.push(host);
    const addresses = answers[host];
    if (addresses === undefined)
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
    return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };
  return Object.assign(lookup, { asked });
}

describe("findUnpinnedServers", () => {
  const dns = {
    "replicas.internal": ["10.0.0.1", "10.0.0.2", "10.0.0.3"],
    "v6-replicas.internal": ["fd00::1", "fd00::2"],
    "dual-stack.internal": ["10.0.0.9", "fd00::9"],
    "single.internal": ["10.0.0.4"],
  };

  test("a host with several IPv4 or several IPv6 addresses, while session_affinity is true (the default)", async () => {
    const servers = serversOf([
      { name: "a", url: "https://replicas.internal/mcp" },
      { name: "b", url: "https://v6-replicas.internal:8080/mcp", session_affinity: true },
    ]);
    expect(await findUnpinnedServers(servers, table(dns))).toEqual([
      { server: "a", host: "replicas.internal", addresses: ["10.0.0.1", "10.0.0.2", "10.0.0.3"] },
      { server: "b", host: "v6-replicas.internal", addresses: ["fd00::1", "fd00::2"] },
    ]);
  });

  test("an http host with several addresses is pinned per address by the gateway: no warning", async () => {
    const servers = serversOf([{ name: "plain", url: "http://replicas.internal/mcp" }]);
    expect(await findUnpinnedServers(servers, table(dns))).toEqual([]);
  });

  test("not a one-address host, a dual-stack host, affinity off, a disabled server, or a name that does not resolve", async () => {
    const servers = serversOf([
      { name: "single", url: "https://single.internal/mcp" },
      { name: "dual", url: "https://dual-stack.internal/mcp" },
      { name: "off", url: "https://replicas.internal/mcp", session_affinity: false },
      { name: "disabled", url: "https://replicas.internal/mcp", enabled: false },
      { name: "unknown", url: "https://nowhere.internal/mcp" },
    ]);
    expect(await findUnpinnedServers(servers, table(dns))).toEqual([]);
  });

  test("IP literals are not looked up, and each host is asked once", async () => {
    const lookup = table(dns);
    const servers = serversOf([
      { name: "v4", url: "https://10.1.2.3:3000/mcp" },
      { name: "v6", url: "https://[fd00::7]:3000/mcp" },
      { name: "one", url: "https://replicas.internal/a/mcp" },
      { name: "two", url: "https://replicas.internal/b/mcp" },
    ]);
    expect((await findUnpinnedServers(servers, lookup)).map((u) => u.server)).toEqual(["one", "two"]);
    expect(lookup.asked).toEqual(["replicas.internal"]);
  });

  test("with the machine's own resolver, localhost is one host", async () => {
    expect(await findUnpinnedServers(serversOf([{ name: "local", url: "https://localhost:1/mcp" }]))).toEqual(
      [],
    );
  });
});

describe("SessionAffinityWarnings", () => {
  test("logs one warning per server, naming it and the addresses, and tells how to silence it", async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = createLogger({ level: "warn", write: (line) => lines.push(JSON.parse(line)) });
    const warnings = new SessionAffinityWarnings(
      logger,
      table({ "replicas.internal": ["10.0.0.1", "10.0.0.2"] }),
    );
    warnings.check(serversOf([{ name: "tools", url: "https://replicas.internal/mcp" }]));
    await until(() => lines.length > 0);
    expect(lines).toEqual([
      expect.objectContaining({
        level: "warn",
        msg: expect.stringMatching(/^session_affinity cannot be kept: .* or set session_affinity: false$/),
        server: "tools",
        host: "replicas.internal",
        addresses: ["10.0.0.1", "10.0.0.2"],
        address_count: 2,
      }),
    ]);
  });

  test("checks run one at a time, and reloads meanwhile cost one more check, on the latest configuration", async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const asked: string[] = [];
    const slow: LookupAll = async (host) => {
      asked.push(host);
      await gate;
      return [
        { address: "10.0.0.1", family: 4 },
        { address: "10.0.0.2", family: 4 },
      ];
    };
    const lines: Record<string, unknown>[] = [];
    const logger = createLogger({ level: "warn", write: (line) => lines.push(JSON.parse(line)) });
    const warnings = new SessionAffinityWarnings(logger, slow);
    for (const host of ["first", "second", "third", "latest"]) {
      warnings.check(serversOf([{ name: host, url: `https://${host}.internal/mcp` }]));
    }
    expect(asked).toEqual(["first.internal"]);
    release();
    await until(() => lines.length === 2);
    expect(asked).toEqual(["first.internal", "latest.internal"]);
    expect(lines.map((line) => line.server)).toEqual(["first", "latest"]);
  });
});

async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("timed out waiting for the condition");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
