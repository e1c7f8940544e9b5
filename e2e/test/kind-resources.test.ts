import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { readResources } from "../../operator/src/cli/read-resources.ts";
import { formatResourceProblem } from "../../operator/src/render/problems.ts";
import { renderAll } from "../../operator/src/render/render-all.ts";
import type { Resource } from "../../operator/src/render/resources.ts";
import { type Json, jsonMergePatch } from "../../operator/src/testing/merge.ts";
import { repoRoot } from "./support/paths.ts";

// What the kind e2e (e2e/kind/run.sh) applies, checked without a cluster: every resource it applies and every
// state its `kubectl patch` steps lead to renders into a gateway configuration the operator would apply (CRD
// schemas and `@svc-mcp/gateway/config` rules), the invalid resource is refused for the reason the script greps for,
// and the identity provider's Pod, its IdentityProvider resource and the script's token requests agree.

const script = readFileSync(join(repoRoot, "e2e", "kind", "run.sh"), "utf8");
const appliedPaths = [...script.matchAll(/kubectl apply -f (\S+)/g)]
  .map((match) => match[1] as string)
  .filter((path) => path !== "-");
const patches = [
  ...script.matchAll(/kubectl patch mcpserver (\S+) -n "\$NS" --type merge -p '([^']+)'/g),
].map((match) => ({ name: match[1] as string, patch: JSON.parse(match[2] as string) as Json }));
const BROKEN = "e2e/kind/broken-server.yaml";
const read = (path: string) => readResources(join(repoRoot, path));
const problemsOf = (resources: Resource[]) => renderAll(resources).problems.map(formatResourceProblem);

describe("the kind e2e's resources", () => {
  it("applies the operator examples, the identity provider and the e2e server, then the broken one, then the traffic", () => {
    expect(appliedPaths).toEqual([
      "e2e/kind/identity-provider.yaml",
      "operator/examples/",
      "e2e/kind/resources.yaml",
      BROKEN,
      "e2e/kind/traffic.yaml",
    ]);
    expect(patches.length).toBeGreaterThanOrEqual(3);
  });

  it("render into a valid gateway configuration in every state the script's patches lead to", () => {
    let resources = appliedPaths.filter((path) => path !== BROKEN).flatMap(read);
    expect(problemsOf(resources)).toEqual([]);
    for (const { name, patch } of patches) {
      const index = resources.findIndex(
        (resource) => resource.kind === "McpServer" && resource.metadata.name === name,
      );
      expect(index, `the script patches McpServer ${name}`).toBeGreaterThanOrEqual(0);
      resources = resources.with(
        index,
        jsonMergePatch(resources[index] as unknown as Json, patch) as unknown as Resource,
      );
      expect(problemsOf(resources), JSON.stringify(patch)).toEqual([]);
    }
    // The script ends where it began: the server open to engineering again.
    expect(resources).toEqual(appliedPaths.filter((path) => path !== BROKEN).flatMap(read));
  });

  it("refuses the broken server for the reason the script greps for", () => {
    const resources = appliedPaths.flatMap(read);
    const problems = problemsOf(resources);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain("McpServer svc-gateway/broken");
    expect(problems[0]).toContain('no identity provider named "nowhere"');
    expect(script).toContain("grep -q 'nowhere'");
  });

  it("has the identity provider's Pod, its IdentityProvider and the script's token requests agree", () => {
    interface Document {
      kind: string;
      metadata: { name: string; namespace: string };
      spec: {
        template: { spec: { containers: { args: string[] }[] } };
        ports: { port: number }[];
        issuer: string;
        jwksUri: string;
        apiIdentifiers: string[];
      };
    }
    const documents = parseAllDocuments(
      readFileSync(join(repoRoot, "e2e/kind/identity-provider.yaml"), "utf8"),
    ).map((document) => document.toJS() as Document);
    const byKind = (kind: string) => documents.find((document) => document.kind === kind) as Document;
    const args = byKind("Deployment").spec.template.spec.containers[0]?.args ?? [];
    const issuer = args[args.indexOf("--issuer") + 1];
    const service = byKind("Service");
    expect(issuer).toBe(
      `http://${service.metadata.name}.${service.metadata.namespace}.svc:${service.spec.ports[0]?.port}`,
    );
    const provider = byKind("IdentityProvider");
    expect(provider.spec.issuer).toBe(issuer);
    expect(provider.spec.jwksUri).toBe(`${issuer}/jwks`);
    const audience = /--resource (\S+)\)/.exec(script)?.[1];
    expect(provider.spec.apiIdentifiers).toContain(audience);
    const server = read("e2e/kind/resources.yaml")[0] as Resource & { spec: { idp: string } };
    expect((byKind("IdentityProvider") as { metadata: { name: string } }).metadata.name).toBe(
      server.spec.idp,
    );
    // The clients the Secret defines are the ones the checks log in as.
    expect(script).toMatch(/--from-literal=clients="\$ENGINEER:engineering \$CONTRACTOR:contractors"/);
  });
});
