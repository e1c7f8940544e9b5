import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { serve } from "@hono/node-server";
import { type AuthLayer, createAuthLayer, NO_AUTH_WARNING } from "../auth/runtime.ts";
import { deprecationWarning, parseSettings } from "../project/settings.ts";
import { createApp } from "./app.ts";
import { type CheckModule, checkModule } from "./health.ts";
import { isLoopback } from "./host-check.ts";
import { log } from "./log.ts";
import { buildCatalog } from "./mcp-server.ts";
import { type ComponentEntry, loadRegistry } from "./registry.ts";
import { createMcpEndpoint } from "./sessions.ts";
import { startTelemetry } from "./telemetry.ts";

type Loader = () => Promise<Record<string, unknown>>;

/** What the generated entry of dist/server.mjs hands to the runtime. */
export interface BuiltProject {
  settings: unknown;
  legacyHealthFields: string[];
  components: ComponentEntry[];
  auth?: Loader;
  health?: Loader;
  readiness?: Loader;
}

class StartupError extends Error {}

/** `node dist/server.mjs --describe`: the build's check of the components, as JSON on stdout. */
async function describe(project: BuiltProject): Promise<void> {
  const { registry, problems } = await loadRegistry(project.components);
  for (const [file, load] of [
    ["health", project.health],
    ["readiness", project.readiness],
  ] as const) {
    if (!load) continue;
    try {
      checkModule(`${file}.ts`, await load());
    } catch (error) {
      problems.push((error as Error).message);
    }
  }
  const summary = (list: { name: string; file: string; component: { definition: object } }[]) =>
    list.map((c) => ({
      name: c.name,
      file: c.file,
      description: (c.component.definition as { description: string }).description,
    }));
  const resources = registry.resources.map((r) => ({ ...summary([r])[0], uri: r.component.definition.uri }));
  const out = { tools: summary(registry.tools), resources, prompts: summary(registry.prompts), problems };
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

async function loadCheck(name: string, load: Loader | undefined): Promise<CheckModule | undefined> {
  if (!load) return undefined;
  try {
    return checkModule(`${name}.ts`, await load());
  } catch (error) {
    throw new StartupError(`${name}.ts: ${(error as Error).message.replace(`${name}.ts: `, "")}`);
  }
}

async function loadAuth(
  project: BuiltProject,
  publicUrl: string,
  dataDir: string,
): Promise<AuthLayer | undefined> {
  if (!project.auth) {
    log(NO_AUTH_WARNING, {}, "warn");
    return undefined;
  }
  try {
    await project.auth(); // auth.ts calls configureAuth()/configureApiKey() when imported
    const layer = await createAuthLayer({ publicUrl, env: process.env, dataDir });
    for (const warning of layer.warnings) log(warning, {}, "warn");
    return layer;
  } catch (error) {
    // Never serve unauthenticated because auth.ts is broken: stop here.
    throw new StartupError(`auth.ts: ${(error as Error).message}`);
  }
}

async function start(project: BuiltProject): Promise<void> {
  const settings = parseSettings(project.settings, "svc.json (embedded in dist/)");
  for (const field of project.legacyHealthFields) log(deprecationWarning(field), {}, "warn");
  const host = process.env.HOST || "127.0.0.1";
  const port = Number(process.env.PORT || 3000);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new StartupError(`PORT: invalid port '${process.env.PORT}'`);
  const distDir = fileURLToPath(new URL(".", import.meta.url));
  const dataDir = process.env.SVC_DATA_DIR || join(distDir, "..", ".svc");

  // Listen first (port 0 gives a free port); answer 503 until everything below is ready.
  let handler: (request: Request, env: unknown) => Response | Promise<Response> = () =>
    new Response("starting", { status: 503, headers: { "retry-after": "1" } });
  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const s = serve({ fetch: (request, env) => handler(request, env), port, hostname: host }, () =>
      resolve(s),
    );
    s.once("error", (error: Error) =>
      reject(new StartupError(`cannot listen on ${host}:${port}: ${error.message}`)),
    );
  });
  const address = server.address();
  const boundPort = typeof address === "object" && address ? address.port : port;
  const urlHost = host === "0.0.0.0" || host === "::" ? "localhost" : host.includes(":") ? `[${host}]` : host;
  const url = `http://${urlHost}:${boundPort}`;
  const publicUrl = (process.env.SVC_PUBLIC_URL || url).replace(/\/+$/, "");

  const telemetry = await startTelemetry(settings, process.env, log);
  const auth = await loadAuth(project, publicUrl, dataDir);
  const { registry, problems } = await loadRegistry(project.components);
  if (problems.length > 0) throw new StartupError(problems.join("\n"));
  const health = await loadCheck("health", project.health);
  const readiness = await loadCheck("readiness", project.readiness);
  const catalog = buildCatalog(settings, registry, telemetry);
  const endpoint = createMcpEndpoint(catalog);
  const app = createApp({
    catalog,
    endpoint,
    auth,
    loopback: isLoopback(host),
    readySince: new Date(),
    ...(health ? { health } : {}),
    ...(readiness ? { readiness } : {}),
  });
  // env carries Node's IncomingMessage, which the /mcp route reads the body from directly.
  handler = (request, env) => app.fetch(request, env as never);
  log("listening", {
    url,
    mcp: `${url}/mcp`,
    name: settings.name,
    tools: registry.tools.length,
    resources: registry.resources.length,
    prompts: registry.prompts.length,
    stateless: settings.stateless_http,
  });

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log("stopping", { signal });
    server.close();
    await endpoint.close();
    await telemetry.shutdown().catch(() => {});
    process.exit(0);
  };
  process.once("SIGTERM", () => void stop("SIGTERM"));
  process.once("SIGINT", () => void stop("SIGINT"));
}

/** Entry of every built server. Any startup problem is one clear line and exit code 1, never a half-open server. */
export async function main(project: BuiltProject): Promise<void> {
  try {
    if (process.argv.includes("--describe")) await describe(project);
    else await start(project);
  } catch (error) {
    const message = error instanceof StartupError ? error.message : ((error as Error).stack ?? String(error));
    log("failed to start", { error: message }, "error");
    process.exit(1);
  }
}
