import { type Document, isMap, isScalar, isSeq, LineCounter, type Node, parseDocument } from "yaml";
import { interpolateString, resolvePlainScalar } from "./interpolate.ts";
import { type ConfigProblem, formatPath, type PathSegment } from "./problems.ts";

/** A parsed YAML file that can say where a configuration path sits in the text. */
export interface YamlSource {
  value: unknown;
  /** Where a path sits; `atKey` points at the mapping key rather than its value (for unknown keys). */
  locate(path: readonly PathSegment[], atKey?: boolean): { line: number; column: number } | undefined;
}

export interface ParsedYaml {
  source?: YamlSource;
  problems: ConfigProblem[];
  /** Paths whose interpolation failed: their schema problems would only repeat the same fault. */
  failedPaths: Set<string>;
}

export function parseYaml(
  text: string,
  env: Record<string, string | undefined>,
  keepUnsetVariables: boolean,
): ParsedYaml {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const position = (offset: number) => {
    const { line, col } = lineCounter.linePos(offset);
    return { line, column: col };
  };
  if (doc.errors.length > 0) {
    return {
      problems: doc.errors.map((error) => ({
        path: "",
        message: `YAML syntax: ${firstLine(error.message)}`,
        ...position(error.pos[0]),
      })),
      failedPaths: new Set(),
    };
  }
  const problems: ConfigProblem[] = [];
  const failedPaths = new Set<string>();
  interpolateNode(
    doc.contents,
    [],
    (path, node, messages) => {
      const key = formatPath(path);
      failedPaths.add(key);
      for (const message of messages)
        problems.push({ path: key, message, ...position(node.range?.[0] ?? 0) });
    },
    env,
    keepUnsetVariables,
  );
  readVersionAsWritten(doc);
  return {
    source: {
      value: doc.toJS({ maxAliasCount: 100 }),
      locate: (path, atKey = false) => {
        const node = nodeAt(doc, path, atKey);
        return node?.range ? position(node.range[0]) : undefined;
      },
    },
    problems,
    failedPaths,
  };
}

type OnFailure = (path: PathSegment[], node: Node, messages: string[]) => void;

function interpolateNode(
  node: unknown,
  path: PathSegment[],
  onFailure: OnFailure,
  env: Record<string, string | undefined>,
  keep: boolean,
): void {
  if (isMap(node)) {
    for (const pair of node.items) {
      const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
      interpolateNode(pair.value, [...path, key], onFailure, env, keep);
    }
  } else if (isSeq(node)) {
    node.items.forEach((item, index) => {
      interpolateNode(item, [...path, index], onFailure, env, keep);
    });
  } else if (isScalar(node) && typeof node.value === "string") {
    const result = interpolateString(node.value, env, keep);
    if (result.problems.length > 0) onFailure(path, node, result.problems);
    node.value =
      result.substituted && node.type === "PLAIN" ? resolvePlainScalar(result.value) : result.value;
  }
}

/**
 * `version: 1.0` unquoted is the float 1 to a YAML parser; the version is the string "1.0". Read it as written
 * so both spellings work, while `1`, `1.00` or `2.0` are still refused.
 */
function readVersionAsWritten(doc: Document): void {
  const node = nodeAt(doc, ["version"]);
  if (isScalar(node) && typeof node.value === "number" && node.source === "1.0") node.value = "1.0";
}

/** The node at a path, or the nearest ancestor that exists (so a missing key points at its parent). */
function nodeAt(doc: Document, path: readonly PathSegment[], atKey = false): Node | undefined {
  let node: unknown = doc.contents;
  for (const [index, segment] of path.entries()) {
    if (isMap(node)) {
      const pair = node.items.find((item) => (isScalar(item.key) ? item.key.value : item.key) === segment);
      if (pair === undefined) break;
      const last = index === path.length - 1;
      node = (last && atKey) || pair.value === null ? pair.key : pair.value;
    } else if (isSeq(node) && typeof segment === "number" && segment < node.items.length) {
      node = node.items[segment];
    } else {
      break;
    }
  }
  return node as Node | undefined;
}

function firstLine(message: string): string {
  return message.split("\n")[0] ?? message;
}
