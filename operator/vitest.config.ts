import { defaultServerConditions } from "vite";
import { defineProject } from "vitest/config";

export default defineProject({
  // The operator imports the gateway by package name: the "svc-source" export condition resolves it to the
  // gateway's TypeScript sources (installed packages resolve to their compiled dist/ instead).
  ssr: { resolve: { conditions: ["svc-source", ...defaultServerConditions] } },
  test: {
    name: "operator",
    include: ["test/**/*.test.ts"],
    // Several tests spawn node processes (the CLIs, two operators); on a busy 2-core machine a start alone
    // can take seconds. Assertions never depend on speed; this only bounds a hang.
    testTimeout: 60_000,
  },
});
