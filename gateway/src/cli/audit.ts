import { readFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import { verifyChain } from "../audit/verify-chain.ts";

const HELP = `Usage: svc-gateway audit verify FILE [--allow-partial] [--json]

Checks an audit log written by the gateway (JSON lines; "-" reads standard input): each event's
SHA-256 hash, and per gateway instance an unbroken sequence linked by prev_hash. An edited,
deleted, inserted or reordered event is reported with its line.

Options:
      --allow-partial  accept a file that starts mid-chain (after log rotation)
      --json           print the report as JSON
  -h, --help           show this help

Exit status: 0 intact, 1 tampering or damage found, 2 usage error or unreadable file.
`;

export async function run(argv: string[]): Promise<number> {
  let values: { "allow-partial"?: boolean; json?: boolean; help?: boolean };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: argv,
      options: {
        "allow-partial": { type: "boolean" },
        json: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
      allowPositionals: true,
    }));
  } catch (error) {
    process.stderr.write(`svc-gateway audit: ${(error as Error).message}\n\n${HELP}`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const [action, file, ...extra] = positionals;
  if (action !== "verify" || file === undefined || extra.length > 0) {
    process.stderr.write(`svc-gateway audit: expected "verify FILE"\n\n${HELP}`);
    return 2;
  }
  let text: string;
  try {
    text = file === "-" ? await readStdin() : await readFile(file, "utf8");
  } catch (error) {
    process.stderr.write(`svc-gateway audit: cannot read ${file}: ${(error as Error).message}\n`);
    return 2;
  }
  const report = verifyChain(text, { allowPartial: values["allow-partial"] ?? false });
  if (values.json) {
    process.stdout.write(`${JSON.stringify({ intact: report.problems.length === 0, ...report }, null, 2)}\n`);
  } else if (report.problems.length === 0) {
    process.stdout.write(`intact: ${report.events} events from ${report.instances} gateway instance(s)\n`);
  } else {
    process.stderr.write(`${file}: ${report.problems.length} problem(s) in ${report.events} events\n`);
    for (const problem of report.problems) process.stderr.write(`line ${problem.line}: ${problem.message}\n`);
  }
  return report.problems.length === 0 ? 0 : 1;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks).toString("utf8");
}
