import { defineTool } from "@svc-mcp/framework";

export default defineTool({
  description: "Elicitation with a default value for every primitive type (SEP-1034)",
  handler: async (_args, context) => {
    const result = await context.elicit({
      message: "Please review and update the form fields with defaults",
      requestedSchema: {
        type: "object",
        properties: {
          name: { type: "string", description: "User name", default: "John Doe" },
          age: { type: "integer", description: "User age", default: 30 },
          score: { type: "number", description: "User score", default: 95.5 },
          status: {
            type: "string",
            description: "User status",
            enum: ["active", "inactive", "pending"],
            default: "active",
          },
          verified: { type: "boolean", description: "Verification status", default: true },
        },
        required: [],
      },
    });
    return `Elicitation completed: action=${result.action}, content=${JSON.stringify(result.content ?? {})}`;
  },
});
