import { describe, expect, test } from "vitest";
import { createLogger, parseLogLevel, requestContext } from "../../src/log/logger.ts";

function capture(level: Parameters<typeof createLogger>[0]["level"]) {
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger({ level, write: (line) => lines.push(JSON.parse(line)) });
  return { logger, lines };
}

describe("logger", () => {
  test("one JSON object per line with time, level and message; below the level nothing is written", () => {
    const { logger, lines } = capture("info");
    logger.debug("hidden");
    logger.info("shown", { server: "a" });
    expect(lines).toEqual([{ time: expect.any(String), level: "info", msg: "shown", server: "a" }]);
  });

  test("every line written while serving a request carries its request id", () => {
    const { logger, lines } = capture("debug");
    requestContext.run({ requestId: "req-42" }, () => logger.warn("inside"));
    logger.warn("outside");
    expect(lines[0]?.request_id).toBe("req-42");
    expect(lines[1]?.request_id).toBeUndefined();
  });

  test("secret-looking fields are redacted at any depth", () => {
    const { logger, lines } = capture("debug");
    logger.info("x", {
      headers: { authorization: "Bearer abc", "x-api-key": "k", accept: "json" },
      nested: [{ client_secret: "s", password: "p", access_token: "t" }],
    });
    const text = JSON.stringify(lines);
    for (const secret of ["Bearer abc", '"k"', '"s"', '"p"', '"t"']) expect(text).not.toContain(secret);
    expect(lines[0]).toMatchObject({ headers: { accept: "json", authorization: "[REDACTED]" } });
  });

  test("LOG_LEVEL parsing is forgiving about case and 'warning', and defaults to info", () => {
    expect(parseLogLevel("DEBUG")).toBe("debug");
    expect(parseLogLevel("warning")).toBe("warn");
    expect(parseLogLevel(undefined)).toBe("info");
    expect(parseLogLevel("loud")).toBe("info");
  });
});
