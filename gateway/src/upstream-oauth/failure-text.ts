// What an upstream OAuth failure says to the caller (it ends up in a JSON-RPC error and a 502 page). A vendor, or
// whatever its metadata points the gateway at, writes the answers; none of their text is repeated here: an internal
// service's banner, a stack trace or an echo of the request must not reach the caller through the gateway. What is
// said: the guard's own reason (net/guarded-http.ts), the HTTP status, an OAuth error code when it is one, and
// oauth4webapi's own description of what did not conform (its messages name fields, never values).
import * as oauth from "oauth4webapi";
import { GuardedRequestError } from "../net/guarded-http.ts";

/** An OAuth error code as RFC 6749 spells them (`invalid_grant`); anything else is not repeated. */
const ERROR_CODE = /^[A-Za-z0-9_.:-]{1,64}$/;

export function describeFailure(error: unknown): string {
  if (error instanceof GuardedRequestError) return error.message;
  if (error instanceof oauth.ResponseBodyError) {
    const code = ERROR_CODE.test(error.error) ? ` ${error.error}` : "";
    return `it answered HTTP ${error.status} with OAuth error${code}`;
  }
  if (error instanceof oauth.WWWAuthenticateChallengeError) {
    return `it answered HTTP ${error.status} with a ${error.cause[0]?.scheme ?? "authentication"} challenge`;
  }
  if (error instanceof oauth.OperationProcessingError) {
    const cause = error.cause;
    if (cause instanceof GuardedRequestError) return cause.message;
    const status = cause instanceof Response ? ` (HTTP ${cause.status})` : "";
    return `${error.message}${status}`;
  }
  if (error instanceof oauth.UnsupportedOperationError || error instanceof TypeError) {
    // oauth4webapi's argument and protocol checks: its own text, naming the field.
    return error.message.slice(0, 200);
  }
  return "an unexpected error";
}
