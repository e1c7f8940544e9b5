import type { Caller } from "./caller.ts";

export interface Ticket {
  id: string;
  title: string;
  status: "open" | "closed";
  owner: string;
}

/**
 * Calls the helpdesk API with this server's own credential (TICKETS_API_KEY) and names the caller in
 * X-On-Behalf-Of. The caller's access token is NOT forwarded: it was issued for this MCP server's audience,
 * and passing it on ("token passthrough") would let the API accept tokens that were never meant for it.
 */
export async function ticketsApi<T>(caller: Caller, path: string, init: RequestInit = {}): Promise<T> {
  const base = process.env.TICKETS_API_URL;
  const key = process.env.TICKETS_API_KEY;
  if (!base || !key) throw new Error("TICKETS_API_URL and TICKETS_API_KEY must be set");
  const response = await fetch(new URL(path, base), {
    ...init,
    headers: {
      "content-type": "application/json",
      authorization: `Bearer ${key}`,
      "x-on-behalf-of": caller.subject,
    },
    signal: AbortSignal.timeout(10_000),
  });
  if (!response.ok) throw new Error(`helpdesk API answered ${response.status}`);
  return (await response.json()) as T;
}
