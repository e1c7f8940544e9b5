import { describe, expect, test } from "vitest";
import { stringify } from "yaml";
import { type ServerConfig, validateConfigText } from "../../src/config/index.ts";
import { canonicalUri, removeDotSegments, textProblem } from "../../src/mcp/canonical-form.ts";
import type { Capability } from "../../src/rbac/capability.ts";
import { decide } from "../../src/rbac/decide.ts";
import { filterListResult } from "../../src/rbac/filter-list.ts";

// The canonical form of capability names and resource URIs, the refusals, and the decision over every reading.

describe("canonicalUri (RFC 3986 section 6.2.2)", () => {
  test.each([
    // scheme and host case
    ["TEST://static-text", "test://static-text"],
    ["HTTPS://User:Pw@Example.COM:8443/Path/A?Q=1#Frag", "https://User:Pw@example.com:8443/Path/A?Q=1#Frag"],
    ["Urn:ISBN:0451450523", "urn:ISBN:0451450523"],
    // percent-encodings of unreserved characters decoded, the others kept with upper-case hex
    ["%74est://x/%7euser/%41%2d%5F%2E%30", "test://x/~user/A-_.0"],
    ["test://x/a%2fb%3a%c3%a9%20c", "test://x/a%2Fb%3A%C3%A9%20c"],
    ["test://Ex%c3%a9MPLE/a", "test://ex%C3%A9mple/a"],
    // dot segments removed from hierarchical paths
    ["test://x/a/../secret", "test://x/secret"],
    ["test://x/a/b/c/./../../g", "test://x/a/g"],
    ["test://x/%2E%2E/%2e/secret", "test://x/secret"],
    ["test://x/../../secret", "test://x/secret"],
    ["test://x/a/..", "test://x/"],
    ["/a/./b/../c", "/a/c"],
    ["file:///etc/./passwd", "file:///etc/passwd"],
    // …but not from opaque paths, and nothing else is touched
    ["urn:a:../b", "urn:a:../b"],
    ["a/../b", "a/../b"],
    ["test://x/a%2F..%2Fsecret", "test://x/a%2F..%2Fsecret"],
    ["file:///logs/{date}", "file:///logs/{date}"],
    ["file:///secrets/*", "file:///secrets/*"],
  ])("%j → %j", (uri, canonical) => {
    expect(canonicalUri(uri)).toBe(canonical);
    expect(canonicalUri(canonical)).toBe(canonical); // idempotent
  });

  /** RFC 3986 section 5.2.4 as written: the reference the one-pass version must agree with. */
  function rfcRemoveDotSegments(path: string): string {
    let input = path;
    let output = "";
    while (input !== "") {
      if (input.startsWith("../")) input = input.slice(3);
      else if (input.startsWith("./")) input = input.slice(2);
      else if (input.startsWith("/./")) input = input.slice(2);
      else if (input === "/.") input = "/";
      else if (input.startsWith("/../") || input === "/..") {
        input = input === "/.." ? "/" : input.slice(3);
        output = output.slice(0, Math.max(0, output.lastIndexOf("/")));
      } else if (input === "." || input === "..") input = "";
      else {
        const next = input.indexOf("/", 1);
        const segment = next === -1 ? input : input.slice(0, next);
        output += segment;
        input = input.slice(segment.length);
      }
    }
    return output;
  }

  test("removeDotSegments agrees with the RFC's algorithm on every path of up to 7 characters from / . a", () => {
    const alphabet = ["/", ".", "a"];
    let paths = [""];
    let checked = 0;
    for (let length = 1; length <= 7; length++) {
      paths = paths.flatMap((p) => alphabet.map((c) => p + c));
      for (const path of paths.filter((p) => p.startsWith("/"))) {
        expect(removeDotSegments(path), path).toBe(rfcRemoveDotSegments(path));
        checked++;
      }
    }
    expect(checked).toBe(1093);
  });
});

describe("textProblem: refused outright", () => {
  test.each([
    ["params.uri", "", "resources", "params.uri is empty"],
    ["params.uri", " test://x", "resources", "params.uri starts with white space (U+0020)"],
    ["params.uri", "test://x ", "resources", "params.uri ends with white space (U+0020)"],
    ["params.uri", "test://x\u00a0", "resources", "params.uri ends with white space (U+00A0)"],
    ["params.uri", "test://a\tb", "resources", "params.uri contains a control character (U+0009) at index 8"],
    ["params.uri", "test://a\nb", "resources", "params.uri contains a control character (U+000A) at index 8"],
    [
      "params.uri",
      "test://x\u0000",
      "resources",
      "params.uri contains a control character (U+0000) at index 8",
    ],
    ["params.name", "a\u007f", "tools", "params.name contains a control character (U+007F) at index 1"],
    ["params.name", "a\u0085b", "tools", "params.name contains a control character (U+0085) at index 1"],
    ["params.name", "de\u200bploy", "tools", "params.name contains a format character (U+200B) at index 2"],
    ["params.name", "\ufeffdeploy", "prompts", "params.name contains a format character (U+FEFF) at index 0"],
    ["params.name", "a\u202eb", "prompts", "params.name contains a format character (U+202E) at index 1"],
    [
      "params.name",
      "a\u2028b",
      "tools",
      "params.name contains a line or paragraph separator (U+2028) at index 1",
    ],
    ["params.name", "a\ud800b", "tools", "params.name contains a lone surrogate (U+D800) at index 1"],
    ["params.name", "a\udc00", "tools", "params.name contains a lone surrogate (U+DC00) at index 1"],
    [
      "params.uri",
      "test://x%00",
      "resources",
      "params.uri percent-decoded contains a control character (U+0000) at index 8",
    ],
    [
      "params.uri",
      "test://a%E2%80%8Bb",
      "resources",
      "params.uri percent-decoded contains a format character (U+200B) at index 8",
    ],
    ["params.uri", "%20test://x", "resources", "params.uri percent-decoded starts with white space (U+0020)"],
    ["params.uri", "test://x/%zz", "resources", "params.uri has a % that is not followed by two hex digits"],
    ["params.uri", "test://x/%4", "resources", "params.uri has a % that is not followed by two hex digits"],
    ["params.uri", "test://x/%C3", "resources", "params.uri has percent-encoded octets that are not UTF-8"],
    [
      "params.uri",
      "test://x/a%2525252541",
      "resources",
      "params.uri is percent-encoded more than 4 levels deep",
    ],
    [
      "params.uri",
      "test://x%2500",
      "resources",
      "params.uri percent-decoded contains a control character (U+0000) at index 8",
    ],
  ] as const)("%s %j", (field, text, kind, problem) => {
    expect(textProblem(field, text, kind)).toBe(problem);
  });

  test.each([
    ["test://static-text", "resources"],
    ["file:///caf%C3%A9.txt", "resources"],
    ["file:///café/my notes.txt", "resources"],
    ["test://template/{id}/data", "resources"],
    ["résumé 😀", "prompts"],
    ["a%00", "tools"], // names are not percent-decoded by anyone: %00 is three plain characters
  ] as const)("accepted: %j", (text, kind) => {
    expect(textProblem("params.name", text, kind)).toBeUndefined();
  });
});

function serverWith(overrides: Array<Record<string, unknown>>): ServerConfig {
  const result = validateConfigText(
    stringify({
      version: "1.0",
      servers: [
        {
          name: "s",
          url: "http://127.0.0.1:1/mcp",
          upstream_auth_type: "none",
          capability_rbac_enabled: true,
          capability_overrides: overrides,
        },
      ],
    }),
    { env: {} },
  );
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  const [server] = result.config.servers;
  if (server === undefined) throw new Error("no server");
  return server;
}

describe("the decision over every reading", () => {
  const server = serverWith([
    { capability: "resources/test://x/secret", allowed_groups: ["admins"] },
    { capability: "resources/test://x/vault/*", allowed_groups: ["admins"] },
    { capability: "resources/test://private/{id}", allowed_groups: ["admins"] },
    { capability: "resources/https://example.com/secret", allowed_groups: ["admins"] },
    { capability: "resources/file:///caf%C3%A9.txt", allowed_groups: ["admins"] },
    { capability: "resources/TEST://Upper/Case", allowed_groups: ["admins"] },
    { capability: "prompts/cafe\u0301", allowed_groups: ["admins"] }, // decomposed é in the file
  ]);
  const policy = validateConfigText('version: "1.0"\nservers: []\n', { env: {} });
  if (!policy.ok) throw new Error("policy");
  const decideFor = (groups: string[], capability: Capability) =>
    decide(server, policy.config.gateway_policy, groups, capability);
  const resource = (name: string): Capability => ({ kind: "resources", name });

  // Each row is refused by the reading named (the first that refuses it; in RFC 3986 normal form: by that alone).
  test.each([
    ["RFC 3986 normal form", "TEST://x/%73ecret", "in RFC 3986 normal form"],
    ["the pattern's normal form", "test://upper/Case", "in RFC 3986 normal form"],
    ["as sent (a plain key under a denied prefix)", "test://x/vault/../public", "as sent"],
    ["percent-decoded (%2F)", "test://x/public%2F..%2Fsecret", "percent-decoded"],
    ["percent-decoded twice (%252F)", "test://x/public%252F..%252Fsecret", "percent-decoded"],
    ["backslash as slash", "test://x/public%5C..%5Csecret", "percent-decoded with \\ as /"],
    ["WHATWG URL (default port)", "https://example.com:443/secret", "as a WHATWG URL"],
    ["IRI to URI", "file:///café.txt", "percent-decoded"],
  ])("%s: %j", (_, uri, reading) => {
    const refused = decideFor(["readers"], resource(uri));
    expect(refused.allowed).toBe(false);
    if (reading !== "in RFC 3986 normal form") expect(refused.reason).toContain(`(read ${reading})`);
    expect(decideFor(["admins"], resource(uri)).allowed).toBe(true);
  });

  test("template variables match one segment in every reading, also the template itself", () => {
    expect(decideFor(["readers"], resource("test://private/{id}")).allowed).toBe(false);
    expect(decideFor(["readers"], resource("test://private/a%2Fb")).allowed).toBe(false);
    expect(decideFor(["readers"], resource("TEST://PRIVATE/7")).allowed).toBe(false);
    expect(decideFor(["readers"], resource("test://private/a/b")).allowed).toBe(true); // not the template
  });

  test("names: a prompt written decomposed in the file governs the composed spelling, and the other way round", () => {
    expect(decideFor(["readers"], { kind: "prompts", name: "café" }).allowed).toBe(false);
    expect(decideFor(["readers"], { kind: "prompts", name: "cafe\u0301" }).allowed).toBe(false);
    expect(decideFor(["readers"], { kind: "prompts", name: "cafe" }).allowed).toBe(true);
  });

  test("what every reading admits is admitted, under the canonical reading's rule", () => {
    expect(decideFor(["readers"], resource("test://x/public"))).toEqual({
      allowed: true,
      rule: "none",
      reason: "no RBAC rule applies",
    });
    expect(decideFor(["admins"], resource("TEST://x/secret"))).toMatchObject({
      allowed: true,
      rule: "override:resources/test://x/secret",
    });
  });

  test("list filtering hides what a call would be refused: denied under a reading, or not a name at all", () => {
    const check = (capability: Capability) => decideFor(["readers"], capability).allowed;
    const result = {
      resources: [
        { uri: "test://x/public" },
        { uri: "TEST://x/secret" },
        { uri: "test://x/public%2F..%2Fsecret" },
        { uri: "test://x/public\u0000" },
        { uri: "test://x/pub\u200blic" },
      ],
    };
    expect(filterListResult("resources/list", result, check)).toEqual({
      resources: [{ uri: "test://x/public" }],
    });
  });
});
