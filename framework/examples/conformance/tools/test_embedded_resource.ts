import { defineTool } from "@svc-mcp/framework";

export default defineTool({
  description: "Returns an embedded resource",
  handler: () => ({
    content: [
      {
        type: "resource",
        resource: {
          uri: "test://embedded-resource",
          mimeType: "text/plain",
          text: "This is an embedded resource content.",
        },
      },
    ],
  }),
});
