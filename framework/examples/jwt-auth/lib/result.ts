import type { ToolReturn } from "@svc-mcp/framework";
import { ForbiddenError } from "./caller.ts";

/** Runs a tool body; refusals and upstream failures become tool errors the model can read. */
export async function toolResult(run: () => Promise<ToolReturn>): Promise<ToolReturn> {
  try {
    return await run();
  } catch (error) {
    const prefix = error instanceof ForbiddenError ? "Forbidden" : "Failed";
    return { isError: true, content: [{ type: "text", text: `${prefix}: ${(error as Error).message}` }] };
  }
}
