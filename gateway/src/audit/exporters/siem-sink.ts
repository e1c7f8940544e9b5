// The SIEM exporter: audit events as rows of a custom Log Analytics table, through the Azure Monitor logs ingestion API
// (a Data Collection Rule's stream), authenticated as a service principal with a client secret. One upload per batch;
// the audit queue retries, so the SDK's own retry loops are turned off and a failure is reported at once, with the
// events not yet accepted and the receiver's Retry-After.
import { ClientSecretCredential } from "@azure/identity";
import {
  isAggregateLogsUploadError,
  LogsIngestionClient,
  type LogsUploadFailure,
} from "@azure/monitor-ingestion";
import type { z } from "zod";
import type { siemExporterSchema } from "../../config/schema.ts";
import type { ChainedAuditEvent } from "../audit-event.ts";
import { type AuditSink, SinkWriteError } from "../sink.ts";
import { exporterSinkName } from "./enabled.ts";
import { type SiemRow, siemRowFromEvent } from "./siem-columns.ts";
import { describeSiemFailure } from "./siem-failure.ts";
import { useFastGzip } from "./siem-gzip.ts";

export type SiemExporterConfig = z.output<typeof siemExporterSchema>;

export interface SiemSinkOptions {
  /**
   * For tests only: where the credential asks for tokens (https). Default: AZURE_AUTHORITY_HOST from the environment
   * (the variable @azure/identity itself reads; how a test points a spawned gateway at a loopback token endpoint), else
   * the public cloud. The config file has no such field.
   */
  authorityHost?: string;
  /** For tests only: a PEM certificate authority trusted in addition to the system's (loopback HTTPS receivers). */
  trustedCa?: string;
}

export function siemSink(config: SiemExporterConfig, options: SiemSinkOptions = {}): AuditSink {
  const name = exporterSinkName("siem", config.name);
  // The schema requires these when the exporter is enabled; a disabled one must not be built.
  const { dcr_endpoint, dcr_immutable_id, tenant_id, client_id, client_secret } = config;
  if (
    dcr_endpoint === undefined ||
    dcr_immutable_id === undefined ||
    tenant_id === undefined ||
    client_id === undefined ||
    client_secret === undefined
  ) {
    const missing = Object.entries({ dcr_endpoint, dcr_immutable_id, tenant_id, client_id, client_secret })
      .filter(([, value]) => value === undefined)
      .map(([field]) => field);
    throw new Error(`${name}: ${missing.join(", ")} required`);
  }
  const settings = {
    dcrEndpoint: dcr_endpoint,
    dcrImmutableId: dcr_immutable_id,
    streamName: config.dcr_stream_name,
    tenantId: tenant_id,
    clientId: client_id,
    clientSecret: client_secret,
  };
  const timeoutMs = config.timeout * 1000;
  // The audit queue owns retries (backoff, Retry-After, spool): an SDK retry would hold the batch past the timeout and
  // hide the Retry-After from the queue.
  const retryOptions = { maxRetries: 0 };
  const tlsOptions = options.trustedCa === undefined ? undefined : { ca: options.trustedCa };
  const authorityHost = options.authorityHost ?? nonEmpty(process.env.AZURE_AUTHORITY_HOST);
  const credential = new ClientSecretCredential(settings.tenantId, settings.clientId, settings.clientSecret, {
    retryOptions,
    tlsOptions,
    ...(authorityHost === undefined
      ? {}
      : // An authority chosen by the operator is trusted as given: MSAL's instance discovery would ask the public cloud
        // to vouch for it, which fails for a loopback test authority and is a needless call for a sovereign cloud.
        { authorityHost, disableInstanceDiscovery: true }),
  });
  const client = new LogsIngestionClient(settings.dcrEndpoint, credential, { retryOptions, tlsOptions });
  useFastGzip(client);

  return {
    name,
    async write(batch: readonly ChainedAuditEvent[]): Promise<void> {
      if (batch.length === 0) return;
      const rows = batch.map(siemRowFromEvent);
      const positionOfRow = new Map<SiemRow, number>(rows.map((row, position) => [row, position]));
      const timeout = AbortSignal.timeout(timeoutMs);
      // The client splits rows into ~1 MB chunks. One chunk at a time, and none after a failed one, so what is left is
      // a suffix of the batch and the receiver sees the events in order.
      const stopAfterFailure = new AbortController();
      try {
        await client.upload(settings.dcrImmutableId, settings.streamName, rows, {
          maxConcurrency: 1,
          abortSignal: AbortSignal.any([timeout, stopAfterFailure.signal]),
          onError: () => stopAfterFailure.abort(),
        });
      } catch (error) {
        const failure = firstFailure(error);
        const firstFailedPosition =
          failure === undefined ? 0 : (positionOfRow.get(failure.failedLogs[0] as SiemRow) ?? 0);
        const described = describeSiemFailure(failure?.cause ?? error, {
          timedOut: timeout.aborted,
          timeoutSeconds: config.timeout,
          secret: settings.clientSecret,
          tenantId: settings.tenantId,
          clientId: settings.clientId,
        });
        throw new SinkWriteError(`${name}: ${described.message}`, {
          remaining: batch.slice(firstFailedPosition),
          retryAfterMs: described.retryAfterMs,
        });
      }
    },
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === "" ? undefined : value;
}

function firstFailure(error: unknown): LogsUploadFailure | undefined {
  return isAggregateLogsUploadError(error) ? error.errors[0] : undefined;
}
