import { afterEach, describe, expect, it } from "vitest";
import {
  configure_dev_auth,
  configure_jwt_auth,
  configureDevAuth,
  configureJwtAuth,
  StaticTokenConfig,
} from "../../src/auth/index.ts";
import { registry } from "../../src/auth/registry.ts";
import { clearAuthConfiguration } from "../../src/auth/runtime.ts";
import { callWhoami, type ProtectedServer, startProtectedServer } from "./helpers/protected-server.ts";

// Since 0.2.0 the old helpers refuse required_scopes with TypeError. Without it they are
// deprecated shims over configureAuth (documented in docs/auth.md).

let server: ProtectedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  clearAuthConfiguration();
});

describe("removed required_scopes parameter", () => {
  it.each([
    [
      "configureJwtAuth",
      () => configureJwtAuth({ jwks_uri: "https://x/jwks", required_scopes: ["a"] } as never),
    ],
    ["configure_jwt_auth", () => configure_jwt_auth({ required_scopes: [] } as never)],
    [
      "configureDevAuth",
      () => configureDevAuth({ tokens: { t: { client_id: "c" } }, required_scopes: ["a"] } as never),
    ],
    ["configure_dev_auth", () => configure_dev_auth({ required_scopes: undefined } as never)],
  ])("%s throws TypeError", (_name, call) => {
    expect(call).toThrow(TypeError);
    expect(call).toThrow(/required_scopes/);
    expect(registry().auth).toBeUndefined();
  });
});

describe("deprecated shims", () => {
  it("configureDevAuth without required_scopes configures static tokens, with a deprecation warning", async () => {
    configureDevAuth({ tokens: { "legacy-token-0123456789": { client_id: "legacy", scopes: [] } } });
    expect(registry().auth).toBeInstanceOf(StaticTokenConfig);
    server = await startProtectedServer();
    expect(server.layer.warnings.join("\n")).toMatch(/configureDevAuth\(\) is deprecated/);
    expect(
      (await callWhoami(server.mcpUrl, { authorization: "Bearer legacy-token-0123456789" })).clientId,
    ).toBe("legacy");
  });
});
