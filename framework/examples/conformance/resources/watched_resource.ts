import { defineResource } from "@svc-mcp/framework";

export default defineResource({
  uri: "test://watched-resource",
  description: "A resource clients may subscribe to",
  mimeType: "text/plain",
  read: () => "Watched resource content",
});
