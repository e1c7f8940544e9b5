import { definePrompt } from "svc";

export default definePrompt({
  description: "A simple prompt without arguments",
  render: () => "This is a simple prompt for testing.",
});
