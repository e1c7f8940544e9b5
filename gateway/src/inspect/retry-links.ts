// Multi round-trip requests (2026-07-28): a server answers a request with `input_required` and an opaque
// `requestState`; the client retries with a new id, echoing that state. The audit trail links the retry to the first
// request when the gateway saw the state go out: the record of the retry names the request id of the exchange that
// carried it. The state itself is never stored or logged: a digest of it, keyed by the caller and the server, so one
// user's state never links another user's request.
//
// Bounded and local: at most MAX_LINKS states, each kept for LINK_TTL_MS (a user answers a question in minutes). A
// retry that reaches another replica, or comes later, is simply not linked; nothing depends on the link but the record.
import { createHash } from "node:crypto";
import { isJsonRpcRequest, type JsonRpcMessage } from "../sse/json-rpc.ts";

const MAX_LINKS = 10_000;
const LINK_TTL_MS = 15 * 60_000;

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);

export class RetryLinks {
  /** Digest of (owner, server, requestState) → the request id that received it, and when. Oldest first. */
  readonly #links = new Map<string, { requestId: string; at: number }>();

  /** An answer carried an `input_required` result: remember which exchange its requestState went out on. */
  remember(owner: string, server: string, requestId: string, answer: JsonRpcMessage): void {
    const result = answer.result;
    if (!isObject(result) || result.resultType !== "input_required") return;
    if (typeof result.requestState !== "string") return;
    const key = digest(owner, server, result.requestState);
    this.#links.delete(key);
    this.#links.set(key, { requestId, at: Date.now() });
    if (this.#links.size > MAX_LINKS) this.#links.delete(this.#links.keys().next().value as string);
  }

  /** The request id whose answer carried the requestState one of these requests echoes, if this gateway saw it. */
  firstRequestOf(owner: string, server: string, messages: readonly JsonRpcMessage[]): string | undefined {
    for (const message of messages) {
      if (!isJsonRpcRequest(message) || !isObject(message.params)) continue;
      const state = message.params.requestState;
      if (typeof state !== "string") continue;
      const link = this.#links.get(digest(owner, server, state));
      if (link !== undefined && Date.now() - link.at <= LINK_TTL_MS) return link.requestId;
    }
    return undefined;
  }
}

function digest(owner: string, server: string, state: string): string {
  return createHash("sha256")
    .update(owner)
    .update("\0")
    .update(server)
    .update("\0")
    .update(state)
    .digest("base64url");
}
