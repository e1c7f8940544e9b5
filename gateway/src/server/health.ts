// /health and /readiness bodies. Field names and healthy values are fixed (what probes and dashboards
// read); the other values and the level mapping are documented in docs/operations.md:
//   HEALTHY   → status "healthy",   HTTP 200: every component ok.
//   DEGRADED  → status "degraded",  HTTP 200: the KV store is unreachable (breaker open or half_open). The
//               proxy keeps serving, and restarting the pod would not bring Redis back, so liveness stays up.
//   UNHEALTHY → status "unhealthy", HTTP 503: the upstream HTTP client is closed; the gateway cannot proxy.
// Audit sinks (stdout, the file, each exporter; states from audit/sink-queue.ts):
//   ok                           → HEALTHY
//   retrying, behind             → DEGRADED: the last attempt failed, or the backlog is past 10 000 events; events
//                                  wait in the spool and nothing is lost.
//   failing, spool_full          → UNHEALTHY: every attempt failed for 5 minutes or more, or the spool is at its cap
//                                  and new events for that sink are being dropped; exports are blocked.
// Control plane (distributed and centralized mode):
//   connected                    → HEALTHY
//   unreachable                  → DEGRADED: the last good policy keeps being enforced (fail static); the body says
//                                  how old it is.
// Group sync (each provider with management credentials, once used):
//   ok                           → HEALTHY
//   failing, rate_limited        → DEGRADED: requests get the cached groups or the token's own, never more.
import type { SinkState, SinkStatus } from "../audit/sink-queue.ts";
import type { ControlPlaneStatus } from "../control-plane/control-plane-source.ts";
import type { GroupSyncStatus } from "../identity/group-sync/group-sync.ts";
import type { KvStoreStatus } from "../kv/index.ts";

export type HealthLevel = "HEALTHY" | "DEGRADED" | "UNHEALTHY";

export interface HealthInputs {
  kv: KvStoreStatus;
  httpClientOk: boolean;
  upstreams: number;
  gatewayId?: string;
  /** SVC_ALLOW_ANONYMOUS is in force (no identity providers): shown so nobody runs it by accident unnoticed. */
  anonymousAccess: boolean;
  /** Each audit sink's state and backlog. */
  auditSinks?: readonly SinkStatus[];
  /** Group sync state per identity provider (only those with management credentials that have been used). */
  groupSync?: Record<string, GroupSyncStatus>;
  /** The control plane connection (distributed and centralized mode). */
  controlPlane?: ControlPlaneStatus;
}

export interface EndpointAnswer {
  status: number;
  body: Record<string, unknown>;
}

const SINK_LEVEL: Record<SinkState, HealthLevel> = {
  ok: "HEALTHY",
  retrying: "DEGRADED",
  behind: "DEGRADED",
  failing: "UNHEALTHY",
  spool_full: "UNHEALTHY",
};

export function healthLevel(inputs: HealthInputs): HealthLevel {
  const sinks = (inputs.auditSinks ?? []).map((sink) => SINK_LEVEL[sink.state]);
  if (!inputs.httpClientOk || sinks.includes("UNHEALTHY")) return "UNHEALTHY";
  const groupSyncDown = Object.values(inputs.groupSync ?? {}).some((status) => status.state !== "ok");
  const controlPlaneDown = inputs.controlPlane !== undefined && inputs.controlPlane.state !== "connected";
  if (
    !inputs.kv.healthy ||
    inputs.kv.breaker !== "closed" ||
    sinks.includes("DEGRADED") ||
    groupSyncDown ||
    controlPlaneDown
  ) {
    return "DEGRADED";
  }
  return "HEALTHY";
}

const STATUS_OF: Record<HealthLevel, string> = {
  HEALTHY: "healthy",
  DEGRADED: "degraded",
  UNHEALTHY: "unhealthy",
};

export function healthAnswer(inputs: HealthInputs): EndpointAnswer {
  const level = healthLevel(inputs);
  const body: Record<string, unknown> = {
    status: STATUS_OF[level],
    kvstore: inputs.kv.healthy ? "ok" : "unavailable",
    kvstore_circuit_breaker: inputs.kv.breaker,
    upstreams: `${inputs.upstreams} configured`,
    http_client: inputs.httpClientOk ? "ok" : "closed",
    anonymous_access: inputs.anonymousAccess ? "enabled" : "disabled",
  };
  if (inputs.gatewayId !== undefined) body.gateway_id = inputs.gatewayId;
  if (inputs.auditSinks !== undefined) {
    body.audit = Object.fromEntries(
      inputs.auditSinks.map((sink) => [
        sink.name,
        { state: sink.state, backlog_events: sink.backlogEvents, backlog_bytes: sink.backlogBytes },
      ]),
    );
  }
  if (inputs.groupSync !== undefined && Object.keys(inputs.groupSync).length > 0) {
    body.group_sync = Object.fromEntries(
      Object.entries(inputs.groupSync).map(([provider, status]) => [
        provider,
        {
          state: status.state,
          fallbacks: status.fallbacks,
          ...(status.lastError === undefined ? {} : { last_error: status.lastError }),
        },
      ]),
    );
  }
  if (inputs.controlPlane !== undefined) {
    const cp = inputs.controlPlane;
    body.control_plane = {
      state: cp.state,
      organization_id: cp.organizationId,
      policy_generation: cp.policyGeneration,
      policy_age_seconds: cp.policyAgeSeconds,
      refused_documents: cp.refusedDocuments,
      ...(cp.lastError === undefined ? {} : { last_error: cp.lastError }),
    };
  }
  return { status: level === "UNHEALTHY" ? 503 : 200, body };
}

export interface ReadinessInputs {
  configLoaded: boolean;
  httpClientReady: boolean;
  kvReady: boolean;
  draining: boolean;
  upstreams: number;
}

export function readinessAnswer(inputs: ReadinessInputs): EndpointAnswer {
  const ready = inputs.configLoaded && inputs.httpClientReady && inputs.kvReady && !inputs.draining;
  return {
    status: ready ? 200 : 503,
    body: {
      status: ready ? "ready" : "not ready",
      draining: inputs.draining,
      http_client: inputs.httpClientReady ? "initialized" : "not initialized",
      upstreams: `${inputs.upstreams} loaded`,
      kvstore_manager: inputs.kvReady ? "initialized" : "not initialized",
    },
  };
}
