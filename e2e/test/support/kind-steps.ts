import { readFileSync } from "node:fs";
import { join } from "node:path";
import { repoRoot } from "./paths.ts";

// The Kubernetes steps of the kind e2e (e2e/kind/run.sh), read from the script itself so that a local run
// against the fake API server follows the same steps in the same order with the same files and patches.
// Lines the local run has no use for (logging, images, port-forwards, the MCP checks, which local-stack runs
// with the same check script) are not steps; a `kubectl` line of a shape this reader does not know fails the
// read, so the script cannot grow a cluster step that the local run silently skips.

export type KindStep =
  | { step: "helm-install"; sets: string[] }
  | { step: "apply"; path: string }
  | { step: "apply-secret"; name: string }
  | { step: "delete"; path: string }
  | { step: "patch"; kind: string; name: string; patch: unknown }
  | { step: "wait"; kind: string; name: string | "--all"; condition: string; status: "True" | "False" }
  | { step: "wait-reason"; kind: string; name: string; condition: string; reason: string }
  | { step: "rollout"; deployment: string }
  | { step: "rollout-restart"; deployment: string }
  /** The old gateway pods of a rolling restart are gone (their drain is over). */
  | { step: "wait-old-pods-deleted" }
  /** The in-cluster traffic generator (a Pod running e2e/scripts/kind-traffic.ts) is told to stop, then succeeds. */
  | { step: "traffic-stop"; pod: string }
  | { step: "traffic-succeeded"; pod: string };

export const kindScriptPath = join(repoRoot, "e2e", "kind", "run.sh");

/** Commands without their continuation lines, from the script's cluster part (after the images are loaded). */
function commands(script: string): string[] {
  const joined = script.replace(/\\\n\s*/g, "");
  return joined
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"));
}

const READ_ONLY = [
  /^kubectl config use-context /,
  /^kubectl get /,
  /^kubectl port-forward /,
  /^kubectl logs /,
  /^kubectl describe /,
];

/** Each cluster step's shape in the script, and the step it is. */
const STEP_SHAPES: [RegExp, (match: string[]) => KindStep][] = [
  [
    /"\$HELM" upgrade --install .*/,
    ([line]) => ({
      step: "helm-install",
      sets: [...(line ?? "").matchAll(/--set (\S+)/g)].map((m) => m[1] as string),
    }),
  ],
  [
    /^kubectl create secret generic (\S+) -n "\$NS" --dry-run=client .*\| kubectl apply -f -$/,
    ([, name]) => ({ step: "apply-secret", name: name as string }),
  ],
  [/^kubectl apply -f (\S+)$/, ([, path]) => ({ step: "apply", path: path as string })],
  [/^kubectl delete -f (\S+)$/, ([, path]) => ({ step: "delete", path: path as string })],
  [
    /^kubectl patch (\S+) (\S+) -n "\$NS" --type merge -p '([^']+)'$/,
    ([, kind, name, patch]) => ({
      step: "patch",
      kind: kind as string,
      name: name as string,
      patch: JSON.parse(patch as string),
    }),
  ],
  [
    /^kubectl wait -n "\$NS" --for=condition=(\w+)(=false)? (\S+)( --all)? --timeout=\d+s$/,
    ([, condition, negated, target, all]) => {
      const [kind, name] = (target as string).split("/");
      return {
        step: "wait",
        kind: kind as string,
        name: all ? "--all" : (name as string),
        condition: condition as string,
        status: negated ? "False" : "True",
      };
    },
  ],
  [
    /^kubectl wait -n "\$NS" --for=jsonpath='\{\.status\.conditions\[\?\(@\.type=="(\w+)"\)\]\.reason\}'=(\w+) (\S+) --timeout=\d+s$/,
    ([, condition, reason, target]) => {
      const [kind, name] = (target as string).split("/");
      return {
        step: "wait-reason",
        kind: kind as string,
        name: name as string,
        condition: condition as string,
        reason: reason as string,
      };
    },
  ],
  [
    /^kubectl rollout status -n "\$NS" deployment\/(\S+) --timeout=\d+s$/,
    ([, deployment]) => ({ step: "rollout", deployment: deployment as string }),
  ],
  [
    /^kubectl rollout restart -n "\$NS" deployment\/(\S+)$/,
    ([, deployment]) => ({ step: "rollout-restart", deployment: deployment as string }),
  ],
  [/^kubectl wait -n "\$NS" --for=delete \$OLD_GATEWAY_PODS .*/, () => ({ step: "wait-old-pods-deleted" })],
  [
    /^kubectl exec -n "\$NS" pod\/(\S+) -- .*stop.*$/,
    ([, pod]) => ({ step: "traffic-stop", pod: pod as string }),
  ],
  [
    /^kubectl wait -n "\$NS" --for=jsonpath='\{\.status\.phase\}'=Succeeded pod\/(\S+) --timeout=\d+s$/,
    ([, pod]) => ({ step: "traffic-succeeded", pod: pod as string }),
  ],
];

export function readKindSteps(script = readFileSync(kindScriptPath, "utf8")): KindStep[] {
  const steps: KindStep[] = [];
  for (const line of commands(script)) {
    const shape = STEP_SHAPES.map(([pattern, build]) => ({ match: pattern.exec(line), build })).find(
      (candidate) => candidate.match !== null,
    );
    if (shape?.match) {
      steps.push(shape.build([...shape.match]));
      continue;
    }
    // Read-only kubectl (diagnostics, the RESTARTS_* substitutions, `|| true` lines) is fine; any other
    // kubectl line is a cluster step this reader would skip.
    const readOnly =
      READ_ONLY.some((pattern) => pattern.test(line)) ||
      /\$\(kubectl get /.test(line) ||
      /\|\| true$/.test(line);
    if (/(^|[|&;(]\s*)kubectl /.test(line) && !readOnly) {
      throw new Error(`e2e/kind/run.sh: a kubectl step the local run does not know: ${line}`);
    }
  }
  return steps;
}
