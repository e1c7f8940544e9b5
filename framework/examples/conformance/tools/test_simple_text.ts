import { defineTool } from "svc";

export default defineTool({
  description: "Returns simple text content",
  handler: () => "This is a simple text response for testing.",
});
