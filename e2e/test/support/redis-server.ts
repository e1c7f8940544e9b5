import { spawn } from "node:child_process";
import { createServer } from "node:net";

// A real redis-server on a free loopback port, no persistence: the gateway's shared state in the e2e stack.

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

export async function startRedis(): Promise<{ url: string; stop(): Promise<void> }> {
  const port = await freePort();
  const child = spawn(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
    {
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const exit = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on("data", (chunk: Buffer) => {
      if (chunk.toString().includes("Ready to accept connections")) resolve();
    });
    void exit.then(() => reject(new Error("redis-server exited before it was ready")));
  });
  return {
    url: `redis://127.0.0.1:${port}`,
    async stop() {
      child.kill("SIGTERM");
      await exit;
    },
  };
}
