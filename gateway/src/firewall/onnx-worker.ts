// The worker thread that owns one ONNX detector's model: onnxruntime-node runs an inference synchronously, so in
// the gateway's main thread every inference would stop all other traffic for its duration. Here it only holds up
// the next text for the same model. Messages: the detector posts {id, text}; the worker answers {id, logits} or
// {id, error}, after a first {ready} or {failed} once the model is loaded.
import { parentPort, workerData } from "node:worker_threads";
import { loadOnnxModel, MissingDependencyError, messageOf, type OnnxModelFiles } from "./onnx-model.ts";

export interface ScoreRequest {
  readonly id: number;
  readonly text: string;
}

/** Asks the worker to release the model and end on its own: terminating a thread inside onnxruntime's native code can
 * abort the whole process. */
export interface CloseRequest {
  readonly type: "close";
}

export type WorkerMessage =
  | { readonly type: "ready" }
  | { readonly type: "failed"; readonly message: string; readonly missingDependency: boolean }
  | { readonly type: "logits"; readonly id: number; readonly logits: Float32Array }
  | { readonly type: "error"; readonly id: number; readonly message: string };

const port = parentPort;
if (port === null) throw new Error("onnx-worker.ts runs only as a worker thread");
const post = (message: WorkerMessage): void => port.postMessage(message);

try {
  const model = await loadOnnxModel(workerData as OnnxModelFiles);
  port.on("message", async (request: ScoreRequest | CloseRequest) => {
    if ("type" in request) {
      await model.release().catch(() => {});
      port.close(); // nothing left to listen to: the thread ends
      return;
    }
    const { id, text } = request;
    try {
      post({ type: "logits", id, logits: await model.logits(text) });
    } catch (error) {
      post({ type: "error", id, message: messageOf(error) });
    }
  });
  post({ type: "ready" });
} catch (error) {
  post({
    type: "failed",
    message: messageOf(error),
    missingDependency: error instanceof MissingDependencyError,
  });
}
