import { setTimeout as sleep } from "node:timers/promises";
import type { Informer, KubernetesObject, ObjectCache } from "@kubernetes/client-node";
import { describeError } from "../kube/kube-client.ts";
import { Backoff, type BackoffSchedule } from "./backoff.ts";
import type { Logger } from "./log.ts";

/**
 * Starts a list-watch and resolves once its first list succeeded (retrying with backoff until then, or until
 * `signal` aborts). A list-watch that fails later stops; it is restarted with backoff and resumes from its
 * resourceVersion. The informer's own "connect" event fires before its list, so it cannot tell a healthy watch from a
 * refused connection: the backoff resets only after a watch ran a while without failing.
 */
export async function startInformer(
  name: string,
  cache: Informer<KubernetesObject> & ObjectCache<KubernetesObject>,
  options: { log: Logger; signal: AbortSignal; schedule: BackoffSchedule },
): Promise<void> {
  const { log, signal } = options;
  const backoff = new Backoff(options.schedule);
  let failed = false;
  let initialized = false;
  let retryInMs = 0;
  cache.on("error", (error: unknown) => {
    failed = true;
    if (signal.aborted) return;
    retryInMs = backoff.failed();
    log.warn("watch failed; restarting", {
      informer: name,
      error: describeError(error),
      retryInMs,
      failures: backoff.failures,
    });
    if (!initialized) return; // the loop below retries
    sleep(retryInMs, undefined, { signal, ref: false })
      .then(() => cache.start())
      .then(() => (signal.aborted ? cache.stop() : undefined))
      .catch(() => undefined);
  });
  while (!signal.aborted) {
    failed = false;
    await cache.start();
    if (!failed) break;
    await sleep(retryInMs, undefined, { signal }).catch(() => undefined);
  }
  // A stop() while the list was in flight: the informer goes on to open its watch, so close it again.
  if (signal.aborted) await cache.stop();
  initialized = true;
}
