import { defineProject } from "vitest/config";

export default defineProject({
  test: {
    name: "operator",
    include: ["test/**/*.test.ts"],
  },
});
