// Custom rules: each method, keyed hashing, and the problems a rule can have at compile time.
import { describe, expect, test } from "vitest";
import { compiled, HASH_KEY, problemsOf } from "./support/compile.ts";

const rule = (method: string, extra: Record<string, unknown> = {}) =>
  compiled([{ enabled: true, custom_rules: [{ pattern: "EMP-[0-9]{6}", method, ...extra }] }]);

describe("custom rule methods", () => {
  test("mask: a fixed [MASKED] that does not reveal the length", () => {
    const result = rule("mask").scrubText("badge EMP-123456 and EMP-654321");
    expect(result.value).toBe("badge [MASKED] and [MASKED]");
    expect(result.counts).toEqual({ "custom_rules[0]": 2 });
  });

  test("remove: the match disappears", () => {
    expect(rule("remove").scrubText("badge EMP-123456.").value).toBe("badge .");
  });

  test("replace: the replacement, literally ($1 is not a group reference)", () => {
    expect(rule("replace", { replacement: "<$1 employee>" }).scrubText("badge EMP-123456").value).toBe(
      "badge <$1 employee>",
    );
  });

  test("hash: <hash:16 hex>, the same for the same value and key, different for another key or value", () => {
    const hashed = rule("hash").scrubText("EMP-123456 EMP-123456 EMP-999999").value;
    const [first, second, third] = hashed.split(" ");
    expect(first).toMatch(/^<hash:[0-9a-f]{16}>$/);
    expect(second).toBe(first);
    expect(third).not.toBe(first);
    // Stable across compilations with the same key; the value is HMAC-SHA-256 as Python's hmac module computes it.
    expect(rule("hash").scrubText("EMP-123456").value).toBe(first);
    expect(first).toBe("<hash:d5b67b0db4e8418f>");
    const otherKey = compiled(
      [{ enabled: true, custom_rules: [{ pattern: "EMP-[0-9]{6}", method: "hash" }] }],
      {
        hashKey: `${HASH_KEY}-rotated`,
      },
    );
    expect(otherKey.scrubText("EMP-123456").value).not.toBe(first);
  });

  test("rules are RE2: (?i) makes them case-insensitive", () => {
    const scrubbing = compiled([
      { enabled: true, custom_rules: [{ pattern: "(?i)secret-[a-z]+", method: "mask" }] },
    ]);
    expect(scrubbing.scrubText("SECRET-abc and secret-XYZ").value).toBe("[MASKED] and [MASKED]");
  });

  test("a rule and a recognizer on the same span: the rule wins the tie", () => {
    const scrubbing = compiled([
      {
        enabled: true,
        custom_rules: [{ pattern: "[a-z]+@example\\.org", method: "replace", replacement: "<STAFF>" }],
      },
    ]);
    expect(scrubbing.scrubText("mail jane@example.org").value).toBe("mail <STAFF>");
  });
});

describe("compile problems", () => {
  test("a pattern re2js cannot run names the rule and why: backreference, lookaround", () => {
    expect(
      problemsOf(
        [
          {
            custom_rules: [
              { pattern: "ok", method: "mask" },
              { pattern: "(a)\\1", method: "mask" },
            ],
          },
        ],
        {
          layerPaths: ["gateway_policy.scrubbing"],
        },
      ),
    ).toEqual([
      {
        path: "gateway_policy.scrubbing.custom_rules[1].pattern",
        message:
          "is not a valid RE2 pattern (invalid escape sequence: `\\1`: backreferences are not supported, matching must stay linear-time)",
      },
    ]);
    expect(problemsOf([{ custom_rules: [{ pattern: "a(?=b)", method: "mask" }] }])[0]?.message).toMatch(
      /lookahead and lookbehind are not supported/,
    );
  });

  test("a pattern that matches the empty string is refused", () => {
    expect(problemsOf([{ custom_rules: [{ pattern: "x*", method: "mask" }] }])).toEqual([
      {
        path: "layers[0].custom_rules[0].pattern",
        message: "matches the empty string, so it would scrub nothing",
      },
    ]);
  });

  test("a hash rule without SVC_SCRUB_HASH_KEY names the rule and the variable; a short key is refused", () => {
    const layers = [{}, { custom_rules: [{ pattern: "EMP-[0-9]+", method: "hash" }] }];
    const paths = { layerPaths: ["organization", "servers[2].security"] };
    expect(problemsOf(layers, paths)).toEqual([
      {
        path: "servers[2].security.custom_rules[0].method",
        message: "hash needs a per-deployment key: set the environment variable SVC_SCRUB_HASH_KEY",
      },
    ]);
    expect(problemsOf(layers, { ...paths, hashKey: "short" })[0]?.message).toBe(
      "hash needs SVC_SCRUB_HASH_KEY of at least 32 characters (it has 5)",
    );
  });

  test("a recognizer the engine does not have is a problem, not silently ignored", () => {
    expect(problemsOf([{ recognizers: [{ entity_type: "PERSON" }] }])).toEqual([
      {
        path: "layers[0].recognizers[0].entity_type",
        message: expect.stringMatching(
          /^no built-in recognizer for PERSON; known: EMAIL_ADDRESS, CREDIT_CARD/,
        ),
      },
    ]);
  });
});
