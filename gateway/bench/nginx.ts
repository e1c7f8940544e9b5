// nginx (1 worker) as the reverse-proxy baseline, when it is installed. Configured like the gateway is used:
// keep-alive to the upstream, HTTP/1.1, no response buffering (so SSE streams through),
// and an access log line per request (buffered), as the gateway logs one per request.
import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { freePort } from "./free-port.ts";

export interface RunningNginx {
  url: string;
  /** The master's pid; the worker is its child. */
  pid: number | undefined;
  version: string;
  stop(): Promise<void>;
}

function nginxBinary(): string | undefined {
  for (const candidate of ["nginx", "/usr/sbin/nginx"]) {
    try {
      execFileSync(candidate, ["-v"], { stdio: "ignore" });
      return candidate;
    } catch {
      // not this one
    }
  }
  return undefined;
}

/** Starts nginx proxying `/<name>/mcp` to `<upstream>/<name>/mcp`; undefined when nginx is not installed. */
export async function startNginx(dir: string, upstreamOrigin: string): Promise<RunningNginx | undefined> {
  const binary = nginxBinary();
  if (!binary) return undefined;
  // nginx -v prints to stderr.
  const version = spawnSync(binary, ["-v"], { encoding: "utf8" }).stderr.trim();
  const port = await freePort();
  const upstream = new URL(upstreamOrigin).host;
  await mkdir(join(dir, "logs"), { recursive: true });
  const conf = join(dir, "nginx.conf");
  await writeFile(
    conf,
    `worker_processes 1;
daemon off;
pid ${join(dir, "nginx.pid")};
error_log ${join(dir, "logs/error.log")} warn;
events { worker_connections 1024; }
http {
  access_log ${join(dir, "logs/access.log")} combined buffer=64k flush=1s;
  client_body_temp_path ${join(dir, "body")};
  proxy_temp_path ${join(dir, "proxy")};
  fastcgi_temp_path ${join(dir, "fastcgi")};
  uwsgi_temp_path ${join(dir, "uwsgi")};
  scgi_temp_path ${join(dir, "scgi")};
  upstream bench_upstream { server ${upstream}; keepalive 64; }
  server {
    listen 127.0.0.1:${port};
    location ~ ^/bench-(json|sse)/mcp$ {
      proxy_pass http://bench_upstream/$1/mcp;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
    }
  }
}
`,
  );
  const child: ChildProcess = spawn(binary, ["-p", dir, "-c", conf], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  await waitForPort(port, child, () => stderr);
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid,
    version,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, "exit");
      child.kill("SIGQUIT");
      await exited;
    },
  };
}

async function waitForPort(port: number, child: ChildProcess, stderr: () => string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`nginx exited: ${stderr()}`);
    try {
      const response = await fetch(`http://127.0.0.1:${port}/`);
      await response.arrayBuffer();
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  throw new Error(`nginx did not listen on ${port}: ${stderr()}`);
}
