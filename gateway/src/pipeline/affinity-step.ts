// Step 6b: which upstream instance gets the request, when one server name has several (proxy/upstream-instances.ts).
// session_affinity true (the default): a new session goes to the next instance in turn, and its id is pinned to that
// instance in the KV store (sessions/session-pins.ts) before the client sees it, so every replica sends every later
// request of the session there. A session whose instance is gone (no longer listed or resolved, or refusing
// connections) gets the MCP "session not found" answer (404), so the client re-initializes: it is never moved to
// another instance, which would not know it. session_affinity false: every request goes to the next instance in turn.
import { GatewayError } from "../errors/gateway-error.ts";
import type { UpstreamInstances } from "../proxy/upstream-instances.ts";
import type { UpstreamRoute } from "../runtime/config-snapshot.ts";
import type { SessionPins } from "../sessions/session-pins.ts";

export interface AffinityDeps {
  instances: UpstreamInstances;
  pins: SessionPins;
  /** The next instance for each server, in turn (one counter per configured server name). */
  turns: Map<string, number>;
}

export interface InstanceChoice {
  route: UpstreamRoute;
  /** The session's instance came from its pin: if it cannot be reached, the session is gone. */
  pinned: boolean;
  /** Several instances and affinity asked: a session id the instance issues must be pinned to it. */
  pinIssued: boolean;
  /** The other instances, in the order a request outside a session tries them when this one refuses connections. */
  others: readonly string[];
}

const SESSION_GONE =
  "Session not found: the upstream instance that held it is gone; send initialize to start a new one";

/** The choice without waiting when the route has one instance, known already: the common case costs no promise. */
export function onlyInstance(deps: AffinityDeps, route: UpstreamRoute): InstanceChoice | undefined {
  const origins = deps.instances.knownOrigins(route);
  return origins?.length === 1 ? onlyChoice(route, origins[0] as string) : undefined;
}

function onlyChoice(route: UpstreamRoute, origin: string): InstanceChoice {
  return {
    route: origin === route.origin ? route : { ...route, origin },
    pinned: false,
    pinIssued: false,
    others: [],
  };
}

export async function chooseInstance(
  deps: AffinityDeps,
  route: UpstreamRoute,
  presentedSession: string | undefined,
): Promise<InstanceChoice> {
  const origins = await deps.instances.originsOf(route);
  const at = (origin: string) => (origin === route.origin ? route : { ...route, origin });
  if (origins.length === 1) return onlyChoice(route, origins[0] as string);
  const affinity = route.server.session_affinity;
  if (affinity && presentedSession !== undefined) {
    let pinned: string | undefined;
    try {
      pinned = await deps.pins.pinned(route.name, presentedSession);
    } catch (error) {
      throw storeUnavailable(route.name, error);
    }
    if (pinned === undefined || !origins.includes(pinned)) {
      if (pinned !== undefined) await deps.pins.unpin(route.name, presentedSession).catch(() => {});
      throw new GatewayError("session_not_found", SESSION_GONE, { server: route.name });
    }
    return { route: at(pinned), pinned: true, pinIssued: false, others: [] };
  }
  const turn = deps.turns.get(route.name) ?? 0;
  deps.turns.set(route.name, (turn + 1) % origins.length);
  const rotated = [...origins.slice(turn % origins.length), ...origins.slice(0, turn % origins.length)];
  return { route: at(rotated[0] as string), pinned: false, pinIssued: affinity, others: rotated.slice(1) };
}

/**
 * The next instance to try after `error`, or undefined. Only for a connection refused (upstream_unreachable: the
 * request never reached the instance, so sending it elsewhere cannot run it twice), and only outside a pinned session.
 */
export function nextInstance(choice: InstanceChoice, error: unknown): InstanceChoice | undefined {
  if (choice.pinned || choice.others.length === 0) return undefined;
  if (!(error instanceof GatewayError) || error.code !== "upstream_unreachable") return undefined;
  const [origin, ...others] = choice.others as [string, ...string[]];
  return { ...choice, route: { ...choice.route, origin }, others };
}

/** Pins a session id the chosen instance just issued; a failure refuses the answer (forward ends the session). */
export async function pinIssuedSession(
  deps: AffinityDeps,
  choice: InstanceChoice,
  issued: string,
): Promise<void> {
  if (!choice.pinIssued) return;
  try {
    await deps.pins.pin(choice.route.name, issued, choice.route.origin);
  } catch (error) {
    throw storeUnavailable(choice.route.name, error);
  }
}

/** The pinned instance refuses connections: it is gone, and so is the session. */
export async function sessionGone(
  deps: AffinityDeps,
  choice: InstanceChoice,
  sessionId: string,
  error: unknown,
): Promise<GatewayError | undefined> {
  if (!choice.pinned || !(error instanceof GatewayError) || error.code !== "upstream_unreachable")
    return undefined;
  await deps.pins.unpin(choice.route.name, sessionId).catch(() => {});
  return new GatewayError("session_not_found", SESSION_GONE, { server: choice.route.name, cause: error });
}

function storeUnavailable(server: string, error: unknown): GatewayError {
  return new GatewayError(
    "session_store_unavailable",
    "The session store is unreachable, so the upstream instance of this session cannot be found; try again shortly",
    { server, headers: { "retry-after": "5" }, cause: error },
  );
}
