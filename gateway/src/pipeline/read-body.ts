// Pipeline step 4, first half: the POST body, read from the socket with a hard size limit. A declared
// Content-Length over the limit is refused before a byte is read; a chunked body is cut off as soon as it
// passes the limit. The connection is then closed, since the rest of the body is never read.
import type { IncomingMessage } from "node:http";
import { GatewayError } from "../errors/gateway-error.ts";

function tooLarge(limit: number): GatewayError {
  return new GatewayError(
    "body_too_large",
    `Request body exceeds the limit of ${limit} bytes (SVC_MAX_BODY_BYTES)`,
    {
      headers: { connection: "close" },
    },
  );
}

export function readBody(incoming: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = incoming.headers["content-length"];
  if (declared !== undefined && Number(declared) > limit) return Promise.reject(tooLarge(limit));
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = (): void => {
      incoming.off("data", onData);
      incoming.off("end", onEnd);
      incoming.off("error", onError);
      incoming.off("close", onClose);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        incoming.pause();
        reject(tooLarge(limit));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      cleanup();
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
    };
    const onError = (error: Error): void => {
      cleanup();
      reject(new GatewayError("invalid_request", "Request body could not be read", { cause: error }));
    };
    const onClose = (): void => {
      if (incoming.readableEnded) return;
      cleanup();
      reject(new GatewayError("invalid_request", "Client closed the connection while sending the body"));
    };
    incoming.on("data", onData);
    incoming.on("end", onEnd);
    incoming.on("error", onError);
    incoming.on("close", onClose);
  });
}
