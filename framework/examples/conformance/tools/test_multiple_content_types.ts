import { defineTool } from "@svc-mcp/framework";
import { RED_PIXEL_PNG } from "../lib/media.ts";

export default defineTool({
  description: "Returns text, image and resource content together",
  handler: () => ({
    content: [
      { type: "text", text: "Multiple content types test:" },
      { type: "image", data: RED_PIXEL_PNG, mimeType: "image/png" },
      {
        type: "resource",
        resource: {
          uri: "test://mixed-content-resource",
          mimeType: "application/json",
          text: JSON.stringify({ test: "data", value: 123 }),
        },
      },
    ],
  }),
});
