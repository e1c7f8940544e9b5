import { defineTool } from "@svc-mcp/framework";
import { sleep } from "../lib/media.ts";

// SSE polling (SEP-1699): close this request's stream mid-call; the client reconnects with Last-Event-ID and
// receives the result from the server's event store.
export default defineTool({
  description: "Closes the SSE stream mid-call to test client reconnection",
  handler: async (_args, context) => {
    await sleep(100);
    context.closeStream();
    await sleep(200);
    return "Reconnection test completed successfully";
  },
});
