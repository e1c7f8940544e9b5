import { defineConfig } from "vitest/config";

// One `vitest run` at the root runs every workspace's suite; each workspace keeps its own config.
export default defineConfig({
  test: {
    projects: ["gateway", "framework", "operator", "e2e"],
  },
});
