import type { ServerResponse } from "node:http";

/**
 * Runs `release` once the client's response has closed (answer sent, stream ended, or client gone), including when
 * it already closed while the request was still being processed: a slot taken after an `await` must not leak just
 * because the client hung up in between.
 */
export function onResponseClosed(client: ServerResponse, release: () => void): void {
  if (client.closed) release();
  else client.once("close", release);
}
