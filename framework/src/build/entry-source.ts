import type { ProjectFiles } from "../project/discover.ts";

function importOf(projectDir: string, absolutePath: string): string {
  const relative = absolutePath.slice(projectDir.length).replaceAll("\\", "/").replace(/^\/+/, "");
  return `() => import(${JSON.stringify(`./${relative}`)})`;
}

/**
 * The generated entry of dist/server.mjs. Every project module is imported lazily so the runtime decides the
 * order (auth.ts before createAuthLayer, telemetry before handlers) and can report a module that fails to load.
 */
export function entrySource(
  projectDir: string,
  files: ProjectFiles,
  rawSettings: unknown,
  legacyHealthFields: string[],
): string {
  const components = files.components.map(
    (c) =>
      `    { kind: ${JSON.stringify(c.kind)}, file: ${JSON.stringify(c.file)}, defaultName: ${JSON.stringify(c.defaultName)}, load: ${importOf(projectDir, c.absolutePath)} },`,
  );
  const optional = (["auth", "health", "readiness"] as const)
    .filter((key) => files[key] !== undefined)
    .map((key) => `  ${key}: ${importOf(projectDir, files[key] as string)},`);
  return [
    `import { main } from "svc:runtime";`,
    `await main({`,
    `  settings: ${JSON.stringify(rawSettings)},`,
    `  legacyHealthFields: ${JSON.stringify(legacyHealthFields)},`,
    `  components: [`,
    ...components,
    `  ],`,
    ...optional,
    `});`,
    ``,
  ].join("\n");
}
