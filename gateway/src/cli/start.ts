// `svc-gateway start [--config FILE] [--port N] [--host H]`: runs the gateway until SIGTERM/SIGINT (drain,
// exit 0); SIGHUP reloads the config.
import { parseArgs } from "node:util";
import { ConfigError } from "../config/index.ts";
import { startGateway } from "../server/start-gateway.ts";

export const summary = "Run the gateway: proxy /{server}/mcp to the configured upstreams";

const USAGE = `Usage: svc-gateway start [--config FILE] [--port N] [--host H]

Options:
  -c, --config FILE  gateway YAML (default: $SVC_CONFIG_FILE, /etc/svc-gateway/config.yaml, ./svc-gateway.yaml, ...)
  -p, --port N       listen port (default: $PORT or 8080; 0 = any free port)
      --host H       listen address (default: 127.0.0.1; the container image and the Helm chart pass 0.0.0.0)
  -h, --help         show this help

Signals: SIGTERM/SIGINT drain and exit 0, SIGHUP reloads the config. See gateway/docs/operations.md.
`;

function fail(message: string): number {
  process.stderr.write(`svc-gateway start: ${message}\n\n${USAGE}`);
  return 2;
}

export async function run(argv: string[]): Promise<number> {
  let values: { config?: string; port?: string; host?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        config: { type: "string", short: "c" },
        port: { type: "string", short: "p" },
        host: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    return fail((error as Error).message);
  }
  if (values.help === true) {
    process.stdout.write(USAGE);
    return 0;
  }
  let port: number | undefined;
  if (values.port !== undefined) {
    port = Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535)
      return fail(`--port must be 0-65535, got '${values.port}'`);
  }

  let gateway: Awaited<ReturnType<typeof startGateway>>;
  try {
    gateway = await startGateway({ configPath: values.config, port, host: values.host });
  } catch (error) {
    const message =
      error instanceof ConfigError ? error.message : `cannot start: ${(error as Error).message}`;
    process.stderr.write(`svc-gateway start: ${message}\n`);
    return 1;
  }

  return new Promise<number>((resolve) => {
    let signalled = 0;
    const stop = (signal: NodeJS.Signals): void => {
      signalled++;
      if (signalled > 1) {
        // A second signal means "now": skip the rest of the drain.
        void gateway.close().then(() => resolve(0));
        return;
      }
      process.stdout.write(
        `${JSON.stringify({ time: new Date().toISOString(), level: "info", msg: "signal", signal })}\n`,
      );
      void gateway.drain().then(() => resolve(0));
    };
    process.on("SIGTERM", stop);
    process.on("SIGINT", stop);
    process.on("SIGHUP", () => void gateway.reload());
  }).then((code) => {
    // Exit even if a library left a handle open; unref'd, so a clean event loop exits first.
    setTimeout(() => process.exit(code), 2000).unref();
    return code;
  });
}
