import { defineResource } from "svc";

export default defineResource({
  uri: "info://{{name}}/about",
  description: "What this server is and how it was built.",
  mimeType: "text/markdown",
  read: () =>
    "# {{name}}\n\nAn MCP server built with svc. Add tools in tools/, resources in resources/, prompts in prompts/.",
});
