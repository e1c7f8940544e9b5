import type { CallToolResult, ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";
import type { z } from "zod";
import type { RequestContext } from "./context.ts";

/** What a tool handler may return: a string (one text block), a full CallToolResult, or any JSON value. */
export type ToolReturn =
  | string
  | CallToolResult
  | Record<string, unknown>
  | unknown[]
  | number
  | boolean
  | null;

interface ToolCommon {
  /** Overrides the name derived from the file path. */
  name?: string;
  title?: string;
  /** Required: clients show it to the model. */
  description: string;
  annotations?: ToolAnnotations;
  /** Free-form `_meta` published with the tool. */
  meta?: Record<string, unknown>;
}

export interface ZodToolDefinition<Shape extends z.ZodRawShape> extends ToolCommon {
  /** Arguments as zod fields; validated before the handler runs. */
  input?: Shape;
  handler: (args: z.infer<z.ZodObject<Shape>>, context: RequestContext) => ToolReturn | Promise<ToolReturn>;
}

export interface JsonSchemaToolDefinition extends ToolCommon {
  /** Arguments as a JSON Schema published verbatim (e.g. 2020-12 keywords); the handler validates. */
  inputSchema: Record<string, unknown> & { type: "object" };
  handler: (args: Record<string, unknown>, context: RequestContext) => ToolReturn | Promise<ToolReturn>;
}

export interface ToolComponent {
  readonly kind: "tool";
  readonly definition: ZodToolDefinition<z.ZodRawShape> | JsonSchemaToolDefinition;
}

export function defineTool(definition: JsonSchemaToolDefinition): ToolComponent;
export function defineTool<Shape extends z.ZodRawShape = Record<never, never>>(
  definition: ZodToolDefinition<Shape>,
): ToolComponent;
export function defineTool(
  definition: ZodToolDefinition<z.ZodRawShape> | JsonSchemaToolDefinition,
): ToolComponent {
  return { kind: "tool", definition };
}
