import type { CallToolResult, GetPromptResult, ReadResourceResult } from "@modelcontextprotocol/sdk/types.js";
import type { PromptReturn } from "../define/prompt.ts";
import type { ResourceReturn } from "../define/resource.ts";
import type { ToolReturn } from "../define/tool.ts";

// Handlers may return the simple forms README "Components" lists; these turn them into protocol results.

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function toToolResult(value: ToolReturn): CallToolResult {
  if (typeof value === "string") return { content: [{ type: "text", text: value }] };
  if (isObject(value) && Array.isArray(value.content)) return value as CallToolResult;
  const text = JSON.stringify(value) ?? "null";
  if (isObject(value)) return { content: [{ type: "text", text }], structuredContent: value };
  return { content: [{ type: "text", text }] };
}

export function toResourceResult(
  value: ResourceReturn,
  uri: string,
  mimeType: string | undefined,
): ReadResourceResult {
  if (typeof value === "string")
    return { contents: [{ uri, mimeType: mimeType ?? "text/plain", text: value }] };
  if (value instanceof Uint8Array) {
    const blob = Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString("base64");
    return { contents: [{ uri, mimeType: mimeType ?? "application/octet-stream", blob }] };
  }
  if (isObject(value) && Array.isArray(value.contents)) return value as ReadResourceResult;
  return { contents: [{ uri, mimeType: mimeType ?? "application/json", text: JSON.stringify(value) }] };
}

export function toPromptResult(value: PromptReturn, description: string): GetPromptResult {
  if (typeof value === "string") {
    return { description, messages: [{ role: "user", content: { type: "text", text: value } }] };
  }
  if (Array.isArray(value)) return { description, messages: value };
  return { description, ...value };
}
