import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { GROUP_VERSION } from "../../operator/src/api/names.ts";
import { readResources } from "../../operator/src/cli/read-resources.ts";
import { validateResource } from "../../operator/src/crd/validate-resource.ts";
import { formatResourceProblem } from "../../operator/src/render/problems.ts";
import { renderAll } from "../../operator/src/render/render-all.ts";
import type { Resource } from "../../operator/src/render/resources.ts";
import { repoRoot } from "./support/paths.ts";

// `svc init` writes mcpserver.yaml for `kubectl apply`: it must be an McpServer the CRD accepts and the operator
// turns into a Deployment and Service, with the project's name filled in. The framework cannot import the
// operator (products stay separate), so the check lives here, where both meet.
const run = promisify(execFile);
const scratch = mkdtempSync(join(tmpdir(), "svc-scaffold-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("the McpServer manifest svc init writes", () => {
  it("passes the CRD schema and renders into a Deployment and Service behind a gateway", async () => {
    const project = join(scratch, "weather-tools");
    await run(process.execPath, [join(repoRoot, "framework", "bin", "svc.js"), "init", project]);
    const [server, ...others] = readResources(join(project, "mcpserver.yaml"));
    expect(others).toEqual([]);
    expect(server).toMatchObject({
      apiVersion: GROUP_VERSION,
      kind: "McpServer",
      metadata: { name: "weather-tools" },
    });
    expect(validateResource("McpServer", server)).toEqual([]);

    // As applied into a namespace (kubectl fills metadata.namespace) next to a gateway and an identity provider.
    const inNamespace = (resource: Resource): Resource => ({
      ...resource,
      metadata: { ...resource.metadata, namespace: "tools" },
    });
    const gateway = inNamespace({
      apiVersion: GROUP_VERSION,
      kind: "McpGateway",
      metadata: { name: "gw" },
      spec: {},
    });
    const provider = inNamespace({
      apiVersion: GROUP_VERSION,
      kind: "IdentityProvider",
      metadata: { name: "corporate" },
      spec: {
        type: "hosted_idp",
        issuer: "https://idp.example.com/",
        jwksUri: "https://idp.example.com/jwks",
      },
    });
    const result = renderAll([gateway, provider, inNamespace(server as Resource)]);
    expect(result.problems.map(formatResourceProblem)).toEqual([]);
    expect(result.objects.map((object) => `${object.kind}/${object.metadata?.name}`)).toEqual(
      expect.arrayContaining(["Deployment/weather-tools", "Service/weather-tools"]),
    );
  });
});
