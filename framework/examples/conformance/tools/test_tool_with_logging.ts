import { defineTool } from "@svc-mcp/framework";
import { sleep } from "../lib/media.ts";

export default defineTool({
  description: "Sends log notifications while it runs",
  handler: async (_args, context) => {
    await context.log("info", "Tool execution started");
    await sleep(50);
    await context.log("info", "Tool processing data");
    await sleep(50);
    await context.log("info", "Tool execution completed");
    return "Tool with logging executed successfully";
  },
});
