import { definePrompt, z } from "@svc-mcp/framework";

export default definePrompt({
  description: "Asks the model to introduce someone, using the hello tool.",
  arguments: {
    name: z.string().describe("Who to introduce"),
    tone: z.string().optional().describe("formal or casual"),
  },
  complete: { tone: (value) => ["formal", "casual"].filter((t) => t.startsWith(value)) },
  render: ({ name, tone }) =>
    `Introduce ${name} in a ${tone ?? "friendly"} tone. Use the hello tool to greet them first.`,
});
