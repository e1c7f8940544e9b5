// A request id for every request: the client's X-Request-Id when it is a plausible id (so traces join up
// across hops), otherwise a fresh UUID. Anything else is replaced, so a client cannot inject log content.
import { randomUUID } from "node:crypto";

const PLAUSIBLE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestIdFrom(header: string | string[] | undefined): string {
  return typeof header === "string" && PLAUSIBLE_ID.test(header) ? header : randomUUID();
}
