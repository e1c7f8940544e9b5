// PLACEHOLDER until the webhook detector lands.
import type { Detector } from "./detector.ts";

export function webhookDetector(options: {
  name: string;
  url: string;
  timeoutMs: number;
  headers?: Record<string, string>;
}): Detector {
  return { name: `webhook:${options.name}`, score: async () => ({ score: 0 }) };
}
