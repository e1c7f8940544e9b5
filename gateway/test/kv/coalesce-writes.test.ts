import { once } from "node:events";
import { connect, createServer, type Server, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { coalesceWritesThisTurn } from "../../src/kv/coalesce-writes.ts";

let server: Server | undefined;
let client: Socket | undefined;

afterEach(async () => {
  client?.destroy();
  server?.close();
  if (server) await once(server, "close");
  server = undefined;
  client = undefined;
});

/** A loopback connection and everything its server end receives, chunk by chunk. */
async function connection(): Promise<{ socket: Socket; received: string[] }> {
  const received: string[] = [];
  server = createServer((peer) => peer.on("data", (chunk: Buffer) => received.push(chunk.toString())));
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  client = connect(address.port, "127.0.0.1");
  await once(client, "connect");
  return { socket: client, received };
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe("coalesceWritesThisTurn", () => {
  it("holds what one turn writes and sends it, in order, once the turn's I/O callbacks have run", async () => {
    const { socket, received } = await connection();
    coalesceWritesThisTurn(socket);
    socket.write("a");
    coalesceWritesThisTurn(socket);
    socket.write("b");
    socket.write("c");
    // Corked once however often it is called in the turn, and nothing has left yet.
    expect(socket.writableCorked).toBe(1);
    expect(socket.writableLength).toBe(3);
    await nextTurn();
    expect(socket.writableCorked).toBe(0);
    await expect.poll(() => received.join("")).toBe("abc");
  });

  it("corks again in a later turn", async () => {
    const { socket, received } = await connection();
    coalesceWritesThisTurn(socket);
    socket.write("1");
    await nextTurn();
    coalesceWritesThisTurn(socket);
    expect(socket.writableCorked).toBe(1);
    socket.write("2");
    await nextTurn();
    expect(socket.writableCorked).toBe(0);
    await expect.poll(() => received.join("")).toBe("12");
  });
});
