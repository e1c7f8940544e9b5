import { defineTool, z } from "@svc-mcp/framework";

export default defineTool({
  description: "Asks the client's model to answer a prompt (sampling)",
  input: { prompt: z.string().describe("The prompt to send to the LLM") },
  handler: async ({ prompt }, context) => {
    const result = await context.sample({
      messages: [{ role: "user", content: { type: "text", text: prompt } }],
      maxTokens: 100,
    });
    const text = result.content.type === "text" ? result.content.text : JSON.stringify(result.content);
    return `LLM response: ${text}`;
  },
});
