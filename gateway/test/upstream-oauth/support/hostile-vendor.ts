// A vendor whose metadata aims the gateway at the inside of its cluster, over HTTPS (a self-signed certificate the
// spawned gateway trusts through NODE_EXTRA_CA_CERTS, as a real vendor's is trusted), plus the internal service it
// aims at: a plain TCP listener that answers anything with a banner, as Redis and sidecar admin ports do, and counts
// every connection it gets. Each scenario lives under its own path, so one vendor serves them all and the gateway's
// discovery cache keeps them apart:
//   POST /{scenario}/mcp                                        401, challenge naming the metadata below
//   GET  /.well-known/oauth-protected-resource/{scenario}/mcp   authorization_servers: [the scenario's choice]
//   GET  /.well-known/oauth-authorization-server/{scenario}     issuer https://…/{scenario}, and the scenario's
//                                                               registration and authorization endpoints
import { once } from "node:events";
import { writeFile } from "node:fs/promises";
import { createServer as createHttpsServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { createServer as createTcpServer, type Server as TcpServer } from "node:net";
import selfsigned from "selfsigned";

export const INTERNAL_BANNER = "-ERR unknown command 'POST', SECRET-INTERNAL-BANNER";

export interface Scenario {
  /** The issuer the resource metadata names (default: the vendor itself, at /{scenario}). */
  authorizationServer?: (vendor: string, internalPort: number) => string;
  registrationEndpoint?: (vendor: string, internalPort: number) => string;
  authorizationEndpoint?: (vendor: string, internalPort: number) => string;
}

export interface HostileVendor {
  /** https://127.0.0.1:<port> */
  origin: string;
  internalPort: number;
  /** Connections the internal service has had. */
  internalConnections(): number;
  /** The PEM of the vendor's certificate, written for NODE_EXTRA_CA_CERTS. */
  caFile: string;
  close(): Promise<void>;
}

export async function startHostileVendor(
  scenarios: Record<string, Scenario>,
  caFile: string,
): Promise<HostileVendor> {
  let connections = 0;
  const internal: TcpServer = createTcpServer((socket) => {
    connections++;
    socket.on("data", () => socket.end(`${INTERNAL_BANNER}\r\n`));
    socket.on("error", () => {});
  });
  internal.listen(0, "127.0.0.1");
  await once(internal, "listening");
  const internalPort = (internal.address() as AddressInfo).port;

  const pems = await selfsigned.generate([{ name: "commonName", value: "127.0.0.1" }], {
    keyType: "ec",
    curve: "P-256",
    extensions: [
      { name: "basicConstraints", cA: true },
      { name: "subjectAltName", altNames: [{ type: 7, ip: "127.0.0.1" }] },
    ],
  });
  await writeFile(caFile, pems.cert);
  let origin = "";
  const server: Server = createHttpsServer({ key: pems.private, cert: pems.cert }, (request, response) => {
    const url = new URL(request.url ?? "/", origin);
    const json = (body: unknown) =>
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
    const mcp = /^\/([a-z0-9-]+)\/mcp$/.exec(url.pathname);
    if (mcp !== null && request.method === "POST") {
      response
        .writeHead(401, {
          "www-authenticate": `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource/${mcp[1]}/mcp"`,
        })
        .end();
      return;
    }
    const resource = /^\/\.well-known\/oauth-protected-resource\/([a-z0-9-]+)\/mcp$/.exec(url.pathname);
    const scenarioOf = (name: string | undefined) => scenarios[name ?? ""];
    if (resource !== null && scenarioOf(resource[1]) !== undefined) {
      const scenario = scenarioOf(resource[1]) as Scenario;
      json({
        resource: `${origin}/${resource[1]}/mcp`,
        authorization_servers: [
          scenario.authorizationServer?.(origin, internalPort) ?? `${origin}/${resource[1]}`,
        ],
      });
      return;
    }
    const metadata = /^\/\.well-known\/oauth-authorization-server\/([a-z0-9-]+)$/.exec(url.pathname);
    if (metadata !== null && scenarioOf(metadata[1]) !== undefined) {
      const scenario = scenarioOf(metadata[1]) as Scenario;
      const issuer = `${origin}/${metadata[1]}`;
      json({
        issuer,
        authorization_endpoint:
          scenario.authorizationEndpoint?.(origin, internalPort) ?? `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        registration_endpoint: scenario.registrationEndpoint?.(origin, internalPort) ?? `${issuer}/register`,
        response_types_supported: ["code"],
        code_challenge_methods_supported: ["S256"],
      });
      return;
    }
    response.writeHead(404).end();
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    internalPort,
    internalConnections: () => connections,
    caFile,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await new Promise<void>((resolve) => internal.close(() => resolve()));
    },
  };
}
