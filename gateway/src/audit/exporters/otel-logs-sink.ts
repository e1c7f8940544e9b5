// PLACEHOLDER in the delivery-core branch, with the real module's exact exports; the OTLP logs exporter itself is built in
// its own branch and replaces this file at merge. Until then every write fails (retryable), so events wait in the
// sink's spool instead of being reported as exported.
import type { z } from "zod";
import type { otelExporterSchema } from "../../config/schema.ts";
import { type AuditSink, SinkWriteError } from "../sink.ts";

export type OtelExporterConfig = z.output<typeof otelExporterSchema>;

export function otelLogsSink(config: OtelExporterConfig): AuditSink {
  return {
    name: `otel:${config.name}`,
    write: async () => {
      throw new SinkWriteError("the OTLP logs exporter is not in this build");
    },
  };
}
