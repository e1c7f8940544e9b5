import { defineTool } from "@svc-mcp/framework";

// A raw JSON Schema is published as written, so 2020-12 keywords ($schema, $defs, $ref) survive.
export default defineTool({
  description: "Tool with JSON Schema 2020-12 features",
  inputSchema: {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    $defs: {
      address: { type: "object", properties: { street: { type: "string" }, city: { type: "string" } } },
    },
    properties: { name: { type: "string" }, address: { $ref: "#/$defs/address" } },
    additionalProperties: false,
  },
  handler: (args) => `Received: ${JSON.stringify(args)}`,
});
