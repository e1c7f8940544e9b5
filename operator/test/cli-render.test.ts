import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { examplesDir, operatorDir, repoRoot } from "./paths.ts";

// The CLIs as users run them: `svc-operator render … --gateway-config > x.yaml && svc-gateway validate --config x.yaml`.
const run = promisify(execFile);
const node = process.execPath;
const operatorBin = join(operatorDir, "bin", "svc-operator.js");
const gatewayBin = join(repoRoot, "gateway", "bin", "svc-gateway.js");
const scratch = mkdtempSync(join(tmpdir(), "svc-operator-cli-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

async function exitOf(promise: Promise<{ stdout: string; stderr: string }>) {
  try {
    const { stdout, stderr } = await promise;
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failure = error as { code: number; stdout: string; stderr: string };
    return { code: failure.code, stdout: failure.stdout, stderr: failure.stderr };
  }
}

describe("svc-operator render", () => {
  it("renders the examples into gateway YAML that `svc-gateway validate` accepts", async () => {
    const { stdout } = await run(node, [operatorBin, "render", "-f", examplesDir, "--gateway-config"]);
    const file = join(scratch, "examples.yaml");
    writeFileSync(file, stdout);
    const validated = await exitOf(
      run(node, [gatewayBin, "validate", "--config", file], { env: { PATH: process.env.PATH } }),
    );
    expect(validated.stderr).toBe("");
    expect(validated.code).toBe(0);
    expect(validated.stdout).toContain("servers: 3");
  });

  it("renders secret references as ${VAR} that validate once the pod's variables are set", async () => {
    const { stdout } = await run(node, [
      operatorBin,
      "render",
      "-f",
      join(examplesDir, "with-secrets"),
      "--gateway-config",
    ]);
    const file = join(scratch, "with-secrets.yaml");
    writeFileSync(file, stdout);
    const variables = [...stdout.matchAll(/\$\{(SVC_SECRET_[A-Z0-9_]+)\}/g)].map(
      (match) => match[1] as string,
    );
    expect(variables).toHaveLength(2);
    const withoutSecrets = await exitOf(
      run(node, [gatewayBin, "validate", "--config", file], { env: { PATH: process.env.PATH } }),
    );
    expect(withoutSecrets.code).toBe(1);
    const env = Object.fromEntries(variables.map((name) => [name, "from-the-secret"]));
    const withSecrets = await exitOf(
      run(node, [gatewayBin, "validate", "--config", file], { env: { PATH: process.env.PATH, ...env } }),
    );
    expect(withSecrets.code).toBe(0);
  });

  it("prints every object (ConfigMap, gateway env patch, server Deployment and Service)", async () => {
    const { stdout } = await run(node, [operatorBin, "render", "-f", examplesDir]);
    const kinds = [...stdout.matchAll(/^kind: (\w+)$/gm)].map((match) => match[1]);
    expect(kinds).toEqual(["ConfigMap", "Deployment", "Deployment", "Service"]);
  });

  it("exits 1 naming the resource and field of each problem", async () => {
    const dir = mkdtempSync(join(scratch, "bad-"));
    writeFileSync(
      join(dir, "bad.yaml"),
      [
        "apiVersion: mcp.svc.dev/v1alpha1\nkind: McpGateway\nmetadata: { name: gw, namespace: ns }\nspec: {}",
        "apiVersion: mcp.svc.dev/v1alpha1\nkind: McpServer\nmetadata: { name: s, namespace: ns }\nspec: { url: 'http://s/mcp', idp: missing, rbacMode: sometimes }",
      ].join("\n---\n"),
    );
    const result = await exitOf(run(node, [operatorBin, "render", "-f", dir]));
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("McpServer ns/s: spec.rbacMode: must be one of: allow, deny");
  });

  it("lists every problem at once, with a suggestion for a mistyped field or kind", async () => {
    const dir = mkdtempSync(join(scratch, "typos-"));
    writeFileSync(
      join(dir, "typos.yaml"),
      [
        "apiVersion: mcp.svc.dev/v1alpha1\nkind: McpSever\nmetadata: { name: one }\nspec: { url: 'http://s/mcp' }",
        "apiVersion: mcp.svc.dev/v1alpha1\nkind: McpServer\nmetadata: { name: two }\nspec: { url: 'http://s/mcp', rbacMod: allow }",
        "apiVersion: mcp.svc.dev/v1\nkind: McpGateway\nmetadata: { name: gw }\nspec: {}",
        "apiVersion: v1\nkind: Secret\nmetadata: { name: unrelated }",
      ].join("\n---\n"),
    );
    const result = await exitOf(run(node, [operatorBin, "render", "-f", dir]));
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("3 problem(s)");
    expect(result.stderr).toContain(
      'McpSever default/one: kind: unknown kind "McpSever" (did you mean "McpServer"?)',
    );
    expect(result.stderr).toContain(
      'McpServer default/two: spec: unknown field "rbacMod" (did you mean "rbacMode"?)',
    );
    expect(result.stderr).toContain(
      'McpGateway default/gw: apiVersion: must be mcp.svc.dev/v1alpha1 (was "mcp.svc.dev/v1")',
    );
    expect(result.stderr).not.toContain("Secret");
  });

  it("reports every unreadable document of every file, not only the first", async () => {
    const dir = mkdtempSync(join(scratch, "unreadable-"));
    writeFileSync(join(dir, "a.yaml"), "kind: McpServer\n---\nitems: [\n");
    writeFileSync(join(dir, "b.yaml"), "apiVersion: v1\n");
    const result = await exitOf(run(node, [operatorBin, "render", "-f", dir]));
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("3 problem(s)");
    expect(result.stderr).toContain(`${join(dir, "a.yaml")} (document 1): missing apiVersion, metadata.name`);
    expect(result.stderr).toContain(`${join(dir, "a.yaml")} (document 2): `);
    expect(result.stderr).toContain(`${join(dir, "b.yaml")} (document 1): missing kind, metadata.name`);
  });

  it("names a mistyped option and the one probably meant; lists every bad run flag at once", async () => {
    const typo = await exitOf(run(node, [operatorBin, "render", "--gateway-confg"]));
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain(
      "svc-operator render: unknown option '--gateway-confg' (did you mean '--gateway-config'?)",
    );
    const flags = await exitOf(
      run(node, [operatorBin, "run", "--health-port", "x", "--lease-duration", "0", "--namespce", "a"]),
    );
    expect(flags.stderr).toContain("unknown option '--namespce' (did you mean '--namespace'?)");
    const values = await exitOf(
      run(node, [operatorBin, "run", "--health-port", "x", "--lease-duration", "0"]),
    );
    expect(values.code).toBe(2);
    expect(values.stderr).toContain(
      'svc-operator run: 2 problems:\n  --health-port must be a port number (was "x")\n  --lease-duration must be a positive number of seconds (was "0")',
    );
  });

  it("answers usage errors with exit 2", async () => {
    expect((await exitOf(run(node, [operatorBin, "render"]))).code).toBe(2);
    expect((await exitOf(run(node, [operatorBin, "nonsense"]))).code).toBe(2);
  });
});
