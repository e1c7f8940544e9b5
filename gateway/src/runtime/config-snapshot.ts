// Everything the request path needs from a loaded configuration, computed once per load or reload so no
// request ever parses a URL or reads the environment. A request keeps the snapshot it started with, which
// is how in-flight requests finish on their own config while a reload swaps in the next one.

import { audienceProblems, gatewayOriginOf } from "../config/audience-rule.ts";
import { ConfigError, type ConfigProblem, type LoadedConfig, type ServerConfig } from "../config/index.ts";
import type { PolicyDocument } from "../config/organization-policy.ts";
import { formatPath } from "../config/problems.ts";
import { apiKeyHeaderVariable, apiKeyVariable, serverEnvSuffix } from "../config/server-env.ts";
import { mergeOrganizationPolicy } from "../control-plane/merge-policy.ts";
import { type AccessRule, accessRulesFor } from "../control-plane/organization-access.ts";
import { type CompiledFirewall, compileFirewall, DetectorSet } from "../firewall/detectors.ts";
import { mergeFirewallLayers } from "../firewall/policy.ts";
import { type AuthMode, authModeFor } from "../identity/authenticate.ts";
import type { OwnIssuerTrust } from "../identity/token-verifier.ts";
import type { RateLimitSettings } from "../limits/rate-limiter.ts";
import { type CompiledScrubbing, compileScrubbing, HASH_KEY_VARIABLE } from "../pii/index.ts";
import { instanceOriginsFrom } from "../proxy/upstream-instances.ts";

export type UpstreamAuthType = ServerConfig["upstream_auth_type"];

export interface UpstreamRoute {
  name: string;
  enabled: boolean;
  /** `scheme://host:port`: the key of the connection pool. */
  origin: string;
  /** SVC_UPSTREAM_INSTANCES_<SERVER>: the instances behind this server, when listed (proxy/upstream-instances.ts). */
  instanceOrigins?: readonly string[];
  /** Path and query of the upstream MCP endpoint. */
  path: string;
  authType: UpstreamAuthType;
  /** Headers that authenticate the gateway to the upstream (`api_key`); never logged. */
  authHeaders?: Readonly<Record<string, string>>;
  /** Set when `api_key` is configured but its environment variable is not: requests fail closed with this. */
  apiKeyProblem?: string;
  /** PII scrubbing for this server (the gateway's and the server's policies merged, compiled); unset when off. */
  scrubbing?: CompiledScrubbing;
  /** The prompt-injection firewall for this server (both layers merged, detectors built); unset when off. */
  firewall?: CompiledFirewall;
  /** Access rules checked before the server's RBAC (organization server_rbac, local servers policies); unset: none. */
  accessRules?: readonly AccessRule[];
  /** The organization's per-user rate limit of this server, on top of the global one; unset: none. */
  serverRateLimit?: RateLimitSettings;
  server: ServerConfig;
}

export interface ConfigSnapshot {
  loaded: LoadedConfig;
  routes: ReadonlyMap<string, UpstreamRoute>;
  /** Increments on every successful (re)load; shows up in logs so a request can be tied to a config. */
  generation: number;
  /** How step 2 authenticates under this config: a TokenVerifier for its providers, anonymous, or closed. */
  auth: AuthMode;
  /** security.rate_limiting when enabled; undefined = no per-user limit. */
  rateLimit: RateLimitSettings | undefined;
  /** security.replay_protection.enabled. */
  replayProtection: boolean;
  /** The firewall detectors this configuration built; closed when a reload replaces it. */
  detectors: DetectorSet;
  /** The organization policy merged in (distributed and centralized mode), once one has been received. */
  organization?: PolicyDocument;
}

function apiKeyAuth(
  name: string,
  env: Record<string, string | undefined>,
): Pick<UpstreamRoute, "authHeaders" | "apiKeyProblem"> {
  const variable = apiKeyVariable(name);
  const key = env[variable];
  if (key === undefined || key === "") {
    return {
      apiKeyProblem: `Upstream server '${name}' uses upstream_auth_type api_key but ${variable} is not set`,
    };
  }
  const header = env[apiKeyHeaderVariable(name)]?.trim().toLowerCase();
  if (header === undefined || header === "" || header === "authorization") {
    return { authHeaders: { authorization: `Bearer ${key}` } };
  }
  return { authHeaders: { [header]: key } };
}

/**
 * `allowAnonymous`: SVC_ALLOW_ANONYMOUS, read once at start (server/settings.ts). Throws ConfigError when a server's
 * scrubbing policy cannot be compiled (a pattern RE2 cannot run, a hash rule without its key): such a config is
 * refused like any invalid one, and on reload the last good one keeps serving.
 */
export function buildSnapshot(
  loaded: LoadedConfig,
  env: Record<string, string | undefined>,
  generation: number,
  allowAnonymous: boolean,
  /** The gateway's own authorization server, when oauth_server is on: its tokens are trusted like a provider's. */
  ownIssuer?: OwnIssuerTrust,
  /** The organization layer from the control plane (control-plane/merge-policy.ts says how it merges). */
  organization?: PolicyDocument,
): ConfigSnapshot {
  const routes = new Map<string, UpstreamRoute>();
  const problems: ConfigProblem[] = [];
  const orgPolicy = organization?.policy;
  if (orgPolicy !== undefined) {
    const merged = mergeOrganizationPolicy(loaded.config, orgPolicy);
    if ("problems" in merged) throw new ConfigError(merged.problems, loaded.source);
    loaded = { ...loaded, config: merged.config };
  }
  // Servers a control plane defines (centralized mode) are not local: the local servers policies skip them.
  const local = loaded.mode !== "centralized";
  const serverLimits = new Map((orgPolicy?.server_rate_limits ?? []).map((limit) => [limit.server, limit]));
  const gatewayScrubbing = loaded.config.gateway_policy.scrubbing;
  const detectors = new DetectorSet();
  for (const [index, server] of loaded.config.servers.entries()) {
    const url = new URL(server.url);
    const route: UpstreamRoute = {
      name: server.name,
      enabled: server.enabled,
      origin: url.origin,
      path: `${url.pathname}${url.search}`,
      authType: server.upstream_auth_type,
      server,
    };
    if (server.upstream_auth_type === "api_key") Object.assign(route, apiKeyAuth(server.name, env));
    const instancesVariable = `SVC_UPSTREAM_INSTANCES_${serverEnvSuffix(server.name)}`;
    const instances = instanceOriginsFrom(env[instancesVariable], instancesVariable);
    if (Array.isArray(instances)) route.instanceOrigins = instances;
    else if (instances !== undefined)
      problems.push({ path: `servers[${index}].url`, message: instances.problem });
    // Layers in order organization, gateway, server: a later layer's replacement text wins.
    const layers = [gatewayScrubbing, ...(server.security === undefined ? [] : [server.security])];
    const layerPaths = ["gateway_policy.scrubbing", `servers[${index}].security`];
    if (orgPolicy?.scrubbing !== undefined) {
      layers.unshift(orgPolicy.scrubbing);
      layerPaths.unshift("organization policy scrubbing");
    }
    const scrubbing = compileScrubbing(layers, { hashKey: env[HASH_KEY_VARIABLE], layerPaths });
    if ("problems" in scrubbing) problems.push(...scrubbing.problems);
    else if (scrubbing.enabled) route.scrubbing = scrubbing;
    const firewall = mergeFirewallLayers(loaded.config.gateway_policy.firewall, server.firewall, [
      "servers",
      index,
      "firewall",
    ]);
    // validate() refused a server layer that loosens the gateway's, so a loaded configuration has none.
    if ("problems" in firewall) {
      problems.push(...firewall.problems.map((p) => ({ path: formatPath(p.path), message: p.message })));
    } else if (firewall.settings !== undefined) {
      // A detector the gateway layer defines is named there in problems (a model that does not load), whichever
      // server first uses it: the set keeps the path of a detector's first use.
      loaded.config.gateway_policy.firewall.detectors.forEach((detector, at) => {
        detectors.get(detector, `gateway_policy.firewall.detectors[${at}]`);
      });
      server.firewall?.detectors?.forEach((detector, at) => {
        detectors.get(detector, `servers[${index}].firewall.detectors[${at}]`);
      });
      route.firewall = compileFirewall(firewall.settings, detectors, `servers[${index}].firewall`);
    }
    const accessRules = accessRulesFor(loaded.config, orgPolicy, local);
    if (accessRules !== undefined) route.accessRules = accessRules;
    const serverLimit = serverLimits.get(server.name);
    if (serverLimit !== undefined)
      route.serverRateLimit = {
        limit: serverLimit.requests_per_minute,
        windowSeconds: serverLimit.window_seconds,
        scope: `server/${server.name}`,
      };
    routes.set(server.name, route);
  }
  const gatewayOrigin = gatewayOriginOf(env.SVC_PUBLIC_URL, loaded.config.oauth_server?.issuer);
  for (const { path, message } of audienceProblems(loaded.config.identity_providers, gatewayOrigin)) {
    problems.push({ path: formatPath(path), message });
  }
  if (problems.length > 0) {
    void detectors.close();
    throw new ConfigError(uniqueProblems(problems), loaded.source);
  }
  const auth = authModeFor(loaded.config.identity_providers, allowAnonymous, ownIssuer, gatewayOrigin);
  const { rate_limiting, replay_protection } = loaded.config.security;
  const rateLimit = rate_limiting.enabled
    ? { limit: rate_limiting.requests_per_minute, windowSeconds: rate_limiting.window_seconds }
    : undefined;
  return {
    loaded,
    routes,
    generation,
    auth,
    rateLimit,
    replayProtection: replay_protection.enabled,
    detectors,
    ...(organization === undefined ? {} : { organization }),
  };
}

/** The gateway layer's problems show up once per server; report each once. */
function uniqueProblems(problems: readonly ConfigProblem[]): ConfigProblem[] {
  const seen = new Set<string>();
  return problems.filter((problem) => {
    const key = `${problem.path}\u0000${problem.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
