import { defineTool, z } from "@svc-mcp/framework";
import { greeting } from "../lib/greeting.ts";

// The tool's name comes from the file path: tools/hello.ts → "hello" (set `name` to override).
export default defineTool({
  description: "Greets someone by name.",
  input: {
    name: z.string().min(1).describe("Who to greet"),
    excited: z.boolean().default(false).describe("End with an exclamation mark"),
  },
  annotations: { readOnlyHint: true, openWorldHint: false },
  handler: async ({ name, excited }, context) => {
    await context.log("info", `greeting ${name}`);
    return greeting(name, excited);
  },
});
