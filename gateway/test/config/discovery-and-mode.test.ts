import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { CONFIG_FILE_LOCATIONS, ConfigError, loadConfig } from "../../src/config/index.ts";

const VALID = 'version: "1.0"\n';
const named = (name: string) =>
  `version: "1.0"\nservers:\n  - name: ${name}\n    url: http://127.0.0.1:1/mcp\n    upstream_auth_type: none\n`;

let root: string; // stands in for `/`
let cwd: string;

beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), "svc-root-"));
  cwd = path.join(root, "work");
  await mkdir(path.join(root, "etc/svc-gateway"), { recursive: true });
  await mkdir(cwd);
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

async function place(location: string, name: string): Promise<string> {
  const file = path.isAbsolute(location) ? path.join(root, location) : path.resolve(cwd, location);
  await writeFile(file, named(name));
  return file;
}

const load = (env: Record<string, string> = {}) => loadConfig({ env, cwd, root });
const serverName = async (env: Record<string, string> = {}) => (await load(env)).config.servers[0]?.name;

describe("discovery order", () => {
  test("is the documented list", () => {
    expect(CONFIG_FILE_LOCATIONS).toEqual([
      "/etc/svc-gateway/config.yaml",
      "/etc/svc-gateway/config.yml",
      "./svc-gateway.yaml",
      "./svc-gateway.yml",
    ]);
  });

  test("each location wins over every later one", async () => {
    const env = { SVC_CONFIG_FILE: path.join(root, "custom.yaml") };
    await place("./svc-gateway.yml", "local-yml");
    expect(await serverName(env)).toBe("local-yml");
    await place("./svc-gateway.yaml", "local-yaml");
    expect(await serverName(env)).toBe("local-yaml");
    await place("/etc/svc-gateway/config.yml", "etc-yml");
    expect(await serverName(env)).toBe("etc-yml");
    await place("/etc/svc-gateway/config.yaml", "etc-yaml");
    expect(await serverName(env)).toBe("etc-yaml");
    await writeFile(env.SVC_CONFIG_FILE, named("from-env"));
    const loaded = await load(env);
    expect(loaded.config.servers[0]?.name).toBe("from-env");
    expect(loaded.source).toBe(env.SVC_CONFIG_FILE);
    expect(loaded.warnings).toEqual([]);
  });

  test("a relative SVC_CONFIG_FILE is resolved against the working directory", async () => {
    await writeFile(path.join(cwd, "mine.yaml"), named("mine"));
    expect(await serverName({ SVC_CONFIG_FILE: "mine.yaml" })).toBe("mine");
  });

  test("a dangling SVC_CONFIG_FILE falls through to the next file, with a warning", async () => {
    const used = await place("./svc-gateway.yaml", "local");
    const loaded = await load({ SVC_CONFIG_FILE: "/nope/gw.yaml" });
    expect(loaded.config.servers[0]?.name).toBe("local");
    expect(loaded.warnings).toEqual([`SVC_CONFIG_FILE=/nope/gw.yaml does not exist; using ${used}`]);
  });

  test("a directory at a location is skipped", async () => {
    await mkdir(path.join(cwd, "svc-gateway.yaml"));
    await place("./svc-gateway.yml", "yml");
    expect(await serverName()).toBe("yml");
  });

  test("--config overrides discovery, and a missing one is an error, not a fallback", async () => {
    await place("/etc/svc-gateway/config.yaml", "etc");
    const explicit = path.join(root, "explicit.yaml");
    await writeFile(explicit, named("explicit"));
    expect((await loadConfig({ configPath: explicit, env: {}, cwd, root })).config.servers[0]?.name).toBe(
      "explicit",
    );
    await expect(
      loadConfig({ configPath: path.join(root, "missing.yaml"), env: {}, cwd, root }),
    ).rejects.toThrow(/cannot read configuration file .*missing\.yaml: no such file/);
  });

  test("--config - reads standard input", async () => {
    const loaded = await loadConfig({ configPath: "-", env: {}, stdin: Readable.from([named("stdin")]) });
    expect(loaded).toMatchObject({ source: "-", mode: "standalone" });
    expect(loaded.config.servers[0]?.name).toBe("stdin");
  });

  test("an empty file is refused", async () => {
    await writeFile(path.join(cwd, "svc-gateway.yaml"), "\n# nothing\n");
    await expect(load()).rejects.toThrow("the configuration is empty");
  });
});

describe("mode detection", () => {
  test("standalone: a file without control_plane", async () => {
    await writeFile(path.join(cwd, "svc-gateway.yaml"), VALID);
    expect((await load()).mode).toBe("standalone");
  });

  test("distributed: a file with control_plane", async () => {
    await writeFile(
      path.join(cwd, "svc-gateway.yaml"),
      `${VALID}control_plane:\n  url: https://cp.example.com\n  api_key: k\n  gateway_id: 6f1c2a7e-3b4d-4e5f-8a9b-0c1d2e3f4a5b\n`,
    );
    const loaded = await load();
    expect(loaded.mode).toBe("distributed");
    expect(loaded.config.control_plane).toMatchObject({
      url: "https://cp.example.com",
      timeout: 30,
      cache_ttl: 300,
    });
  });

  const centralEnv = {
    SVC_CONTROL_PLANE_URL: "https://cp.example.com",
    SVC_CONTROL_PLANE_API_KEY: "secret",
    SVC_GATEWAY_ID: "6f1c2a7e-3b4d-4e5f-8a9b-0c1d2e3f4a5b",
  };

  test("centralized: no file, control-plane settings in the environment", async () => {
    const loaded = await load({ ...centralEnv, SVC_CONTROL_PLANE_TIMEOUT: "45" });
    expect(loaded.mode).toBe("centralized");
    expect(loaded.source).toBe("environment");
    expect(loaded.config.control_plane).toMatchObject({ url: "https://cp.example.com", timeout: 45 });
  });

  test("a file wins over centralized settings", async () => {
    await writeFile(path.join(cwd, "svc-gateway.yaml"), VALID);
    expect((await load(centralEnv)).mode).toBe("standalone");
  });

  test("centralized with a required variable missing names it", async () => {
    const error = await load({ SVC_CONTROL_PLANE_URL: "https://cp.example.com" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems.map((p) => p.message)).toEqual([
      "environment variable SVC_CONTROL_PLANE_API_KEY is required for centralized mode (no configuration file was found)",
      "environment variable SVC_GATEWAY_ID is required for centralized mode (no configuration file was found)",
    ]);
  });

  test("centralized with a bad value names the variable", async () => {
    await expect(
      load({ ...centralEnv, SVC_GATEWAY_ID: "gw", SVC_CONTROL_PLANE_CACHE_TTL: "5" }),
    ).rejects.toThrow(
      /control_plane\.gateway_id: must be a UUID \(got "gw"\) \(from SVC_GATEWAY_ID\)\ncontrol_plane\.cache_ttl: must be a whole number from 60 to 3600 \(got 5\) \(from SVC_CONTROL_PLANE_CACHE_TTL\)/,
    );
  });

  test("no file and no control-plane settings: the error lists every place searched", async () => {
    const error = (await load({ SVC_CONFIG_FILE: "/x/gw.yaml" }).catch((e: unknown) => e)) as ConfigError;
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toContain(
      `searched, in order: /x/gw.yaml, ${path.join(root, "etc/svc-gateway/config.yaml")}, ${path.join(root, "etc/svc-gateway/config.yml")}, ${path.join(cwd, "svc-gateway.yaml")}, ${path.join(cwd, "svc-gateway.yml")}`,
    );
    expect(error.message).toContain("Pass --config FILE or set SVC_CONFIG_FILE");
  });
});
