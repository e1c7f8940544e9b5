import { defineProject } from "vitest/config";

export default defineProject({
  test: {
    name: "framework",
    include: ["test/**/*.test.ts"],
  },
});
