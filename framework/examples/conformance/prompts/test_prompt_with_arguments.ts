import { definePrompt, z } from "@svc-mcp/framework";

export default definePrompt({
  description: "A prompt with two required arguments",
  arguments: {
    arg1: z.string().describe("First test argument"),
    arg2: z.string().describe("Second test argument"),
  },
  complete: {
    arg1: (value) => ["paris", "park", "party"].filter((v) => v.startsWith(value)),
  },
  render: ({ arg1, arg2 }) => `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'`,
});
