import { defineTool } from "@svc-mcp/framework";
import { sleep } from "../lib/media.ts";

export default defineTool({
  description: "Reports progress notifications",
  handler: async (_args, context) => {
    await context.progress(0, 100);
    await sleep(50);
    await context.progress(50, 100);
    await sleep(50);
    await context.progress(100, 100);
    return "Tool with progress executed successfully";
  },
});
