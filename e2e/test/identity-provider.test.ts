import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { decodeJwt } from "jose";
import { clientCredentialsToken } from "svc-testkit/client-credentials";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  parseClient,
  type RunningIdentityProvider,
  startIdentityProvider,
} from "../src/identity-provider.ts";
import { repoRoot } from "./support/paths.ts";

// The e2e identity provider itself: tokens carry the client's groups, the audience asked for and the configured
// issuer; wrong credentials get no token; its command line refuses what it cannot use.
const run = promisify(execFile);
const cli = join(repoRoot, "e2e", "scripts", "identity-provider.ts");
let idp: RunningIdentityProvider;

beforeAll(async () => {
  idp = await startIdentityProvider({
    host: "127.0.0.1",
    port: 0,
    issuer: "http://idp.cluster.example:8080",
    clients: [
      { id: "engineer", secret: "engineer-secret", groups: ["engineering", "support"] },
      { id: "nobody", secret: "nobody-secret", groups: [] },
    ],
  });
});
afterAll(() => idp?.close());

const token = (clientId: string, clientSecret: string) =>
  clientCredentialsToken({
    tokenUrl: `${idp.url}/token`,
    clientId,
    clientSecret,
    resource: "https://api.e2e",
  });

describe("e2e identity provider", () => {
  it("issues JWT access tokens with the client's groups, the audience and the configured issuer", async () => {
    const claims = decodeJwt(await token("engineer", "engineer-secret"));
    expect(claims).toMatchObject({
      iss: "http://idp.cluster.example:8080",
      aud: "https://api.e2e",
      sub: "engineer",
      groups: ["engineering", "support"],
    });
    expect(decodeJwt(await token("nobody", "nobody-secret")).groups).toEqual([]);
    const jwks = (await (await fetch(`${idp.url}/jwks`)).json()) as { keys: { kty: string; d?: string }[] };
    expect(jwks.keys.map((key) => [key.kty, key.d])).toEqual([["RSA", undefined]]);
  });

  it("gives no token for a wrong secret or an unknown client", async () => {
    await expect(token("engineer", "wrong")).rejects.toThrow(
      /refused a token for client 'engineer': HTTP 401/,
    );
    await expect(token("stranger", "x")).rejects.toThrow(/HTTP 401/);
  });

  it("reads clients as id:secret:groups and says what is wrong with one it cannot read", () => {
    expect(parseClient("a:b:c,d")).toEqual({ id: "a", secret: "b", groups: ["c", "d"] });
    expect(parseClient("a:b:")).toEqual({ id: "a", secret: "b", groups: [] });
    for (const bad of ["a", "a:b", ":b:c", "a::c", "a:b:c:d"]) {
      expect(() => parseClient(bad)).toThrow(`got '${bad}'`);
    }
  });

  it("exits 2 with the reason and its usage for a command line it cannot use", async () => {
    for (const [args, reason] of [
      [[], "at least one client is needed"],
      [["--client", "x"], "a client is id:secret:group1,group2"],
      [["--client", "a:b:c", "--port", "70000"], "--port must be 0-65535"],
      [["--bogus"], "Unknown option '--bogus'"],
    ] as const) {
      const failure = await run(process.execPath, [cli, ...args], { env: { PATH: process.env.PATH } }).catch(
        (error: { code: number; stderr: string }) => error,
      );
      expect(failure).toMatchObject({ code: 2 });
      expect((failure as { stderr: string }).stderr).toContain(reason);
      expect((failure as { stderr: string }).stderr).toContain("usage: identity-provider");
    }
  });
});
