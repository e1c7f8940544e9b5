import { defineTool, z } from "@svc-mcp/framework";
import { caller } from "../lib/caller.ts";
import { toolResult } from "../lib/result.ts";
import { type Ticket, ticketsApi } from "../lib/tickets-api.ts";

export default defineTool({
  description: "Lists your helpdesk tickets, optionally only open or closed ones.",
  input: { status: z.enum(["open", "closed"]).optional().describe("Only tickets with this status") },
  annotations: { readOnlyHint: true, openWorldHint: true },
  handler: ({ status }, context) =>
    toolResult(async () => {
      const query = status ? `?status=${status}` : "";
      const tickets = await ticketsApi<Ticket[]>(caller(context, "tickets:read"), `/tickets${query}`);
      return { tickets };
    }),
});
