import { defineTool } from "@svc-mcp/framework";
import { RED_PIXEL_PNG } from "../lib/media.ts";

export default defineTool({
  description: "Returns image content",
  handler: () => ({ content: [{ type: "image", data: RED_PIXEL_PNG, mimeType: "image/png" }] }),
});
