import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import type {
  CreateMessageRequestParams,
  CreateMessageResult,
  ElicitRequestFormParams,
  ElicitResult,
  LoggingLevel,
} from "@modelcontextprotocol/sdk/types.js";

/** What every handler (tool, resource, prompt, completion) receives beside its arguments. */
export interface RequestContext {
  /** Aborted when the client cancels the request or the connection goes away. */
  signal: AbortSignal;
  /** The MCP session id; undefined in stateless mode. */
  sessionId: string | undefined;
  /** Who called, as established by the project's auth.ts (undefined without authentication). */
  authInfo: AuthInfo | undefined;
  /** Sends a `notifications/message` log line to the client, honouring the session's `logging/setLevel`. */
  log(level: LoggingLevel, data: unknown, logger?: string): Promise<void>;
  /** Sends `notifications/progress` when the client asked for progress (a `_meta.progressToken`); else a no-op. */
  progress(progress: number, total?: number, message?: string): Promise<void>;
  /** Asks the user for input (`elicitation/create`). Throws when the client did not declare elicitation. */
  elicit(params: ElicitRequestFormParams): Promise<ElicitResult>;
  /** Asks the client's model for a completion (`sampling/createMessage`). Throws without client sampling. */
  sample(params: CreateMessageRequestParams): Promise<CreateMessageResult>;
  /** Closes the response stream of this request (the client reconnects and resumes: SSE polling). */
  closeStream(): void;
  /** Tells subscribed clients of this session that a resource changed (`notifications/resources/updated`). */
  resourceUpdated(uri: string): Promise<void>;
}

export type { LoggingLevel };
