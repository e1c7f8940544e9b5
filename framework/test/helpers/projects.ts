import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type Spawned, spawnWithOutput, waitForListening } from "./processes.ts";

/** A temporary directory outside the repository, removed by the returned cleanup. */
export async function tempDir(prefix: string): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), `svc-${prefix}-`));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** Writes a project from a map of relative path → content (objects are written as JSON). */
export async function writeProject(dir: string, files: Record<string, string | object>): Promise<void> {
  for (const [path, content] of Object.entries(files)) {
    const file = join(dir, path);
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, typeof content === "string" ? content : JSON.stringify(content, null, 2));
  }
}

/** Serves a built project's dist/server.mjs on a free port with the workspace's Node. */
export async function serveBuilt(
  projectDir: string,
  env: NodeJS.ProcessEnv = {},
): Promise<{ server: Spawned; url: string }> {
  const server = spawnWithOutput(process.execPath, [join(projectDir, "dist", "server.mjs")], {
    cwd: projectDir,
    env: { PORT: "0", HOST: "127.0.0.1", ...env },
  });
  try {
    const { url } = await waitForListening(server);
    return { server, url };
  } catch (error) {
    await server.stop();
    throw error;
  }
}

export async function connectClient(url: string, capabilities: Record<string, object> = {}): Promise<Client> {
  const client = new Client({ name: "svc-test", version: "1.0.0" }, { capabilities });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
  return client;
}
