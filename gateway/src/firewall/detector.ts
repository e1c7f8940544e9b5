// What every prompt-injection detector answers, whichever runs it: the built-in classifier (in process), a webhook
// (another service), a model file supplied by the gateway's operator. The firewall inspector asks each configured
// detector about each text it inspects and compares the score with the threshold of the direction.

/** `request`: text a client sends (tool arguments, prompt arguments, completions). `response`: text an upstream
 * sends back (tool results, resources, prompt messages, sampling requests). */
export type FirewallDirection = "request" | "response";

export interface Detection {
  /** 0..1: how sure the detector is that the text carries an injection. 0.5 is each detector's own default cut. */
  readonly score: number;
  /** Names of the rules that fired (the built-in's wrapper rules, a webhook's labels), for the audit record. */
  readonly rules?: readonly string[];
}

export interface Detector {
  /** For audit, metrics and `inspect` findings: `builtin`, `webhook:<name>`, `onnx:<name>`. */
  readonly name: string;
  /**
   * Scores one text. May answer synchronously (in-process models) or with a promise (remote detectors). A detector
   * that cannot answer (timeout, outage, bad answer) throws DetectorUnavailableError; the firewall then fails open
   * or closed as configured.
   */
  score(text: string, direction: FirewallDirection): Detection | Promise<Detection>;
  /** Releases what the detector holds (sockets, sessions) when a new configuration replaces it. */
  close?(): Promise<void>;
}

/** A detector could not give an answer; `reason` says why in words an operator can act on. */
export class DetectorUnavailableError extends Error {
  readonly detector: string;
  constructor(detector: string, reason: string, options?: { cause?: unknown }) {
    super(`Prompt-injection detector '${detector}' gave no answer: ${reason}`, options);
    this.name = "DetectorUnavailableError";
    this.detector = detector;
  }
}
