import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { validateResource } from "../src/crd/validate-resource.ts";
import { expectGolden } from "./golden.ts";
import { repoRoot } from "./paths.ts";
import { chart, helm, helmTemplate } from "./support/helm-template.ts";

// `helm lint` and `helm template` with the real helm binary (support/helm-template.ts).
const run = promisify(execFile);
const KUBE_VERSION = "1.30.0";

// biome-ignore lint/suspicious/noExplicitAny: the assertions walk deep into rendered manifests
type Manifest = { kind: string; metadata: { name: string }; spec?: any };

const template = (...set: string[]) => helmTemplate<Manifest>({ kubeVersion: KUBE_VERSION, set });

const find = (manifests: Manifest[], kind: string, name: string) => {
  const manifest = manifests.find((m) => m.kind === kind && m.metadata.name === name);
  if (!manifest) throw new Error(`no ${kind} ${name}`);
  return manifest;
};

describe("helm chart", () => {
  it("passes helm lint", async () => {
    const { stdout } = await run(helm, ["lint", chart]);
    expect(stdout).toContain("0 chart(s) failed");
  });

  it("renders with `helm template` and no flags: the chart's kubeVersion accepts what helm assumes", async () => {
    // Without a cluster, helm assumes the Kubernetes version of the client library it was built with
    // (1.25 from helm 3.10 on), which the chart's `kubeVersion: >=1.25.0-0` must accept.
    const { stdout: version } = await run(helm, ["version", "--template", "{{.Version}}"]);
    const [major = 0, minor = 0] = version.replace(/^v/, "").split(".").map(Number);
    expect(major === 3 && minor >= 10, `pinned helm ${version}`).toBe(true);
    const { stdout } = await run(helm, ["template", "svc-gateway", chart]);
    expect(stdout).toContain("kind: Deployment");
  });

  it("creates an McpGateway with oauthServer and its keys, and refuses it without a public URL or, replicated, Redis", async () => {
    const oauth = [
      "gateway.mcpGateway.spec.oauthServer.idpClientId=svc-gateway",
      "gateway.mcpGateway.spec.oauthServer.idpClientSecret.secretKeyRef.name=svc-oauth",
      "gateway.mcpGateway.spec.oauthServer.idpClientSecret.secretKeyRef.key=idp-client-secret",
      "gateway.mcpGateway.spec.oauthServerKeys.signingKeys.secretKeyRef.name=svc-oauth",
      "gateway.mcpGateway.spec.oauthServerKeys.signingKeys.secretKeyRef.key=signing-keys",
      "gateway.mcpGateway.spec.oauthServerKeys.kvKey.secretKeyRef.name=svc-oauth",
      "gateway.mcpGateway.spec.oauthServerKeys.kvKey.secretKeyRef.key=kv-key",
    ];
    const { manifests } = await template(
      ...oauth,
      "gateway.publicUrl=https://mcp.example.com",
      "redis.bundled.enabled=true",
    );
    const mcpGateway = find(manifests, "McpGateway", "svc-gateway");
    expect(mcpGateway.spec.oauthServerKeys.kvKey.secretKeyRef).toEqual({ name: "svc-oauth", key: "kv-key" });
    expect(validateResource("McpGateway", mcpGateway)).toEqual([]);

    const failure = (set: string[]) =>
      template(...set).then(
        () => "",
        (error: { stderr: string }) => error.stderr,
      );
    expect(await failure([...oauth, "redis.bundled.enabled=true"])).toMatch(/needs gateway\.publicUrl/);
    expect(await failure([...oauth, "gateway.publicUrl=https://mcp.example.com"])).toMatch(/needs Redis/);
  });

  it("rejects values that break values.schema.json, naming the field", async () => {
    const failure = await run(helm, [
      "lint",
      chart,
      "--set",
      "operator.scope=galaxy",
      "--set",
      "gateway.drain.timeoutSeconds=-1",
    ]).catch((error: { stdout: string; stderr: string }) => error);
    const output = `${failure.stdout}${failure.stderr}`;
    expect(output).toContain("operator.scope");
    expect(output).toContain("gateway.drain.timeoutSeconds");
    expect(output).toContain("1 chart(s) failed");
  });

  it.each([
    ["default.yaml", []],
    [
      "namespace-scope-redis-hpa.yaml",
      [
        "operator.scope=namespace",
        "redis.bundled.enabled=true",
        "gateway.autoscaling.enabled=true",
        "metrics.serviceMonitor.enabled=true",
      ],
    ],
    ["without-operator.yaml", ["operator.enabled=false", "redis.url=rediss://redis.example:6380"]],
  ])("renders %s (golden)", async (name, set) => {
    const { text } = await template(...set);
    const golden = expectGolden(join("helm", name), text);
    expect(golden.actual).toBe(golden.expected);
  });

  it("runs the gateway the way its drain and reload need", async () => {
    const { manifests } = await template(
      "gateway.drain.preStopSleepSeconds=3",
      "gateway.drain.timeoutSeconds=40",
    );
    const pod = find(manifests, "Deployment", "svc-gateway").spec.template.spec;
    const container = pod.containers[0];
    expect(pod.terminationGracePeriodSeconds).toBe(3 + 40 + 5);
    expect(container.lifecycle.preStop.exec.command).toEqual(["sleep", "3"]);
    expect(container.env).toEqual(
      expect.arrayContaining([
        { name: "SVC_DRAIN_TIMEOUT_SECONDS", value: "40" },
        { name: "SVC_DRAIN_DELAY_SECONDS", value: "5" },
      ]),
    );
    expect(container.livenessProbe.httpGet.path).toBe("/health");
    expect(container.readinessProbe.httpGet.path).toBe("/readiness");
    expect(container.startupProbe.httpGet.path).toBe("/health");
    expect(container.securityContext).toMatchObject({
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      runAsNonRoot: true,
      capabilities: { drop: ["ALL"] },
    });
    expect(pod.securityContext).toMatchObject({
      runAsNonRoot: true,
      seccompProfile: { type: "RuntimeDefault" },
    });
    // The config is a directory mount (the kubelet's ..data swap reaches it), never a subPath.
    expect(container.volumeMounts).toContainEqual({
      name: "config",
      mountPath: "/etc/svc-gateway",
      readOnly: true,
    });
    expect(JSON.stringify(manifests)).not.toContain("subPath");
    expect(pod.volumes).toContainEqual({ name: "config", configMap: { name: "svc-gateway-config" } });
    // And no config checksum on the pod template: a config change must not restart the gateway.
    expect(find(manifests, "Deployment", "svc-gateway").spec.template.metadata.annotations).toBeUndefined();
  });

  it("serves from every interface of the pod, and names its public URL when given one", async () => {
    const container = (manifests: Manifest[]) =>
      find(manifests, "Deployment", "svc-gateway").spec.template.spec.containers[0];
    const plain = container((await template()).manifests);
    // The binary binds 127.0.0.1 by default; in a pod it must listen where the Service can reach it.
    expect(plain.args).toEqual(expect.arrayContaining(["--host", "0.0.0.0"]));
    expect(plain.env.map((entry: { name: string }) => entry.name)).not.toContain("SVC_PUBLIC_URL");
    const named = container((await template("gateway.publicUrl=https://mcp.example.com")).manifests);
    expect(named.env).toContainEqual({ name: "SVC_PUBLIC_URL", value: "https://mcp.example.com" });
    const refused = await run(helm, ["lint", chart, "--set", "gateway.publicUrl=mcp.example.com"]).catch(
      (error: { stdout: string; stderr: string }) => error,
    );
    expect(`${refused.stdout}${refused.stderr}`).toContain("gateway.publicUrl");
  });

  it("creates an McpGateway the CRD accepts, pointing the operator at the chart's ConfigMap and Deployment", async () => {
    const { manifests } = await template(
      "gateway.mcpGateway.spec.security.rateLimiting.requestsPerMinute=50",
    );
    const gateway = find(manifests, "McpGateway", "svc-gateway");
    expect(gateway.spec).toMatchObject({
      configMapName: "svc-gateway-config",
      deploymentName: "svc-gateway",
      containerName: "gateway",
    });
    expect(validateResource("McpGateway", gateway)).toEqual([]);
  });

  it("joins a gateway to the control plane: distributed through its McpGateway, centralized without a config file", async () => {
    const examples = join(repoRoot, "helm", "examples");
    const distributed = await helmTemplate<Manifest>({
      kubeVersion: KUBE_VERSION,
      valuesFile: join(examples, "control-plane-distributed.yaml"),
    });
    const operatorArgs = find(distributed.manifests, "Deployment", "svc-gateway-operator").spec.template.spec
      .containers[0]?.args;
    expect(operatorArgs).toContain("--control-plane-port=8090");
    expect(find(distributed.manifests, "Service", "svc-gateway-control-plane")).toBeDefined();
    const gateway = find(distributed.manifests, "McpGateway", "svc-gateway");
    expect(gateway.spec).toMatchObject({
      controlPlane: {
        url: "http://svc-gateway-control-plane.svc-gateway.svc:8090",
        gatewayId: "0b6b2c1e-6a1f-4c38-9d1e-0d8e4b6f7a11",
        apiKey: { secretKeyRef: { name: "gateway-cp-key", key: "api-key" } },
      },
      controlPlaneClient: { organizationPolicy: "acme" },
    });
    expect(validateResource("McpGateway", gateway)).toEqual([]);

    const centralized = await helmTemplate<Manifest>({
      kubeVersion: KUBE_VERSION,
      valuesFile: join(examples, "control-plane-centralized.yaml"),
    });
    const pod = find(centralized.manifests, "Deployment", "svc-gateway").spec.template.spec;
    const container = pod.containers[0];
    expect(container?.args).not.toContain("--config");
    expect(pod.volumes?.map((volume: { name: string }) => volume.name)).not.toContain("config");
    expect(container?.env).toEqual(
      expect.arrayContaining([
        { name: "SVC_CONTROL_PLANE_URL", value: "https://control-plane.example.com" },
        { name: "SVC_GATEWAY_ID", value: "2d8d4e3a-8c3b-4e5a-9f3a-2fa06d8b9c33" },
        {
          name: "SVC_CONTROL_PLANE_API_KEY",
          valueFrom: { secretKeyRef: { name: "gateway-cp-key", key: "api-key" } },
        },
      ]),
    );
  });

  it("runs the bundled Redis with a password from a Secret, and the gateway's REDIS_URL carries it", async () => {
    const { manifests } = await template(
      "redis.bundled.enabled=true",
      "redis.bundled.auth.enabled=true",
      "redis.bundled.auth.existingSecret=redis-pass",
    );
    const passwordFrom = { secretKeyRef: { name: "redis-pass", key: "redis-password" } };
    const redis = find(manifests, "Deployment", "svc-gateway-redis").spec.template.spec.containers[0];
    expect(redis.env).toEqual([{ name: "REDIS_PASSWORD", valueFrom: passwordFrom }]);
    expect(redis.args).toEqual(expect.arrayContaining(["--requirepass", "$(REDIS_PASSWORD)"]));
    const env = find(manifests, "Deployment", "svc-gateway").spec.template.spec.containers[0].env;
    // $(REDIS_PASSWORD) expands only from entries defined before it.
    const names = env.map((entry: { name: string }) => entry.name);
    expect(names.indexOf("REDIS_PASSWORD")).toBeLessThan(names.indexOf("REDIS_URL"));
    expect(env).toContainEqual({ name: "REDIS_PASSWORD", valueFrom: passwordFrom });
    expect(env).toContainEqual({
      name: "REDIS_URL",
      value: "redis://:$(REDIS_PASSWORD)@svc-gateway-redis:6379",
    });
    // No URL Secret without the password in it.
    expect(manifests.filter((m) => m.kind === "Secret")).toEqual([]);
    const refused = await run(helm, ["lint", chart, "--set", "redis.bundled.auth.enabled=true"]).catch(
      (error: { stdout: string; stderr: string }) => error,
    );
    expect(`${refused.stdout}${refused.stderr}`).toContain("redis.bundled.auth.existingSecret");
  });

  it("trusts a private CA for a rediss:// Redis, and refuses the CA with a plain redis:// URL", async () => {
    const { manifests } = await template(
      "redis.url=rediss://redis.internal:6380",
      "redis.tls.caSecret.name=internal-ca",
    );
    const pod = find(manifests, "Deployment", "svc-gateway").spec.template.spec;
    expect(pod.containers[0].env).toContainEqual({
      name: "NODE_EXTRA_CA_CERTS",
      value: "/etc/svc-redis-ca/ca.crt",
    });
    expect(pod.containers[0].volumeMounts).toContainEqual({
      name: "redis-ca",
      mountPath: "/etc/svc-redis-ca",
      readOnly: true,
    });
    expect(pod.volumes).toContainEqual({
      name: "redis-ca",
      secret: { secretName: "internal-ca", items: [{ key: "ca.crt", path: "ca.crt" }] },
    });
    const refused = await run(helm, [
      "lint",
      chart,
      "--set",
      "redis.url=redis://redis.internal:6379",
      "--set",
      "redis.tls.caSecret.name=internal-ca",
    ]).catch((error: { stdout: string; stderr: string }) => error);
    expect(`${refused.stdout}${refused.stderr}`).toContain("redis.url");
  });

  it("types every value of values.yaml and of the values examples in values.schema.json", () => {
    type Schema = {
      $ref?: string;
      type?: string;
      enum?: unknown[];
      properties?: Record<string, Schema>;
      additionalProperties?: boolean | Schema;
      items?: Schema;
    };
    const schema = JSON.parse(readFileSync(join(chart, "values.schema.json"), "utf8")) as Schema & {
      definitions: Record<string, Schema>;
    };
    const resolve = (node: Schema): Schema =>
      node.$ref ? resolve(schema.definitions[node.$ref.replace("#/definitions/", "")] as Schema) : node;
    const untyped: string[] = [];
    const walk = (value: unknown, node: Schema | undefined, path: string): void => {
      if (!node) {
        untyped.push(`${path}: not in values.schema.json`);
        return;
      }
      const resolved = resolve(node);
      if (resolved.type === undefined && resolved.enum === undefined) untyped.push(`${path}: no type`);
      if (value === null || typeof value !== "object" || Array.isArray(value)) return;
      if (resolved.properties && resolved.additionalProperties !== false) {
        untyped.push(`${path}: declares properties but lets others through`);
      }
      for (const [key, child] of Object.entries(value)) {
        const childSchema =
          resolved.properties?.[key] ??
          (typeof resolved.additionalProperties === "object" ? resolved.additionalProperties : undefined);
        // A free-form object (a Kubernetes fragment such as affinity) is typed as a whole.
        if (!childSchema && resolved.additionalProperties === undefined && !resolved.properties) continue;
        walk(child, childSchema, path === "" ? key : `${path}.${key}`);
      }
    };
    const examples = join(repoRoot, "helm", "examples");
    const files = [
      join(chart, "values.yaml"),
      ...readdirSync(examples)
        .filter((name) => name.endsWith(".yaml"))
        .map((name) => join(examples, name)),
    ];
    for (const file of files) walk(parse(readFileSync(file, "utf8")), schema, "");
    expect(untyped).toEqual([]);
  });

  it("scopes the operator's RBAC to a namespace on request", async () => {
    const cluster = await template();
    expect(cluster.manifests.map((m) => m.kind)).toContain("ClusterRole");
    const namespaced = await template("operator.scope=namespace", "operator.watchNamespace=team-a");
    expect(namespaced.manifests.map((m) => m.kind)).not.toContain("ClusterRole");
    expect(find(namespaced.manifests, "Role", "svc-gateway-operator")).toMatchObject({
      metadata: { namespace: "team-a" },
    });
    expect(
      find(namespaced.manifests, "Deployment", "svc-gateway-operator").spec.template.spec.containers[0].args,
    ).toContain("--namespace=team-a");
  });
});
