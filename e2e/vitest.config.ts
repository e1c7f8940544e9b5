import { defaultServerConditions } from "vite";
import { defineProject } from "vitest/config";

export default defineProject({
  // The operator imports the gateway by package name: the "svc-source" export condition resolves it to the
  // gateway's TypeScript sources (installed packages resolve to their compiled dist/ instead).
  ssr: { resolve: { conditions: ["svc-source", ...defaultServerConditions] } },
  test: {
    name: "e2e",
    include: ["test/**/*.test.ts"],
    // The stack spawns processes (the gateway); on a busy machine a start can take seconds. This bounds a
    // hang; no assertion depends on speed.
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
