// Pipeline step 1: `/{server}/mcp` → the configured upstream. Unknown and disabled servers get the same
// 404 status (with different messages) before any other work, so probing paths costs the gateway nothing.
import { GatewayError } from "../errors/gateway-error.ts";
import type { ConfigSnapshot, UpstreamRoute } from "../runtime/config-snapshot.ts";

export function resolveRoute(snapshot: ConfigSnapshot, name: string): UpstreamRoute {
  const route = snapshot.routes.get(name);
  if (route === undefined) {
    throw new GatewayError("server_not_found", `No upstream server named '${name}' is configured`);
  }
  if (!route.enabled) {
    throw new GatewayError("server_disabled", `Upstream server '${name}' is disabled`, { server: name });
  }
  return route;
}
