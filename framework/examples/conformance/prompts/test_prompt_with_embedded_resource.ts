import { definePrompt, z } from "@svc-mcp/framework";

export default definePrompt({
  description: "A prompt embedding a resource",
  arguments: { resourceUri: z.string().describe("URI of the resource to embed") },
  render: ({ resourceUri }) => [
    {
      role: "user",
      content: {
        type: "resource",
        resource: {
          uri: resourceUri,
          mimeType: "text/plain",
          text: "Embedded resource content for testing.",
        },
      },
    },
    { role: "user", content: { type: "text", text: "Please process the embedded resource above." } },
  ],
});
