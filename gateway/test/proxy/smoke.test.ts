import { afterAll, expect, test } from "vitest";
import { connectClient, startTestGateway } from "./support/gateway.ts";
import { startUpstream } from "./support/upstream.ts";

test("smoke", async () => {
  const upstream = await startUpstream({ stateful: true });
  const gw = await startTestGateway([{ name: "up", url: upstream.url }], { LOG_LEVEL: "debug" });
  afterAll(async () => {
    await gw.close();
    await upstream.close();
  });
  const { client } = await connectClient(`${gw.url}/up/mcp`);
  const tools = await client.listTools();
  expect(tools.tools.map((t) => t.name)).toContain("echo");
  const result = await client.callTool({ name: "echo", arguments: { text: "hi" } });
  expect(result.content).toEqual([{ type: "text", text: "hi" }]);
  await client.close();
});
