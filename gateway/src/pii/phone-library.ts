// libphonenumber-js with its "max" metadata (Google's libphonenumber ranges, so validity means an assigned range, not
// just a plausible length), the largest library the scrubber uses: loaded when a configuration turns the phone-number
// recognizer on (compile.ts), so a gateway that never scans for phone numbers does not carry it in memory.
//
// The library tests a number against its metadata's patterns with `new RegExp("^(?:" + pattern + ")$")` on every
// test: building and looking up a RegExp from a pattern of up to some kilobytes is about half of a parse (4-12 µs of
// a 6-20 µs parse). Its one helper for that is swapped for one that builds each pattern's RegExp once. The RegExp
// is the same, has no flags (no lastIndex state), so every answer is the same; the patterns come from the metadata,
// a fixed set, which bounds what is kept (about 2,600 patterns, each compiled only when first used).

import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { parsePhoneNumberFromString } from "libphonenumber-js/max";

export type ParsePhoneNumber = typeof parsePhoneNumberFromString;

let parsePhoneNumber: ParsePhoneNumber | undefined;

/** libphonenumber-js/max's parsePhoneNumberFromString, loaded (synchronously: it is plain CommonJS) on first use. */
export function loadPhoneNumberLibrary(): ParsePhoneNumber {
  if (parsePhoneNumber === undefined) {
    const require = createRequire(import.meta.url);
    const library = require("libphonenumber-js/max") as typeof import("libphonenumber-js/max");
    compileEachPatternOnce(require);
    parsePhoneNumber = library.parsePhoneNumberFromString;
  }
  return parsePhoneNumber;
}

/** The library's module every pattern test goes through (the exports of its CommonJS build). */
interface PatternHelperModule {
  default: (text: string | undefined, pattern: string) => boolean;
}

function compileEachPatternOnce(require: NodeJS.Require): void {
  // The helper is not among the package's exports, so it is required by its file next to the entry point: the same
  // file, hence the same module instance, that the library's own requires load.
  const file = join(dirname(require.resolve("libphonenumber-js/max")), "../build/helpers/matchesEntirely.js");
  const helper = require(file) as PatternHelperModule;
  if (typeof helper.default !== "function" || helper.default.name !== "matchesEntirely")
    throw new Error(`libphonenumber-js changed: ${file} does not export its matchesEntirely helper`);
  const compiled = new Map<string, RegExp>();
  helper.default = (text, pattern) => {
    let regExp = compiled.get(pattern);
    if (regExp === undefined) {
      regExp = new RegExp(`^(?:${pattern})$`);
      compiled.set(pattern, regExp);
    }
    return regExp.test(text || "");
  };
}
