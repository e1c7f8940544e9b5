// The aggregate rows of the report tables, shared by train-firewall.ts and eval-firewall.ts.

import { isCleanToolOutput } from "./firewall-metrics.ts";

export const REPORT_AGGREGATES = {
  request: [
    { name: "ALL requests", includes: () => true },
    { name: "notinject (trap)", includes: (subset: string) => subset === "notinject" },
  ],
  response: [
    { name: "ALL tool outputs", includes: () => true },
    { name: "clean outputs", includes: isCleanToolOutput },
  ],
} as const;
