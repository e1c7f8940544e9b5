import { defineTool } from "@svc-mcp/framework";
import { caller } from "../lib/caller.ts";

export default defineTool({
  description: "Tells who you are to this server: your user id, client id and granted scopes.",
  annotations: { readOnlyHint: true, openWorldHint: false },
  handler: (_args, context) => caller(context) as unknown as Record<string, unknown>,
});
