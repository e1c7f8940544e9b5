import type { GetPromptResult, PromptMessage } from "@modelcontextprotocol/sdk/types.js";
import type { z } from "zod";
import type { RequestContext } from "./context.ts";
import type { Completer } from "./resource.ts";

/** A string (one user text message), a list of messages, or a full GetPromptResult. */
export type PromptReturn = string | PromptMessage[] | GetPromptResult;

/** Prompt arguments are strings on the wire; optional ones may be absent. */
export type PromptArgumentShape = Record<string, z.ZodString | z.ZodOptional<z.ZodString>>;

export interface PromptDefinition<Shape extends PromptArgumentShape> {
  name?: string;
  title?: string;
  description: string;
  /** Each argument's `.describe()` text is published; `.optional()` makes it not required. */
  arguments?: Shape;
  render: (
    args: z.infer<z.ZodObject<Shape>>,
    context: RequestContext,
  ) => PromptReturn | Promise<PromptReturn>;
  complete?: Partial<Record<keyof Shape & string, Completer>>;
  meta?: Record<string, unknown>;
}

export interface PromptComponent {
  readonly kind: "prompt";
  readonly definition: PromptDefinition<PromptArgumentShape>;
}

export function definePrompt<Shape extends PromptArgumentShape = Record<never, never>>(
  definition: PromptDefinition<Shape>,
): PromptComponent {
  return { kind: "prompt", definition: definition as unknown as PromptDefinition<PromptArgumentShape> };
}
