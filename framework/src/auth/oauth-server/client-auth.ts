import { InvalidClientError, InvalidRequestError } from "@modelcontextprotocol/sdk/server/auth/errors.js";
import type { Context } from "hono";
import { ClientStore, type StoredClient } from "./client-store.ts";
import type { OAuthServerContext } from "./server-context.ts";

/** Credentials as presented: HTTP Basic, form fields, or a bare client_id (public clients). */
function presented(c: Context, form: Record<string, string>) {
  const header = c.req.header("authorization");
  if (header?.toLowerCase().startsWith("basic ")) {
    if (form.client_secret !== undefined) {
      throw new InvalidRequestError(
        "use one client authentication method, not Basic and client_secret together",
      );
    }
    let decoded: string;
    try {
      decoded = Buffer.from(header.slice(6).trim(), "base64").toString("utf8");
    } catch {
      throw new InvalidClientError("malformed Basic credentials");
    }
    const colon = decoded.indexOf(":");
    if (colon < 0) throw new InvalidClientError("malformed Basic credentials");
    // RFC 6749 §2.3.1: both parts are form-urlencoded before Basic encoding.
    const decode = (part: string) => decodeURIComponent(part.replaceAll("+", " "));
    try {
      return {
        method: "client_secret_basic" as const,
        clientId: decode(decoded.slice(0, colon)),
        secret: decode(decoded.slice(colon + 1)),
      };
    } catch {
      throw new InvalidClientError("malformed Basic credentials");
    }
  }
  if (form.client_secret !== undefined) {
    return {
      method: "client_secret_post" as const,
      clientId: form.client_id ?? "",
      secret: form.client_secret,
    };
  }
  return { method: "none" as const, clientId: form.client_id ?? "", secret: undefined };
}

/**
 * Authenticates the client at /token and /revoke with the method it registered; anything else is
 * invalid_client. Secrets are compared in constant time against their stored digest.
 */
export function authenticateClient(
  c: Context,
  form: Record<string, string>,
  context: OAuthServerContext,
): StoredClient {
  const credentials = presented(c, form);
  if (!credentials.clientId) throw new InvalidClientError("client_id is required");
  if (form.client_id !== undefined && form.client_id !== credentials.clientId) {
    throw new InvalidClientError("client_id does not match the authenticated client");
  }
  const client = context.clients.get(credentials.clientId);
  if (!client) throw new InvalidClientError("unknown client");
  if (client.token_endpoint_auth_method !== credentials.method) {
    throw new InvalidClientError(`client must authenticate with ${client.token_endpoint_auth_method}`);
  }
  if (credentials.secret !== undefined && !ClientStore.secretMatches(client, credentials.secret)) {
    throw new InvalidClientError("client authentication failed");
  }
  return client;
}
