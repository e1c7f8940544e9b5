// PLACEHOLDER in the delivery-core branch, with the real module's exact exports; the SIEM exporter itself is built in
// its own branch and replaces this file at merge. Until then every write fails (retryable), so events wait in the
// sink's spool instead of being reported as exported.
import type { z } from "zod";
import type { siemExporterSchema } from "../../config/schema.ts";
import { type AuditSink, SinkWriteError } from "../sink.ts";

export type SiemExporterConfig = z.output<typeof siemExporterSchema>;

export function siemSink(config: SiemExporterConfig, _options?: { authorityHost?: string }): AuditSink {
  return {
    name: `siem:${config.name}`,
    write: async () => {
      throw new SinkWriteError("the SIEM exporter is not in this build");
    },
  };
}
