import { afterAll } from "vitest";

// Suites start real servers and processes (identity provider, upstreams, gateways, redis-server) in beforeAll and in
// tests. All of them stop after the suite, the last started first, so a gateway goes before the upstream and the
// identity provider it talks to; a stop that fails must not leave the others running.

/** Registers the afterAll and returns how to add a cleanup to it. */
export function cleanupsAfterAll(): (cleanup: () => Promise<unknown>) => void {
  const cleanups: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  });
  return (cleanup) => {
    cleanups.push(cleanup);
  };
}
