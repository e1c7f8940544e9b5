import { defineTool } from "@svc-mcp/framework";
import { SILENT_WAV } from "../lib/media.ts";

export default defineTool({
  description: "Returns audio content",
  handler: () => ({ content: [{ type: "audio", data: SILENT_WAV, mimeType: "audio/wav" }] }),
});
