import { defineTool, z } from "@svc-mcp/framework";

export default defineTool({
  description: "Asks the user for input (elicitation)",
  input: { message: z.string().describe("The message to show the user") },
  handler: async ({ message }, context) => {
    const result = await context.elicit({
      message,
      requestedSchema: {
        type: "object",
        properties: {
          username: { type: "string", description: "User's response" },
          email: { type: "string", description: "User's email address" },
        },
        required: ["username", "email"],
      },
    });
    return `User response: action=${result.action}, content=${JSON.stringify(result.content ?? {})}`;
  },
});
