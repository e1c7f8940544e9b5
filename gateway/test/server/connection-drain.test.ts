import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Agent, request } from "undici";
import { afterEach, expect, test } from "vitest";
import { ConnectionDrain } from "../../src/server/connection-drain.ts";

// The drain's two-step stop: the listener closes, idle keep-alive connections stay usable until their clients
// close them (so a request sent on one as the server stops is served, not cut), and the waits report the truth.

let server: Server;
let agent: Agent;

afterEach(async () => {
  if (agent && !agent.closed) await agent.close();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
});

async function start(): Promise<{ url: string; drain: ConnectionDrain }> {
  server = createServer((req, res) => {
    drain.track(req, res);
    res.end("ok");
  });
  const drain = new ConnectionDrain(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, drain };
}

test("after stopAccepting an idle keep-alive connection still serves, new connections are refused", async () => {
  const { url, drain } = await start();
  agent = new Agent({ connections: 1, keepAliveTimeout: 60_000 });
  expect(await (await request(url, { dispatcher: agent })).body.text()).toBe("ok");
  expect(drain.openConnections).toBe(1);

  drain.stopAccepting();
  // The same (idle) connection carries the next request.
  expect(await (await request(url, { dispatcher: agent })).body.text()).toBe("ok");
  // A new client cannot connect any more.
  const other = new Agent();
  await expect(request(url, { dispatcher: other })).rejects.toThrow();
  await other.close();
  expect(await drain.requestsDone(1000)).toBe(true);
});

test("connectionsClosed resolves when the clients close their idle connections, false at the timeout", async () => {
  const { url, drain } = await start();
  agent = new Agent({ connections: 1, keepAliveTimeout: 60_000 });
  await (await request(url, { dispatcher: agent })).body.text();
  drain.stopAccepting();
  expect(await drain.connectionsClosed(50)).toBe(false);
  const closed = drain.connectionsClosed(10_000);
  await agent.close();
  expect(await closed).toBe(true);
  expect(drain.openConnections).toBe(0);
});

test("requestsDone waits for a request in flight", async () => {
  let release: () => void = () => {};
  server = createServer((req, res) => {
    drain.track(req, res);
    release = () => res.end("late");
  });
  const drain = new ConnectionDrain(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  agent = new Agent();
  const pending = request(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, {
    dispatcher: agent,
  });
  await expect.poll(() => drain.inFlight).toBe(1);
  expect(await drain.requestsDone(50)).toBe(false);
  const done = drain.requestsDone(10_000);
  release();
  expect(await (await pending).body.text()).toBe("late");
  expect(await done).toBe(true);
});
