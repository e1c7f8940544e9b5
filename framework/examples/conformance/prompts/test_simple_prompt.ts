import { definePrompt } from "@svc-mcp/framework";

export default definePrompt({
  description: "A simple prompt without arguments",
  render: () => "This is a simple prompt for testing.",
});
