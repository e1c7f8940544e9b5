// PLACEHOLDER in the delivery-core branch, with the real module's exact exports; the search-index exporter itself is built in
// its own branch and replaces this file at merge. Until then every write fails (retryable), so events wait in the
// sink's spool instead of being reported as exported.
import type { z } from "zod";
import type { searchIndexExporterSchema } from "../../config/schema.ts";
import { type AuditSink, SinkWriteError } from "../sink.ts";

export type SearchIndexExporterConfig = z.output<typeof searchIndexExporterSchema>;

export function searchIndexSink(config: SearchIndexExporterConfig): AuditSink {
  return {
    name: `search_index:${config.name}`,
    write: async () => {
      throw new SinkWriteError("the search-index exporter is not in this build");
    },
  };
}
