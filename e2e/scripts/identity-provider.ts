// The end-to-end identity provider as a process (e2e/src/identity-provider.ts): `npm run e2e` spawns it on
// loopback; the kind e2e runs it as a Pod. Logs one JSON line {"msg":"listening","url":…,"issuer":…} when it
// serves, and stops on SIGTERM/SIGINT.
//   node e2e/scripts/identity-provider.ts --port 8080 --host 0.0.0.0 \
//     --issuer http://svc-e2e-idp.svc-gateway.svc:8080 --client engineer:secret:engineering
import { parseArgs } from "node:util";
import { parseClient, startIdentityProvider } from "../src/identity-provider.ts";

const usage = `usage: identity-provider [--host H] [--port P] [--issuer URL] [--token-ttl SECONDS] --client id:secret:groups ...

A real OpenID provider (oidc-provider) for end-to-end tests. Each --client may use the client_credentials grant
(client_secret_basic) at POST /token with a resource=<audience> parameter; its JWT access token carries the
client's groups in the \`groups\` claim. Keys: /jwks. Discovery: /.well-known/openid-configuration.
  --host       address to listen on (default 127.0.0.1)
  --port       port (default 0: any free port)
  --issuer     the tokens' iss (default http://HOST:PORT)
  --token-ttl  access token lifetime in seconds (default 600)
  --client     id:secret:group1,group2 (repeatable; groups may be empty)
Environment: IDP_CLIENTS, more clients in the same form separated by whitespace (keeps the secrets out of the
Pod spec: the kind e2e sets it from a Secret).
`;

function fail(message: string): never {
  process.stderr.write(`identity-provider: ${message}\n\n${usage}`);
  process.exit(2);
}

function parse() {
  try {
    return parseArgs({
      options: {
        host: { type: "string", default: "127.0.0.1" },
        port: { type: "string", default: "0" },
        issuer: { type: "string" },
        "token-ttl": { type: "string", default: "600" },
        client: { type: "string", multiple: true, default: [] },
        help: { type: "boolean", short: "h" },
      },
    }).values;
  } catch (error) {
    return fail((error as Error).message);
  }
}
const values = parse();
if (values.help) {
  process.stdout.write(usage);
  process.exit(0);
}
const port = Number(values.port);
const tokenTtl = Number(values["token-ttl"]);
if (!Number.isInteger(port) || port < 0 || port > 65535) fail(`--port must be 0-65535, got '${values.port}'`);
if (!Number.isInteger(tokenTtl) || tokenTtl < 1)
  fail(`--token-ttl must be a positive integer, got '${values["token-ttl"]}'`);
let clients: ReturnType<typeof parseClient>[] = [];
try {
  const fromEnvironment = (process.env.IDP_CLIENTS ?? "").split(/\s+/).filter((text) => text !== "");
  clients = [...values.client, ...fromEnvironment].map(parseClient);
} catch (error) {
  fail((error as Error).message);
}
if (clients.length === 0) fail("at least one client is needed (--client or IDP_CLIENTS)");

const provider = await startIdentityProvider({
  host: values.host,
  port,
  issuer: values.issuer,
  clients,
  tokenTtl,
});
const log = (msg: string, fields: Record<string, unknown> = {}) =>
  process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), msg, ...fields })}\n`);
log("listening", { url: provider.url, issuer: provider.issuer, clients: clients.map((client) => client.id) });
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.once(signal, () => {
    log("stopping", { signal });
    void provider.close().then(() => process.exit(0));
  });
}
