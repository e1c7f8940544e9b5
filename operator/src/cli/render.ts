import { parseArgs } from "node:util";
import { stringify } from "yaml";
import { formatResourceProblem } from "../render/problems.ts";
import { renderAll } from "../render/render-all.ts";
import { readResources } from "./read-resources.ts";
import { describeArgsError } from "./usage-error.ts";

export const summary = "render -f DIR: print what would be applied (no cluster needed)";

const usage = `Usage: svc-operator render -f FILE_OR_DIR [--gateway-config] [--gateway NAME]

Renders McpServer, IdentityProvider and McpGateway resources from YAML files into the objects the operator
would apply (multi-document YAML), or with --gateway-config only the gateway YAML of one McpGateway
(--gateway NAME picks it when there are several). Exit code 1 lists every problem, per resource.

Options:
  -f, --file FILE_OR_DIR  a YAML file, or a directory of .yaml/.yml files (repeatable)
      --gateway-config    print only the gateway YAML of one McpGateway
      --gateway NAME      the McpGateway to print with --gateway-config
  -h, --help              show this help
`;

const RENDER_OPTIONS = {
  file: { type: "string", short: "f", multiple: true },
  "gateway-config": { type: "boolean" },
  gateway: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

export async function run(argv: string[]): Promise<number> {
  let values: { file?: string[]; "gateway-config"?: boolean; gateway?: string; help?: boolean };
  try {
    ({ values } = parseArgs({ args: argv, options: RENDER_OPTIONS }));
  } catch (error) {
    const message = describeArgsError(error as Error, Object.keys(RENDER_OPTIONS));
    process.stderr.write(`svc-operator render: ${message}\n\n${usage}`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(usage);
    return 0;
  }
  if (!values.file?.length) {
    process.stderr.write(`svc-operator render: -f FILE_OR_DIR is required\n\n${usage}`);
    return 2;
  }
  let resources: ReturnType<typeof readResources>;
  try {
    resources = values.file.flatMap((path) => readResources(path));
  } catch (error) {
    process.stderr.write(`svc-operator render: ${(error as Error).message}\n`);
    return 1;
  }
  const result = renderAll(resources);
  if (result.problems.length > 0) {
    process.stderr.write(`svc-operator render: ${result.problems.length} problem(s):\n`);
    for (const problem of result.problems) process.stderr.write(`  ${formatResourceProblem(problem)}\n`);
    return 1;
  }
  if (values["gateway-config"]) {
    const candidates = result.gateways.filter(
      (render) => values.gateway === undefined || render.gateway.name === values.gateway,
    );
    if (candidates.length !== 1) {
      const names = result.gateways.map((render) => render.gateway.name).join(", ") || "none";
      process.stderr.write(
        `svc-operator render: --gateway-config needs exactly one McpGateway (found: ${names}); pick one with --gateway NAME\n`,
      );
      return 1;
    }
    process.stdout.write((candidates[0] as (typeof candidates)[number]).yaml);
    return 0;
  }
  process.stdout.write(result.objects.map((object) => stringify(object, { lineWidth: 0 })).join("---\n"));
  return 0;
}
