import { defineTool } from "@svc-mcp/framework";

export default defineTool({
  description: "Always fails (a thrown error becomes an isError result)",
  handler: () => {
    throw new Error("This tool intentionally returns an error for testing");
  },
});
