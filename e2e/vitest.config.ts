import { defineProject } from "vitest/config";

export default defineProject({
  test: {
    name: "e2e",
    include: ["test/**/*.test.ts"],
    // The stack spawns processes (the gateway); on a busy machine a start can take seconds. This bounds a
    // hang; no assertion depends on speed.
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
