import { createServer, type IncomingHttpHeaders } from "node:http";

type AnyValue = {
  stringValue?: string;
  intValue?: number | string;
  boolValue?: boolean;
  doubleValue?: number;
};

export interface ReceivedSpan {
  name: string;
  traceId: string;
  parentSpanId: string | undefined;
  kind: number;
  attributes: Record<string, string | number | boolean | undefined>;
  status: { code?: number; message?: string };
  service: string | undefined;
}

interface OtlpJson {
  resourceSpans?: {
    resource?: { attributes?: { key: string; value: AnyValue }[] };
    scopeSpans?: {
      spans?: {
        name: string;
        traceId: string;
        parentSpanId?: string;
        kind: number;
        attributes?: { key: string; value: AnyValue }[];
        status?: object;
      }[];
    }[];
  }[];
}

function flatten(attributes: { key: string; value: AnyValue }[] = []) {
  const out: Record<string, string | number | boolean | undefined> = {};
  for (const { key, value } of attributes) {
    out[key] =
      value.stringValue ??
      (value.intValue !== undefined ? Number(value.intValue) : undefined) ??
      value.boolValue ??
      value.doubleValue;
  }
  return out;
}

/** A loopback OTLP/HTTP receiver for JSON payloads (what @opentelemetry/exporter-trace-otlp-http sends). */
export async function startOtlpReceiver() {
  const spans: ReceivedSpan[] = [];
  const requests: { path: string; headers: IncomingHttpHeaders }[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      requests.push({ path: req.url ?? "", headers: req.headers });
      if (req.url !== "/v1/traces" || !req.headers["content-type"]?.includes("application/json")) {
        res.writeHead(415).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as OtlpJson;
      for (const resourceSpans of body.resourceSpans ?? []) {
        const service = flatten(resourceSpans.resource?.attributes)["service.name"];
        for (const scope of resourceSpans.scopeSpans ?? []) {
          for (const span of scope.spans ?? []) {
            spans.push({
              name: span.name,
              traceId: span.traceId,
              parentSpanId: span.parentSpanId || undefined,
              kind: span.kind,
              attributes: flatten(span.attributes),
              status: (span.status ?? {}) as ReceivedSpan["status"],
              service: typeof service === "string" ? service : undefined,
            });
          }
        }
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const url = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
  return {
    url,
    spans,
    requests,
    /** Waits until a span with each name has arrived (the batch processor flushes on a short delay). */
    async waitFor(names: string[], timeoutMs = 15_000): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      while (!names.every((name) => spans.some((s) => s.name === name))) {
        if (Date.now() > deadline)
          throw new Error(`spans missing; got: ${spans.map((s) => s.name).join(", ")}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
