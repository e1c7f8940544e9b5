import { defineTool, z } from "@svc-mcp/framework";
import { caller } from "../lib/caller.ts";
import { toolResult } from "../lib/result.ts";
import { type Ticket, ticketsApi } from "../lib/tickets-api.ts";

export default defineTool({
  description: "Opens a helpdesk ticket in your name. Needs the tickets:write scope.",
  input: {
    title: z.string().min(3).max(200).describe("One-line summary of the problem"),
  },
  annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: true },
  handler: ({ title }, context) =>
    toolResult(async () => {
      const who = caller(context, "tickets:write");
      const ticket = await ticketsApi<Ticket>(who, "/tickets", {
        method: "POST",
        body: JSON.stringify({ title }),
      });
      return { ticket };
    }),
});
