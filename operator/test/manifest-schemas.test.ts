import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { readResources } from "../src/cli/read-resources.ts";
import { renderAll } from "../src/render/render-all.ts";
import { examplesDir, repoRoot } from "./paths.ts";
import { chart, helmTemplate } from "./support/helm-template.ts";
import { validateKubernetesObject } from "./support/kubernetes-schemas.ts";

// Every manifest we hand to a cluster, checked offline against Kubernetes' OpenAPI schemas and our CRDs: what
// `helm template` renders for the default values and for each values example in helm/examples/, and what the
// operator renders for the repository's resources (operator examples and the kind e2e's).

const valuesExamplesDir = join(repoRoot, "helm", "examples");
const kindDir = join(repoRoot, "e2e", "kind");

// The chart's minimum (Chart.yaml's kubeVersion) and the newest version the schemas of kubernetes-models
// describe (it serves resource.k8s.io/v1, new in 1.34). The templates branch on nothing version-specific, so
// these two bound what a supported cluster gets.
const chartMinimum = /^>=\s*(\d+\.\d+\.\d+)/.exec(
  String((parse(readFileSync(join(chart, "Chart.yaml"), "utf8")) as { kubeVersion: string }).kubeVersion),
)?.[1];
const KUBE_VERSIONS = [chartMinimum ?? "(no minimum in Chart.yaml)", "1.34.0"];

type Manifest = { apiVersion?: string; kind?: string; metadata?: { name?: string } };

const scratch = mkdtempSync(join(tmpdir(), "svc-manifest-schemas-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

async function renderChart(kubeVersion: string, valuesFile?: string): Promise<Manifest[]> {
  return (await helmTemplate<Manifest>({ kubeVersion, valuesFile })).manifests;
}

/** `Kind/name: field: message` for every problem of every manifest. */
async function problemsOf(manifests: Manifest[], options: { applyConfiguration?: boolean } = {}) {
  const problems: string[] = [];
  for (const manifest of manifests) {
    for (const problem of await validateKubernetesObject(manifest, options)) {
      problems.push(`${manifest.kind}/${manifest.metadata?.name}: ${problem}`);
    }
  }
  return problems;
}

const valuesExamples = readdirSync(valuesExamplesDir)
  .filter((name) => name.endsWith(".yaml"))
  .sort();

describe("helm template output against the Kubernetes schemas", () => {
  it("has values examples, each documented in the chart's README", () => {
    expect(valuesExamples.length).toBeGreaterThan(0);
    const readme = readFileSync(join(chart, "README.md"), "utf8");
    for (const name of valuesExamples) expect(readme, name).toContain(`helm/examples/${name}`);
  });

  const cases = [
    { name: "default values", file: undefined },
    ...valuesExamples.map((name) => ({ name, file: join(valuesExamplesDir, name) })),
  ];
  it.each(cases.flatMap((values) => KUBE_VERSIONS.map((kubeVersion) => ({ ...values, kubeVersion }))))(
    "$name renders valid manifests for Kubernetes $kubeVersion",
    async ({ file, kubeVersion }) => {
      const manifests = await renderChart(kubeVersion, file);
      expect(manifests.length).toBeGreaterThan(3);
      expect(await problemsOf(manifests)).toEqual([]);
    },
  );

  it("fails on a wrong field that helm passes through from the values", async () => {
    // values.schema.json cannot know every Kubernetes field of an env entry or a toleration: the OpenAPI
    // check is what catches these.
    const wrong = join(scratch, "wrong.yaml");
    writeFileSync(
      wrong,
      [
        "gateway:",
        "  env:",
        "    - name: SVC_UPSTREAM_API_KEY_TICKETS",
        "      valueFrm: { secretKeyRef: { name: tickets, key: api-key } }",
        "  tolerations:",
        "    - key: dedicated",
        "      tolerationSeconds: soon",
      ].join("\n"),
    );
    const problems = await problemsOf(await renderChart(KUBE_VERSIONS[0] ?? "", wrong));
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /^Deployment\/svc-gateway: spec\.template\.spec\.containers\[0\]\.env\[\d+\]\.valueFrm: unknown field "valueFrm" \(did you mean "valueFrom"\?\)$/,
        ),
        "Deployment/svc-gateway: spec.template.spec.tolerations[0].tolerationSeconds: must be integer",
      ]),
    );
  });
});

describe("the operator's output against the Kubernetes schemas", () => {
  const resourceSets = {
    "operator/examples": [examplesDir],
    "operator/examples/with-secrets": [join(examplesDir, "with-secrets")],
    "the kind e2e's resources (operator/examples + e2e/kind)": [
      examplesDir,
      join(kindDir, "identity-provider.yaml"),
      join(kindDir, "resources.yaml"),
    ],
  };

  it.each(Object.entries(resourceSets))("%s: inputs and rendered objects are valid", async (_name, paths) => {
    const inputs = paths.flatMap((path) => readResources(path));
    // Custom resources against our CRDs, the rest (Secrets, the identity provider's Deployment) against
    // Kubernetes'.
    expect(await problemsOf(inputs)).toEqual([]);
    const result = renderAll(inputs);
    expect(result.problems).toEqual([]);
    const kinds = new Set(result.objects.map((object) => object.kind));
    expect(kinds).toContain("ConfigMap");
    const full = result.gateways.map((gateway) => gateway.configMap);
    const applyConfigurations = result.gateways.map((gateway) => gateway.gatewayEnvPatch);
    const workloads = result.objects.filter(
      (object) => !full.includes(object) && !applyConfigurations.includes(object),
    );
    expect(await problemsOf([...full, ...workloads])).toEqual([]);
    // The env patch is a server-side apply configuration: only the fields the operator owns, all optional.
    expect(await problemsOf(applyConfigurations, { applyConfiguration: true })).toEqual([]);
  });

  it("renders a Deployment and a Service for a server with a deployment block", () => {
    const kinds = renderAll(readResources(examplesDir)).objects.map((object) => object.kind);
    expect(kinds).toEqual(expect.arrayContaining(["ConfigMap", "Deployment", "Service"]));
  });

  it("fails on a wrong field in a rendered object, naming it", async () => {
    const [deployment] = renderAll(readResources(examplesDir)).objects.filter(
      (object) => object.kind === "Deployment",
    );
    const broken = structuredClone(deployment) as unknown as {
      spec: { replicas: unknown; template: { spec: { containers: Record<string, unknown>[] } } };
    };
    broken.spec.replicas = "two";
    (broken.spec.template.spec.containers[0] as Record<string, unknown>).imagePullPolicyy = "Never";
    const problems = await validateKubernetesObject(broken as unknown as Manifest);
    expect(problems).toEqual(
      expect.arrayContaining([
        "spec.replicas: must be integer",
        'spec.template.spec.containers[0].imagePullPolicyy: unknown field "imagePullPolicyy" (did you mean "imagePullPolicy"?)',
      ]),
    );
  });

  it("refuses beta API versions and kinds Kubernetes does not have", async () => {
    expect(
      await validateKubernetesObject({ apiVersion: "policy/v1beta1", kind: "PodDisruptionBudget" }),
    ).toEqual(["apiVersion: policy/v1beta1 is not a stable API version"]);
    expect(await validateKubernetesObject({ apiVersion: "apps/v1", kind: "Deploymnt" })).toEqual([
      "(object): apps/v1 Deploymnt is not a Kubernetes kind",
    ]);
  });
});
