// The control-plane API gateways call in distributed and centralized mode (docs/control-plane.openapi.yaml), on its
// own port: activation, the organization policy, the whole configuration, the heartbeat. A caller is an McpGateway's
// controlPlaneClient: its gateway id in the path, its API key as a bearer token, checked against the SHA-256 in the
// referenced Secret in constant time. An unknown id and a wrong key get the same 401 (the log and the metric say
// which); a gateway naming another organization gets 403. Documents carry an ETag; a GET with If-None-Match and
// `wait` is held until the document changes or `wait` (at most 30 s) passes, then answers 304. Everything is bounded:
// request bodies, the wait, the number of long polls held open, the heartbeat write rate.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { z } from "zod";
import { listen } from "../controller/http-endpoints.ts";
import type { Logger } from "../controller/log.ts";
import type { Metrics } from "../controller/metrics.ts";
import { describeError, type KubeClient } from "../kube/kube-client.ts";
import { bearerKey, keyMatches, parseKeyDigest } from "./api-key.ts";
import type { GatewayDirectory, Lookup, RegisteredGateway, ServedDocument } from "./gateway-directory.ts";

export const MAX_WAIT_SECONDS = 30;
const MAX_BODY_BYTES = 16 * 1024;
const MAX_LONG_POLLS = 10_000;
/** How long a Secret's digest is trusted before it is read again (a rotated key takes effect within this). */
const DIGEST_TTL_MS = 5_000;
/** Heartbeats closer together than this are acknowledged but not written to the McpGateway status. */
const MIN_STATUS_WRITE_MS = 2_000;

const UNKNOWN_GATEWAY_DIGEST = Buffer.alloc(32);

const ENDPOINTS = { activation: "POST", policy: "GET", configuration: "GET", heartbeat: "POST" } as const;
type Endpoint = keyof typeof ENDPOINTS;

const heartbeatSchema = z.object({
  version: z.string().max(64).optional(),
  mode: z.enum(["distributed", "centralized"]).optional(),
  health: z.enum(["HEALTHY", "DEGRADED", "UNHEALTHY"]),
  config_generation: z.int().min(0).optional(),
  policy_generation: z.int().min(0).optional(),
  requests: z.int().min(0).optional(),
  errors: z.int().min(0).optional(),
});

const activationSchema = z.object({
  version: z.string().max(64).optional(),
  organization_id: z.string().min(1).max(255).optional(),
});

export interface ControlPlaneApi {
  url: string;
  close(): Promise<void>;
}

class Refusal extends Error {
  readonly status: number;
  /** For the log and the metric; the caller only sees the message. */
  readonly reason: string | undefined;
  constructor(status: number, message: string, reason?: string) {
    super(message);
    this.status = status;
    this.reason = reason;
  }
}

export async function serveControlPlaneApi(options: {
  host: string;
  port: number;
  kube: KubeClient;
  directory: GatewayDirectory;
  metrics: Metrics;
  log: Logger;
}): Promise<ControlPlaneApi> {
  const { kube, directory, metrics, log } = options;
  const countRequest = metrics.counter(
    "svc_operator_control_plane_requests_total",
    "Control-plane API requests by endpoint and HTTP status",
  );
  const countRefusal = metrics.counter(
    "svc_operator_control_plane_refused_total",
    "Control-plane API requests refused, by reason (unknown_gateway, wrong_key, no_key_digest, other_organization)",
  );
  metrics.gauge(
    "svc_operator_control_plane_gateways",
    "Gateways registered (McpGateway controlPlaneClient)",
    () => directory.registered,
  );
  metrics.gauge("svc_operator_control_plane_long_polls", "Long polls held open", () => directory.waiting);

  const digests = new Map<string, { digest: Buffer | undefined; readAt: number }>();
  const statusWrittenAt = new Map<string, number>();

  const keyDigest = async (gateway: RegisteredGateway): Promise<Buffer | undefined> => {
    const ref = gateway.client.apiKeySha256.secretKeyRef;
    const cacheKey = `${gateway.namespace}/${ref.name}/${ref.key}`;
    const cached = digests.get(cacheKey);
    if (cached !== undefined && Date.now() - cached.readAt < DIGEST_TTL_MS) return cached.digest;
    const secret = (await kube.read("v1", "Secret", gateway.namespace, ref.name)) as
      | { data?: Record<string, string> }
      | undefined;
    const encoded = secret?.data?.[ref.key];
    const digest =
      encoded === undefined ? undefined : parseKeyDigest(Buffer.from(encoded, "base64").toString("utf8"));
    if (digests.size >= 10_000) digests.clear();
    digests.set(cacheKey, { digest, readAt: Date.now() });
    return digest;
  };

  const authenticate = async (
    request: IncomingMessage,
    gatewayId: string,
  ): Promise<{ gateway: RegisteredGateway; organizationId: string }> => {
    const found = directory.find(gatewayId);
    const key = bearerKey(request.headers.authorization);
    // An unknown id costs the same digest comparison as a wrong key, so the answer's timing says little about
    // which ids exist (the Secret read behind a known id is cached).
    if (!found.ok) keyMatches(key ?? "", UNKNOWN_GATEWAY_DIGEST);
    if (!found.ok) throw new Refusal(401, "unauthorized", "unknown_gateway");
    const digest = await keyDigest(found.value);
    if (digest === undefined) {
      log.error(
        "McpGateway's apiKeySha256 Secret key is missing or not 64 hex digits; its gateway is refused",
        {
          gateway: `${found.value.namespace}/${found.value.name}`,
        },
      );
      throw new Refusal(401, "unauthorized", "no_key_digest");
    }
    if (key === undefined || !keyMatches(key, digest)) throw new Refusal(401, "unauthorized", "wrong_key");
    const organization = directory.organizationOf(found.value);
    if (!organization.ok) throw new Refusal(503, organization.problem);
    const claimed = request.headers["x-svc-organization-id"];
    if (typeof claimed === "string" && claimed !== organization.value)
      throw new Refusal(403, "this gateway belongs to another organization", "other_organization");
    return { gateway: found.value, organizationId: organization.value };
  };

  const serveDocument = async (
    request: IncomingMessage,
    response: ServerResponse,
    url: URL,
    lookup: () => Lookup<ServedDocument>,
  ): Promise<number> => {
    const waitText = url.searchParams.get("wait") ?? "0";
    const wait = Number(waitText);
    if (!Number.isInteger(wait) || wait < 0)
      throw new Refusal(400, `wait must be a whole number of seconds (got ${waitText})`);
    const deadline = Date.now() + Math.min(wait, MAX_WAIT_SECONDS) * 1000;
    const known = request.headers["if-none-match"];
    let gone = false;
    response.once("close", () => {
      gone = true;
    });
    for (;;) {
      const document = lookup();
      if (!document.ok) throw new Refusal(503, document.problem);
      if (known !== document.value.etag) {
        sendJson(response, 200, document.value.body, {
          etag: document.value.etag,
          "cache-control": "no-cache",
        });
        return 200;
      }
      const left = deadline - Date.now();
      if (left <= 0 || gone || directory.waiting >= MAX_LONG_POLLS) {
        response.writeHead(304, { etag: document.value.etag }).end();
        return 304;
      }
      await directory.waitForChange(left);
    }
  };

  const heartbeat = async (request: IncomingMessage, gateway: RegisteredGateway): Promise<void> => {
    const parsed = heartbeatSchema.safeParse(await readJson(request));
    if (!parsed.success) throw new Refusal(400, `invalid heartbeat: ${z.prettifyError(parsed.error)}`);
    const key = `${gateway.namespace}/${gateway.name}`;
    const last = statusWrittenAt.get(key) ?? 0;
    if (Date.now() - last < MIN_STATUS_WRITE_MS) return;
    statusWrittenAt.set(key, Date.now());
    if (statusWrittenAt.size > 10_000) statusWrittenAt.clear();
    const report = parsed.data;
    const controlPlane = {
      gatewayId: gateway.client.gatewayId,
      lastHeartbeat: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
      health: report.health,
      ...(report.mode === undefined ? {} : { mode: report.mode }),
      ...(report.version === undefined ? {} : { version: report.version }),
      ...(report.config_generation === undefined ? {} : { configGeneration: report.config_generation }),
      ...(report.policy_generation === undefined ? {} : { policyGeneration: report.policy_generation }),
      ...(report.requests === undefined ? {} : { requests: report.requests }),
      ...(report.errors === undefined ? {} : { errors: report.errors }),
    };
    await kube.patchStatus("McpGateway", gateway.namespace, gateway.name, { controlPlane });
  };

  const handle = async (request: IncomingMessage, response: ServerResponse, url: URL): Promise<number> => {
    const match = /^\/v1\/gateways\/([^/]{1,64})\/([a-z]+)$/.exec(url.pathname);
    const endpoint = match?.[2] as Endpoint | undefined;
    if (match === null || endpoint === undefined || !(endpoint in ENDPOINTS))
      throw new Refusal(404, "not found");
    if (request.method !== ENDPOINTS[endpoint]) throw new Refusal(405, `use ${ENDPOINTS[endpoint]}`);
    const gatewayId = decodeURIComponent(match[1] as string);
    const { gateway, organizationId } = await authenticate(request, gatewayId);
    switch (endpoint) {
      case "activation": {
        const parsed = activationSchema.safeParse(await readJson(request));
        if (!parsed.success) throw new Refusal(400, `invalid activation: ${z.prettifyError(parsed.error)}`);
        if (parsed.data.organization_id !== undefined && parsed.data.organization_id !== organizationId)
          throw new Refusal(403, "this gateway belongs to another organization", "other_organization");
        log.info("gateway activated", {
          gateway: `${gateway.namespace}/${gateway.name}`,
          gatewayId,
          organizationId,
          version: parsed.data.version,
        });
        sendJson(response, 200, { gateway_id: gateway.client.gatewayId, organization_id: organizationId });
        return 200;
      }
      case "policy":
        return serveDocument(request, response, url, () => directory.policyFor(gateway));
      case "configuration":
        return serveDocument(request, response, url, () => directory.configurationFor(gateway));
      case "heartbeat":
        await heartbeat(request, gateway);
        response.writeHead(204).end();
        return 204;
    }
  };

  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://control-plane");
    const endpoint = /\/([a-z]+)$/.exec(url.pathname)?.[1] ?? "other";
    const label = endpoint in ENDPOINTS ? endpoint : "other";
    handle(request, response, url).then(
      (status) => countRequest({ endpoint: label, code: String(status) }),
      (error: unknown) => {
        const refusal = error instanceof Refusal ? error : new Refusal(500, "internal error", undefined);
        if (!(error instanceof Refusal))
          log.error("control-plane request failed", { path: url.pathname, error: describeError(error) });
        if (refusal.reason !== undefined) {
          countRefusal({ reason: refusal.reason });
          log.warn("control-plane request refused", {
            path: url.pathname,
            reason: refusal.reason,
            status: refusal.status,
            remote: request.socket.remoteAddress,
          });
        }
        countRequest({ endpoint: label, code: String(refusal.status) });
        if (!response.headersSent) {
          sendJson(
            response,
            refusal.status,
            { error: refusal.message },
            refusal.status === 401 ? { "www-authenticate": "Bearer" } : {},
          );
        } else response.end();
      },
    );
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = (MAX_WAIT_SECONDS + 10) * 1000;
  return listen(server, options.host, options.port);
}

function sendJson(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  response.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body));
}

async function readJson(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new Refusal(413, `request body larger than ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  if (size === 0) return {};
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    throw new Refusal(400, "request body is not JSON");
  }
}
