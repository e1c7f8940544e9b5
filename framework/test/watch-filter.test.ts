// Which file changes make `svc dev` rebuild: sources yes; build output, packages and editor temp files no.
import { describe, expect, it } from "vitest";
import { isSourceChange } from "../src/cli/watch-filter.ts";

describe("isSourceChange", () => {
  it("rebuilds for project sources, settings and .env", () => {
    for (const path of ["tools/hello.ts", "lib/x.mjs", "auth.ts", "svc.json", ".env", "tools\\\\win.ts"]) {
      expect(isSourceChange(path), path).toBe(true);
    }
  });

  it("ignores build output, installed packages, state and git", () => {
    for (const path of [
      "dist/server.mjs",
      "node_modules/zod/index.js",
      ".svc/clients.json",
      ".git/index",
      "dist",
    ]) {
      expect(isSourceChange(path), path).toBe(false);
    }
  });

  it("ignores the files editors write beside the one being edited", () => {
    for (const path of [
      "tools/.hello.ts.swp",
      "tools/.hello.ts.swo",
      "tools/.hello.ts.swx",
      "4913",
      "tools/4913",
      "tools/hello.ts~",
      "tools/.#hello.ts",
      "tools/#hello.ts#",
      "tools/hello.ts___jb_tmp___",
      "tools/hello.ts.tmp",
    ]) {
      expect(isSourceChange(path), path).toBe(false);
    }
  });
});
