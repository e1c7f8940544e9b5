import { defineResource } from "@svc-mcp/framework";

export default defineResource({
  uri: "test://template/{id}/data",
  description: "A resource template with an id parameter",
  mimeType: "application/json",
  read: (uri, { id }) => ({
    contents: [
      {
        uri,
        mimeType: "application/json",
        text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }),
      },
    ],
  }),
  complete: { id: (value) => ["123", "456", "789"].filter((id) => id.startsWith(value)) },
});
