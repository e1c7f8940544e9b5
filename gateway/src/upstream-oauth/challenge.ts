// The Bearer challenge (RFC 6750 section 3) an upstream sends with a 401 or 403: which error, which scopes, and where
// its protected-resource metadata lives (RFC 9728 section 5.1). oauth4webapi holds a complete RFC 9110 challenge
// parser but exposes it only through its response processors, so a header is handed to one of them (the revocation
// response's, which parses challenges first and does nothing else with a body-less answer) rather than parsed again
// by hand here.
import * as oauth from "oauth4webapi";

export interface BearerChallenge {
  /** `invalid_token`, `insufficient_scope`, ...; undefined when the challenge names none (no token was sent). */
  error: string | undefined;
  /** The scopes the upstream names as needed (insufficient_scope). */
  scopes: string[];
  /** `resource_metadata`: the upstream's RFC 9728 metadata document. */
  resourceMetadata: string | undefined;
}

/** Challenge headers longer than this are not parsed: the upstream does not choose how much work the gateway does. */
const MAX_CHALLENGE_LENGTH = 4096;

export async function parseBearerChallenge(header: string | string[] | undefined): Promise<BearerChallenge> {
  const none: BearerChallenge = { error: undefined, scopes: [], resourceMetadata: undefined };
  const value = Array.isArray(header) ? header.join(", ") : header;
  if (value === undefined || value === "" || value.length > MAX_CHALLENGE_LENGTH) return none;
  try {
    await oauth.processRevocationResponse(
      new Response(null, { status: 401, headers: { "www-authenticate": value } }),
    );
  } catch (error) {
    if (error instanceof oauth.WWWAuthenticateChallengeError) {
      const bearer = error.cause.find((challenge) => challenge.scheme === "bearer");
      if (bearer === undefined) return none;
      const { parameters } = bearer;
      return {
        error: parameters.error,
        scopes: (parameters.scope ?? "").split(" ").filter((scope) => scope !== ""),
        resourceMetadata: parameters.resource_metadata,
      };
    }
  }
  return none;
}
