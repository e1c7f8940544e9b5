import { defineProject } from "vitest/config";

export default defineProject({
  test: {
    name: "operator",
    include: ["test/**/*.test.ts"],
    // Several tests spawn node processes (the CLIs, two operators); on a busy 2-core machine a start alone
    // can take seconds. Assertions never depend on speed; this only bounds a hang.
    testTimeout: 60_000,
  },
});
