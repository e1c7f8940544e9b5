import { connect, createServer, type Server, type Socket } from "node:net";

// What a Kubernetes Service does for the pods behind it (kube-proxy): each new TCP connection goes to one of
// the current endpoints, round robin; a connection already established stays with its endpoint until either
// side closes it, whatever happens to the endpoint list. Removing an endpoint is what the endpoints controller
// does when a pod starts terminating (before its preStop hook runs).

export interface ServiceProxy {
  url: string;
  setEndpoints(urls: string[]): void;
  close(): Promise<void>;
}

export async function startServiceProxy(endpoints: string[]): Promise<ServiceProxy> {
  let current = endpoints.map((url) => new URL(url));
  let next = 0;
  const open = new Set<Socket>();
  const server: Server = createServer((client) => {
    open.add(client);
    client.once("close", () => open.delete(client));
    const target = current[next++ % Math.max(1, current.length)];
    if (target === undefined) {
      client.destroy(); // no endpoint: the connection is refused, as by a Service with no ready pod
      return;
    }
    const backend = connect(Number(target.port), target.hostname);
    open.add(backend);
    backend.once("close", () => open.delete(backend));
    client.pipe(backend).pipe(client);
    // Either side going away ends the pair, as the kernel would for a NAT'd connection.
    client.once("error", () => backend.destroy());
    backend.once("error", () => client.destroy());
    client.once("close", () => backend.destroy());
    backend.once("close", () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    setEndpoints(urls) {
      current = urls.map((url) => new URL(url));
    },
    async close() {
      for (const socket of open) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
