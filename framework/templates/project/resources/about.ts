import { defineResource } from "@svc-mcp/framework";

export default defineResource({
  uri: "info://__PROJECT_NAME__/about",
  description: "What this server is and how it was built.",
  mimeType: "text/markdown",
  read: () =>
    "# __PROJECT_NAME__\n\nAn MCP server built with svc. Add tools in tools/, resources in resources/, prompts in prompts/.",
});
