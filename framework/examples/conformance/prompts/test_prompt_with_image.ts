import { definePrompt } from "@svc-mcp/framework";
import { RED_PIXEL_PNG } from "../lib/media.ts";

export default definePrompt({
  description: "A prompt with image content",
  render: () => [
    { role: "user", content: { type: "image", data: RED_PIXEL_PNG, mimeType: "image/png" } },
    { role: "user", content: { type: "text", text: "Please analyze the image above." } },
  ],
});
