// Public API of `svc`: what a project's components, health.ts and readiness.ts import.
export { z } from "zod";
export type { CheckResult } from "./define/check.ts";
export { jsonResponse } from "./define/check.ts";
export type { LoggingLevel, RequestContext } from "./define/context.ts";
export type {
  PromptArgumentShape,
  PromptComponent,
  PromptDefinition,
  PromptReturn,
} from "./define/prompt.ts";
export { definePrompt } from "./define/prompt.ts";
export type { Completer, ResourceComponent, ResourceDefinition, ResourceReturn } from "./define/resource.ts";
export { defineResource } from "./define/resource.ts";
export type {
  JsonSchemaToolDefinition,
  ToolComponent,
  ToolReturn,
  ZodToolDefinition,
} from "./define/tool.ts";
export { defineTool } from "./define/tool.ts";
