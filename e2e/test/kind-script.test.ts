import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { parse, parseAllDocuments } from "yaml";
import { repoRoot } from "./support/paths.ts";

// The kind e2e cannot run here (no Docker); what can be checked without a cluster is checked here: the
// script parses, and the chart renders with exactly the values it installs with.
const run = promisify(execFile);
const script = readFileSync(join(repoRoot, "e2e", "kind", "run.sh"), "utf8");

describe("kind e2e script", () => {
  it("is valid bash", async () => {
    await run("bash", ["-n", join(repoRoot, "e2e", "kind", "run.sh")]);
  });

  it("installs the chart with values it accepts, images loaded into kind, no chart McpGateway", async () => {
    const sets = [...script.matchAll(/--set (\S+)/g)].map((match) => match[1] as string);
    expect(sets).toContain("gateway.mcpGateway.create=false");
    const args = [
      "template",
      "svc-gateway",
      join(repoRoot, "helm", "svc-gateway"),
      "-n",
      "svc-gateway",
      "--kube-version",
      "1.30.0",
    ];
    for (const value of sets) args.push("--set", value);
    const { stdout } = await run(join(repoRoot, "node_modules", ".bin", "helm"), args);
    const manifests = parseAllDocuments(stdout).map(
      (document) =>
        document.toJS() as {
          kind: string;
          spec?: { template?: { spec?: { containers?: { image: string; imagePullPolicy: string }[] } } };
        } | null,
    );
    expect(manifests.some((manifest) => manifest?.kind === "McpGateway")).toBe(false);
    const images = manifests
      .flatMap((manifest) => manifest?.spec?.template?.spec?.containers ?? [])
      .filter((c) => c.image.endsWith(":e2e"));
    expect(images.map((c) => [c.image, c.imagePullPolicy]).sort()).toEqual([
      ["svc-gateway:e2e", "Never"],
      ["svc-operator:e2e", "Never"],
    ]);
  });

  it("builds images whose COPY sources exist in the build context and survive its .dockerignore", () => {
    const builds = [...script.matchAll(/docker build -f (\S+) -t (\S+) \.$/gm)].map(
      (match) => match[1] as string,
    );
    expect(builds).toEqual([
      "gateway/Dockerfile",
      "operator/Dockerfile",
      "e2e/kind/identity-provider.Dockerfile",
      "e2e/kind/traffic.Dockerfile",
    ]);
    for (const dockerfile of builds) {
      const text = readFileSync(join(repoRoot, dockerfile), "utf8");
      // BuildKit reads <Dockerfile>.dockerignore next to the Dockerfile; only `**/name` and `name` patterns are used.
      const ignored = readFileSync(join(repoRoot, `${dockerfile}.dockerignore`), "utf8")
        .split("\n")
        .filter((line) => line.trim() !== "" && !line.startsWith("#"))
        .map((line) => line.trim());
      const sources = [...text.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap((match) =>
        (match[1] as string).split(/\s+/),
      );
      expect(sources.length, dockerfile).toBeGreaterThan(0);
      for (const source of sources) {
        expect(existsSync(join(repoRoot, source)), `${dockerfile}: COPY ${source}`).toBe(true);
        const segments = source.split("/").filter((segment) => segment !== "");
        const excluded = ignored.some((pattern) =>
          pattern.startsWith("**/") ? segments.includes(pattern.slice(3)) : segments[0] === pattern,
        );
        expect(excluded, `${dockerfile}: COPY ${source} is excluded by its .dockerignore`).toBe(false);
      }
    }
  });

  it("runs the traffic Pod with options the traffic script knows and the Secret the script creates", () => {
    const pod = parse(readFileSync(join(repoRoot, "e2e", "kind", "traffic.yaml"), "utf8")) as {
      spec: {
        containers: {
          image: string;
          args: string[];
          env: { name: string; valueFrom: { secretKeyRef: { name: string; key: string } } }[];
        }[];
      };
    };
    const [container] = pod.spec.containers;
    // The script's own options and the ones it shares with the MCP check.
    const trafficScript = ["scripts/kind-traffic.ts", "src/mcp-call-options.ts"]
      .map((file) => readFileSync(join(repoRoot, "e2e", file), "utf8"))
      .join("\n");
    const options = container?.args.filter((arg) => arg.startsWith("--")) ?? [];
    expect(options).toContain("--stop-file");
    for (const option of options) {
      const name = option.slice(2);
      expect(trafficScript.includes(`"${name}": {`) || trafficScript.includes(`  ${name}: {`), option).toBe(
        true,
      );
    }
    // The stop file run.sh creates is the one the Pod watches.
    const stopFile = container?.args[(container?.args.indexOf("--stop-file") ?? 0) + 1] ?? "";
    expect(script).toContain(`writeFileSync("${stopFile}"`);
    // Its credentials come from the Secret run.sh creates, under the key it writes.
    const secretRef = container?.env.find((variable) => variable.name === "TRAFFIC_CLIENT")?.valueFrom
      .secretKeyRef;
    expect(script).toContain(`kubectl create secret generic ${secretRef?.name} -n "$NS"`);
    expect(script).toContain(`--from-literal=${secretRef?.key}="$ENGINEER"`);
    expect(container?.args).toContain("$(TRAFFIC_CLIENT)");
    // The image run.sh builds and loads, with the script the local rolling-restart test runs.
    expect(script).toContain(`-t ${container?.image} .`);
    const dockerfile = readFileSync(join(repoRoot, "e2e", "kind", "traffic.Dockerfile"), "utf8");
    expect(dockerfile).toContain("COPY e2e/scripts/kind-traffic.ts e2e/scripts/");
    // Every module of ours the script imports is in the image too.
    const relativeImports = [...trafficScript.matchAll(/from "\.\.\/(src\/[^"]+)"/g)].map(
      (match) => match[1],
    );
    expect(relativeImports.length).toBeGreaterThan(0);
    for (const file of relativeImports) expect(dockerfile, file).toContain(`COPY e2e/${file} `);
  });
});
