// Capability RBAC that cannot be sidestepped by spelling, through a real gateway in front of a real MCP SDK upstream,
// with two users (readers, admins) holding tokens from the real OpenID provider. The upstream records what it
// receives: a refused request must never reach it. Raw JSON-RPC, so the exact bytes of each spelling are sent.
import { postJsonRpc } from "svc-testkit/json-rpc";
import { beforeAll, describe, expect, test, vi } from "vitest";
import { AUDIENCE, identityProvidersYaml } from "../identity/support/gateway-identity.ts";
import {
  startTestIdentityProvider,
  type TestIdentityProvider,
} from "../identity/support/test-identity-provider.ts";
import { startGatewayWithConfig, type TestGateway } from "../proxy/support/gateway.ts";
import { cleanupsAfterAll } from "../support/cleanups.ts";
import { type RecordingUpstream, startRecordingUpstream } from "./support/recording-upstream.ts";

vi.setConfig({ testTimeout: 30_000, hookTimeout: 30_000 });

const cleanup = cleanupsAfterAll();
let idp: TestIdentityProvider;
let upstream: RecordingUpstream;
let gateway: TestGateway;
const tokens: Record<"readers" | "admins", string> = { readers: "", admins: "" };

beforeAll(async () => {
  idp = await startTestIdentityProvider();
  cleanup(() => idp.close());
  upstream = await startRecordingUpstream();
  cleanup(() => upstream.close());
  gateway = await startGatewayWithConfig(`version: "1.0"
${identityProvidersYaml(idp)}servers:
  - name: closed
    url: ${JSON.stringify(upstream.url)}
    upstream_auth_type: none
    rbac_enabled: true
    allowed_groups: [readers, admins]
    capability_rbac_enabled: true
    capability_overrides:
      - capability: resources/test://static-text
        allowed_groups: [admins]
      - capability: resources/test://template/secret/data
        allowed_groups: [admins]
      - capability: "resources/test://private/{id}"
        allowed_groups: [admins]
      - capability: prompts/test_prompt_with_arguments
        allowed_groups: [admins]
  - name: open
    url: ${JSON.stringify(upstream.url)}
    upstream_auth_type: none
    capability_rbac_enabled: false
`);
  cleanup(() => gateway.close());
  for (const group of ["readers", "admins"] as const) {
    tokens[group] = await idp.token({ resource: AUDIENCE, claims: { groups: [group] } });
  }
});

interface Answer {
  status: number;
  /** The JSON-RPC error's code and data.reason, or undefined for a result. */
  error?: { code: number; reason?: string };
  result?: Record<string, unknown>;
}

let nextId = 1;

/** One JSON-RPC message (a request unless `notification`) as `user` to `server`; the answer and what reached the upstream. */
async function send(
  server: "closed" | "open",
  user: "readers" | "admins",
  method: string,
  params: unknown,
  { notification = false } = {},
): Promise<Answer & { forwarded: number }> {
  const before = upstream.received.length;
  const message = { jsonrpc: "2.0", method, params, ...(notification ? {} : { id: nextId++ }) };
  const response = await postJsonRpc(`${gateway.url}/${server}/mcp`, message, {
    authorization: `Bearer ${tokens[user]}`,
  });
  const text = await response.text();
  const body = text === "" ? undefined : (JSON.parse(text) as Record<string, unknown>);
  const error = body?.error as { code: number; data?: { reason?: string } } | undefined;
  return {
    status: response.status,
    error: error === undefined ? undefined : { code: error.code, reason: error.data?.reason },
    result: body?.result as Record<string, unknown> | undefined,
    forwarded: upstream.received.length - before,
  };
}

const FORBIDDEN = { code: -32043, reason: "capability_forbidden" };
const INVALID = { code: -32602, reason: "invalid_params" };

// Each a spelling of a URI only admins may use: test://static-text, or test://template/secret/data.
const spellings: Array<[string, string, { code: number; reason: string }]> = [
  ["an upper-case scheme", "TEST://static-text", FORBIDDEN],
  ["a leading space", " test://static-text", INVALID],
  ["a trailing space", "test://static-text ", INVALID],
  ["a tab inside", "test://static\t-text", INVALID],
  ["a newline inside", "test://static-\ntext", INVALID],
  ["a trailing NUL", "test://static-text\u0000", INVALID],
  ["a zero-width space inside", "test://static\u200b-text", INVALID],
  ["a percent-encoded NUL", "test://static-text%00", INVALID],
  ["a percent-encoded scheme letter", "%74est://static-text", FORBIDDEN],
  ["a dot segment", "test://template/public/../secret/data", FORBIDDEN],
  ["%2F around a dot segment", "test://template/public%2F..%2Fsecret/data", FORBIDDEN],
];

describe.each(["resources/read", "resources/subscribe"])("%s", (method) => {
  test.each(spellings)(
    "%s (%j) is refused for readers and never reaches the upstream",
    async (_, uri, refusal) => {
      const answer = await send("closed", "readers", method, { uri });
      expect(answer).toMatchObject({ status: 200, error: refusal, forwarded: 0 });
    },
  );

  test("admins are served (spellings an upstream resolves too, forwarded byte for byte), readers where no override restricts", async () => {
    for (const uri of ["test://static-text", "TEST://static-text", "test://template/public/../secret/data"]) {
      const answer = await send("closed", "admins", method, { uri });
      expect(answer.error).toBeUndefined();
      expect(answer.forwarded).toBe(1);
      expect(upstream.received.at(-1)?.params?.uri).toBe(uri);
    }
    // A name no upstream should be handed is refused whatever RBAC says: for admins, and with capability RBAC off.
    expect(await send("closed", "admins", method, { uri: "test://static-text\u0000" })).toMatchObject({
      error: INVALID,
      forwarded: 0,
    });
    expect(await send("open", "readers", method, { uri: " test://static-text" })).toMatchObject({
      error: INVALID,
      forwarded: 0,
    });
    const unrestricted = await send("closed", "readers", method, { uri: "test://template/public/data" });
    expect(unrestricted).toMatchObject({ status: 200, forwarded: 1 });
    expect(unrestricted.error).toBeUndefined();
  });
});

describe("prompts/get and completion/complete", () => {
  const promptArgs = { arg1: "pa", arg2: "x" };
  const completePrompt = (name: string) => ({
    ref: { type: "ref/prompt", name },
    argument: { name: "arg1", value: "pa" },
  });
  const completeTemplate = (uri: string) => ({
    ref: { type: "ref/resource", uri },
    argument: { name: "id", value: "a" },
  });

  test("naming a denied prompt or resource template is refused for readers, never reaching the upstream; admins are served", async () => {
    for (const [method, params, refusal] of [
      ["prompts/get", { name: "test_prompt_with_arguments", arguments: promptArgs }, FORBIDDEN],
      ["prompts/get", { name: "test_prompt_with_arguments ", arguments: promptArgs }, INVALID],
      ["completion/complete", completePrompt("test_prompt_with_arguments"), FORBIDDEN],
      ["completion/complete", completePrompt("test_prompt_with_arguments\u200d"), INVALID],
      ["completion/complete", completeTemplate("test://private/{id}"), FORBIDDEN],
      ["completion/complete", completeTemplate("TEST://private/{id}"), FORBIDDEN],
      ["completion/complete", completeTemplate("test://private/{id}\n"), INVALID],
    ] as const) {
      expect(
        await send("closed", "readers", method, params),
        `${method} ${JSON.stringify(params)}`,
      ).toMatchObject({ status: 200, error: refusal, forwarded: 0 });
    }
    const prompt = await send("closed", "admins", "prompts/get", {
      name: "test_prompt_with_arguments",
      arguments: promptArgs,
    });
    expect(prompt.result?.messages).toHaveLength(1);
    const byPrompt = await send(
      "closed",
      "admins",
      "completion/complete",
      completePrompt("test_prompt_with_arguments"),
    );
    expect(byPrompt.result?.completion).toMatchObject({ values: ["paris", "park", "party"] });
    const byTemplate = await send(
      "closed",
      "admins",
      "completion/complete",
      completeTemplate("test://private/{id}"),
    );
    expect(byTemplate.result?.completion).toMatchObject({ values: ["alpha"] });
  });

  test("a completion reference that names nothing is invalid params with capability RBAC on", async () => {
    const answer = await send("closed", "admins", "completion/complete", {
      ref: { type: "ref/other", name: "test_prompt_with_arguments" },
      argument: { name: "arg1", value: "" },
    });
    expect(answer).toMatchObject({ status: 200, error: INVALID, forwarded: 0 });
  });
});

describe("methods the gateway does not know", () => {
  test("an unknown request is refused with -32601 with capability RBAC on, and forwarded with it off", async () => {
    for (const method of ["svc/exfiltrate", "Resources/Read", "sampling/createMessage"]) {
      expect(await send("closed", "admins", method, { uri: "test://static-text" }), method).toMatchObject({
        status: 200,
        error: { code: -32601, reason: "unknown_method" },
        forwarded: 0,
      });
    }
    const forwarded = await send("open", "readers", "svc/exfiltrate", {});
    expect(forwarded).toMatchObject({ forwarded: 1, error: { code: -32601 } });
    expect(forwarded.error?.reason).toBeUndefined(); // the upstream's own answer, not the gateway's
  });

  test("with capability RBAC on, an unknown notification, or a request method sent as one, gets HTTP 400", async () => {
    for (const method of ["notifications/svc/unknown", "resources/read"]) {
      expect(
        await send("closed", "admins", method, { uri: "test://static-text" }, { notification: true }),
        method,
      ).toMatchObject({ status: 400, error: { code: -32601, reason: "unknown_notification" }, forwarded: 0 });
    }
    // A known notification still passes, and with capability RBAC off an unknown one too.
    expect(
      await send("closed", "readers", "notifications/initialized", undefined, { notification: true }),
    ).toMatchObject({ status: 202, forwarded: 1 });
    expect(
      await send("open", "readers", "notifications/svc/unknown", {}, { notification: true }),
    ).toMatchObject({ status: 202, forwarded: 1 });
  });

  test("with capability RBAC on, a known method without its capability param is invalid params", async () => {
    for (const [method, params] of [
      ["resources/read", {}],
      ["tools/call", { name: 42 }],
      ["prompts/get", { name: "" }],
    ] as const) {
      expect(await send("closed", "admins", method, params), method).toMatchObject({
        status: 200,
        error: INVALID,
        forwarded: 0,
      });
    }
  });
});

describe("list filtering agrees with the calls", () => {
  /** Whether the gateway refused `user` this call on RBAC grounds (the upstream may refuse for its own reasons). */
  const refusedByGateway = async (user: "readers" | "admins", method: string, params: unknown) => {
    const answer = await send("closed", user, method, params);
    return answer.error?.reason === "capability_forbidden";
  };

  const upperCaseScheme = (uri: string) => uri.replace(/^[a-z]+:/, (scheme) => scheme.toUpperCase());

  const listed = async (user: "readers" | "admins") => {
    const list = async (method: string, field: string) =>
      ((await send("closed", user, method, {})).result?.[field] ?? []) as Array<Record<string, unknown>>;
    return {
      resources: (await list("resources/list", "resources")).map((r) => r.uri as string),
      templates: (await list("resources/templates/list", "resourceTemplates")).map(
        (t) => t.uriTemplate as string,
      ),
      prompts: await list("prompts/list", "prompts"),
    };
  };

  test("readers see exactly what they may call; admins see and may call everything", async () => {
    const all = await listed("admins");
    const seen = await listed("readers");
    expect(all.resources).toContain("test://static-text");
    expect(all.templates).toContain("test://private/{id}");
    expect(seen.resources).not.toContain("test://static-text");
    expect(seen.templates).not.toContain("test://private/{id}");
    expect(seen.prompts.map((p) => p.name)).not.toContain("test_prompt_with_arguments");

    for (const user of ["readers", "admins"] as const) {
      const visible = user === "admins" ? all : seen;
      // Each URI as listed and with its scheme upper-cased: the decision must not depend on the spelling.
      for (const listedUri of all.resources) {
        for (const uri of [listedUri, upperCaseScheme(listedUri)]) {
          expect(await refusedByGateway(user, "resources/read", { uri }), `${user} ${uri}`).toBe(
            !visible.resources.includes(listedUri),
          );
        }
      }
      for (const template of all.templates) {
        const variable = /\{(\w+)\}/.exec(template)?.[1] ?? "id";
        for (const uri of [template, upperCaseScheme(template)]) {
          const params = { ref: { type: "ref/resource", uri }, argument: { name: variable, value: "" } };
          expect(await refusedByGateway(user, "completion/complete", params), `${user} ${uri}`).toBe(
            !visible.templates.includes(template),
          );
        }
      }
      const names = visible.prompts.map((p) => p.name);
      for (const prompt of all.prompts) {
        const args = Object.fromEntries(
          ((prompt.arguments ?? []) as Array<{ name: string }>).map((a) => [a.name, "x"]),
        );
        expect(
          await refusedByGateway(user, "prompts/get", { name: prompt.name, arguments: args }),
          `${user} ${String(prompt.name)}`,
        ).toBe(!names.includes(prompt.name));
      }
    }
  });
});
