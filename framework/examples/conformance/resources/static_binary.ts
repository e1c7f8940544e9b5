import { defineResource } from "@svc-mcp/framework";
import { RED_PIXEL_PNG } from "../lib/media.ts";

export default defineResource({
  uri: "test://static-binary",
  description: "A static binary resource (PNG)",
  mimeType: "image/png",
  read: () => Buffer.from(RED_PIXEL_PNG, "base64"),
});
