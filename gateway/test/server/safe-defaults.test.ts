// Safe defaults, loudly: the gateway binds loopback unless told otherwise, and anonymous access is never served on
// an address other hosts can reach by one setting alone.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test, vi } from "vitest";
import { refuseRemoteAnonymousAccess } from "../../src/server/start-gateway.ts";
import { svcGateway } from "../config/svc-gateway-cli.ts";

vi.setConfig({ testTimeout: 30_000 });

const BIN = new URL("../../bin/svc-gateway.js", import.meta.url).pathname;
let dir: string;
let config: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "svc-safe-defaults-"));
  config = join(dir, "gateway.yaml");
  await writeFile(config, 'version: "1.0"\nservers: []\n');
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("svc-gateway start", () => {
  test("without --host it binds 127.0.0.1 (its listening line says so)", async () => {
    const child = spawn(process.execPath, [BIN, "start", "--config", config, "--port", "0"], {
      env: {
        PATH: process.env.PATH ?? "",
        LOG_LEVEL: "info",
        SVC_AUDIT_FILE: "/dev/null",
        SVC_DRAIN_DELAY_SECONDS: "0",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    const listening = new Promise<Record<string, unknown>>((resolve, reject) => {
      child.stdout.on("data", (chunk: Buffer) => {
        out += chunk.toString();
        for (const line of out.split("\n")) {
          if (line.includes('"msg":"listening"')) resolve(JSON.parse(line) as Record<string, unknown>);
        }
      });
      child.once("exit", (code) => reject(new Error(`exited with ${code} before listening: ${out}`)));
    });
    try {
      expect(await listening).toMatchObject({
        host: "127.0.0.1",
        url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
      });
    } finally {
      child.kill("SIGTERM");
      await once(child, "exit");
    }
  });

  test("SVC_ALLOW_ANONYMOUS=true on a non-loopback address is refused before anything listens, naming the second setting", async () => {
    const run = await svcGateway(["start", "--config", config, "--port", "0", "--host", "0.0.0.0"], {
      env: { SVC_ALLOW_ANONYMOUS: "true", SVC_AUDIT_FILE: "/dev/null" },
      timeoutMs: 20_000,
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("SVC_ALLOW_ANONYMOUS=true with --host 0.0.0.0");
    expect(run.stderr).toContain("SVC_ALLOW_ANONYMOUS_REMOTE=true");
    expect(run.stdout).not.toContain('"msg":"listening"');
  });
});

describe("the rule itself", () => {
  test("loopback, no anonymous access, or both settings: allowed; anonymous on another address alone: refused", () => {
    const check = (allowAnonymous: boolean, allowAnonymousRemote: boolean, host: string) => () =>
      refuseRemoteAnonymousAccess({ allowAnonymous, allowAnonymousRemote }, host);
    for (const host of ["127.0.0.1", "::1", "localhost"]) expect(check(true, false, host)).not.toThrow();
    expect(check(false, false, "0.0.0.0")).not.toThrow();
    expect(check(true, true, "0.0.0.0")).not.toThrow();
    for (const host of ["0.0.0.0", "::", "10.1.2.3"])
      expect(check(true, false, host)).toThrow(/SVC_ALLOW_ANONYMOUS_REMOTE/);
  });
});
