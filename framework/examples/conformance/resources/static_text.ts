import { defineResource } from "@svc-mcp/framework";

export default defineResource({
  uri: "test://static-text",
  description: "A static text resource",
  mimeType: "text/plain",
  read: () => "This is the content of the static text resource.",
});
