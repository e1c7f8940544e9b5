import { defineProject } from "vitest/config";

export default defineProject({
  test: {
    name: "gateway",
    include: ["test/**/*.test.ts"],
    // Many tests spawn node processes (the CLI, servers, the gateway); on a busy 2-core machine four
    // spawns alone can take more than vitest's default 5 s. This only bounds a hang: no assertion depends
    // on speed. A test that needs longer still names its own timeout.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
