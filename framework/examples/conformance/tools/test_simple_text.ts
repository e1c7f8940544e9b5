import { defineTool } from "@svc-mcp/framework";

export default defineTool({
  description: "Returns simple text content",
  handler: () => "This is a simple text response for testing.",
});
