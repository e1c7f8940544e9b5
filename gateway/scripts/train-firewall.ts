// Trains the built-in prompt-injection classifier and writes src/firewall/model/injection-classifier.json.
// Run: `npm run train:firewall` (data folder: SVC_INJECTION_DATA, default ../shared/data/injection next to
// the repository root). Deterministic: a seeded PRNG orders the examples, so every run writes the same bytes.
//
// Training itself (features, windows, multiple-instance SGD, calibration): firewall-training.ts. The
// response head also learns from the committed clean tool outputs (firewall-data/clean-outputs.jsonl) and
// from generic injections planted into some of them (TRAINING_OPTIONS). Leave-one-family-out figures:
// measure-firewall-generalisation.ts.
//
// Dev split (scripts/firewall-dataset.ts): 25% of each subset held out at random. The shipped model is
// trained on the other 75% only, so the dev figures (printed here and by `npm run eval:firewall`) come
// from rows the weights never saw; the operating point is chosen on dev (see chooseThreshold), which
// makes the dev figures slightly optimistic. A second model trained without the held-out subsets
// (giskard, self-reminder-jailbreak, wildguard-benign, agentdojo-travel-*, bipia-code-*) gives the
// generalisation figures, stored in the model file for the eval report.

import { writeFileSync } from "node:fs";
import { serializeModel } from "../src/firewall/model-file.ts";
import { isHeldOutSubset, loadTrainingData, SPLIT_SEED, splitBySubset } from "./firewall-dataset.ts";
import { type Counts, countsBySubset, formatCountsTable } from "./firewall-metrics.ts";
import { REPORT_AGGREGATES } from "./firewall-report.ts";
import { scoreAll, trainModel } from "./firewall-training.ts";

/**
 * Generic injections planted into training rows of the committed clean corpora (planted-injections.ts).
 * Measured leave-one-family-out (measure-firewall-generalisation.ts), against the same training without
 * them: held-out recall 0.36 -> 0.38 (AgentDojo 0.45 -> 0.66), recall at each family's own 3% false
 * positives 0.57 -> 0.65, held-out clean false positives 0% -> 0.2%; dev recall 0.873 -> 0.867.
 */
const TRAINING_OPTIONS = { plantedInjections: 250 } as const;

const MODEL_PATH = new URL("../src/firewall/model/injection-classifier.json", import.meta.url);

function main(): void {
  const started = Date.now();
  const rows = loadTrainingData();
  const { train, dev } = splitBySubset(rows);

  // Generalisation: a model that never sees the held-out subsets, calibrated on the rest of dev.
  const generalisation = trainModel(
    train.filter((row) => !isHeldOutSubset(row.subset)),
    dev.filter((row) => !isHeldOutSubset(row.subset)),
    SPLIT_SEED,
    TRAINING_OPTIONS,
  );
  const heldOutScored = scoreAll(
    generalisation,
    rows.filter((row) => isHeldOutSubset(row.subset)),
  );
  const heldOut: Record<string, [string, Counts][]> = {};
  for (const direction of ["request", "response"] as const) {
    heldOut[direction] = countsBySubset(
      heldOutScored.filter(({ row }) => row.direction === direction),
      0.5,
    );
    console.log(
      `${formatCountsTable(`Held-out subsets (${direction}), model trained without them, score >= 0.5`, heldOut[direction] ?? [], REPORT_AGGREGATES[direction])}\n`,
    );
  }

  const model = trainModel(train, dev, SPLIT_SEED, TRAINING_OPTIONS);
  const devScored = scoreAll(model, dev);
  for (const direction of ["request", "response"] as const) {
    const head = model.heads[direction];
    console.log(
      `${formatCountsTable(
        `Dev split (${direction}), shipped model, score >= 0.5 (logit threshold ${head.threshold.toFixed(3)}, slope ${head.slope})`,
        countsBySubset(
          devScored.filter(({ row }) => row.direction === direction),
          0.5,
        ),
        REPORT_AGGREGATES[direction],
      )}\n`,
    );
  }
  const text = serializeModel({
    heads: model.heads,
    training: {
      seed: SPLIT_SEED,
      trainRows: train.length,
      devRows: dev.length,
      heldOutSubsets: heldOut,
    },
  });
  writeFileSync(MODEL_PATH, text);
  console.log(
    `Wrote ${MODEL_PATH.pathname} (${(text.length / 1024).toFixed(0)} KiB) in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
}

try {
  main();
} catch (error) {
  // A missing or malformed data or model file is an operator's problem: its message, not a stack trace.
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
}
