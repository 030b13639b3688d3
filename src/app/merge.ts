/**
 * Use-case: the partial reports of a sharded eval (`retrace eval --shard
 * i/n`, all n of them) back into the report an unsharded run writes, and its
 * gate verdict (`retrace merge`, `mergeShardReports` for library users;
 * docs/reliability.md, "Sharded sweeps"). The shards are verified to belong
 * together (src/eval/gate/shard-merge.ts); every aggregate, interval,
 * p-value and chance level is recomputed from the merged per-turn scores by
 * the report-and-gate step eval runs after its sweep (./evaluate.ts
 * `reportAndGate`), and the gate is applied
 * there: floors, a baseline, drops and flips, as on eval (and, for the shards
 * of a `--graph` run, its errored and no-retrieval turns, with the run's
 * `run.graph` counts recomputed over all turns). Only `timings`,
 * the wall-clock section, differs from an unsharded run's.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { InternalError, InvalidArgumentError } from "../errors.js";
import { readBaseline, storeKindOf, type Baseline } from "../eval/gate/baseline.js";
import { readQuarantine } from "../eval/gate/quarantine.js";
import { mergeShards, type ShardFile } from "../eval/gate/shard-merge.js";
import { groundednessEvaluator, retrievalSideEvaluators } from "../eval/measures/evaluators.js";
import { graphRunFacts, graphRunIdentityOf, graphRunInfo } from "../eval/sweep/graph-checks.js";
import { repeatsSectionOffThread } from "../eval/sweep/repeats-thread.js";
import { readCaseIndex } from "../kb/cases.js";
import { evaluatorsFor } from "../eval/measures/storeless.js";
import { readTextFileOrThrow } from "../kb/text.js";
import { log } from "../log.js";
import { defaultBaselineFile } from "./baseline.js";
import type { EvalOutcome } from "./eval.js";
import { reportAndGate } from "./evaluate.js";
import { wantsBaseline, type GateOptions } from "./report.js";
import { checkBaselineWriting } from "./run-checks.js";
import { mergeTracesSections } from "./traces-eval.js";
import { parseJsonOrThrow } from "../kb/json.js";

/** The options of a merge: the gate's, and the baseline's file. */
export interface MergeOptions extends GateOptions {
  /** The KB folder, for the default baseline `<kb>/eval/baseline.json` (default `kb`). */
  kb?: string;
  baseline?: string;
  /** The merge writes the baseline rather than comparing with one (the caller writes it: `writeBaseline(mergeBaselineFile(options), report)`). */
  updateBaseline?: boolean;
  /** The cases file the run used (default `<kb>/eval/cases.jsonl`): where `quarantine` entries are checked and GitHub annotations point. */
  cases?: string;
}

/** The cases file of a merge: `cases`, else `<kb>/eval/cases.jsonl`. */
export function mergeCasesFile(o: Pick<MergeOptions, "cases" | "kb">): string {
  return o.cases ?? path.join(o.kb ?? "kb", "eval", "cases.jsonl");
}

/** Reads each shard file (strict UTF-8, JSON); exit 2 naming the file when it is neither. */
export async function readShardFiles(files: readonly string[]): Promise<ShardFile[]> {
  return Promise.all(
    files.map(async (file) => {
      const text = await readTextFileOrThrow(file);
      return {
        file,
        data: parseJsonOrThrow(text, { file, expected: "a shard report JSON written by retrace eval --shard i/n" }),
      }; // src/kb/json.ts
    }),
  );
}

/** The baseline file a merge compares with or writes: `baseline`, else `<kb>/eval/baseline.json`. */
export function mergeBaselineFile(o: Pick<MergeOptions, "baseline" | "kb">): string {
  return o.baseline ?? defaultBaselineFile(o.kb ?? "kb");
}

/** Merges the shard report files into the report of the whole run, its gate applied. Writes nothing. */
export async function mergeShardReports(files: readonly string[], o: MergeOptions = {}): Promise<EvalOutcome> {
  checkBaselineWriting(o); // the rules eval checks (./run-checks.ts); a merge has no --locale/--case
  const baselineFile = mergeBaselineFile(o);
  let baseline: Baseline | null = null;
  if (wantsBaseline(o)) {
    if (!existsSync(baselineFile))
      throw new InvalidArgumentError(
        "--baseline",
        "an existing baseline file (create one with `retrace eval --update-baseline`, or `retrace merge … --update-baseline`)",
        baselineFile,
      );
    baseline = await readBaseline(baselineFile);
  }
  // Checked against the cases file before the shards are read (exit 2 naming the quarantine file and line).
  const quarantine =
    o.quarantine !== undefined ? await readQuarantine(o.quarantine, await readCaseIndex(mergeCasesFile(o))) : undefined;
  const merged = mergeShards(await readShardFiles(files));
  if (merged.run.graph === undefined)
    for (const [flag, v] of [
      ["--gate max-errors", o.maxErrors],
      ["--gate max-no-retrieval", o.maxNoRetrieval],
    ] as const)
      if (v !== undefined)
        throw new InvalidArgumentError(
          flag,
          "used on the shards of a --graph run (retrace's own graph stops at the first turn that throws; every turn retrieves)",
          v,
        );
  const storeBacked = (merged.run.storeKind ?? storeKindOf(merged.run.store)) !== "none";
  // A merge never judges: the shards' groundedness scores are in their turns; the stand-in only gives the evaluator its shape.
  const judge =
    merged.judge !== undefined
      ? () => Promise.reject(new InternalError("retrace merge does not call the judge"))
      : undefined;
  // A --graph run is scored by the retrieval-side evaluators (and the judge when it ran one), as `retrace eval --graph` does (src/app/graph-eval.ts).
  const evaluators =
    merged.run.graph !== undefined
      ? [
          ...retrievalSideEvaluators({ k: merged.run.k }),
          ...(judge !== undefined ? [groundednessEvaluator({ judge })] : []),
        ]
      : evaluatorsFor({ k: merged.run.k, storeBacked, ...(judge !== undefined ? { judge } : {}) });
  // A --graph run's header counts are recomputed over every turn (the shards' are their own); one builder for eval and merge, so the bytes agree.
  const run =
    merged.run.graph !== undefined && merged.graph !== undefined
      ? {
          ...merged.run,
          graph: {
            ...graphRunInfo(graphRunIdentityOf(merged.run.graph), merged.turns, merged.graph.retrievers, {
              ...graphRunFacts(
                merged.turns,
                () => undefined,
                ...(merged.run.graph.maxStateBytes !== undefined ? [merged.run.graph.maxStateBytes] : []),
              ),
              localesWithoutCards: merged.graph.localesWithoutCards,
            }),
            // `--traces` shards: what was read and how it joined, as the unsharded run writes it (src/app/traces-eval.ts).
            ...(merged.graph.traces !== undefined ? { traces: mergeTracesSections(merged.graph.traces) } : {}),
          },
        }
      : merged.run;
  // `--repeat N` shards: a shard whose repeats were all identical wrote its turns without their scores per repeat; in a
  // run whose repeats differed they carry them (src/eval/sweep/repeats.ts), so they are restored: n times the score.
  const rep = merged.repeats;
  const turns =
    rep === undefined || rep.identical
      ? merged.turns
      : merged.turns.map((t) =>
          t.repeatScores !== undefined || t.error !== undefined || t.results.length === 0
            ? t
            : {
                ...t,
                repeatScores: Object.fromEntries(t.results.map((r) => [r.key, Array<number>(rep.n).fill(r.score)])),
              },
        );
  log.info(
    `merged ${merged.count} shard${merged.count === 1 ? "" : "s"}: ${new Set(merged.turns.map((t) => t.caseId)).size} cases, ${merged.turns.length} turns`,
  );
  // The report-and-gate step eval runs after its sweep (./evaluate.ts), over the merged turns.
  const report = await reportAndGate({
    build: {
      run,
      turns,
      evaluators,
      seed: merged.bootstrap.seed,
      samples: merged.bootstrap.samples,
      resample: merged.bootstrap.unit,
      ...(merged.cardsPerLocale !== undefined ? { cardsPerLocale: merged.cardsPerLocale } : {}),
      ...(merged.counterfactual !== undefined ? { counterfactual: merged.counterfactual } : {}),
    },
    // The repeats section recomputed over every turn, as the unsharded run computes it (flaky turns, two-stage intervals).
    ...(rep !== undefined
      ? {
          repeats: await repeatsSectionOffThread(turns, {
            ...rep,
            seed: merged.bootstrap.seed,
            samples: merged.bootstrap.samples,
          }),
        }
      : {}),
    gate: o,
    baseline,
    ...(quarantine !== undefined ? { quarantine } : {}),
  });
  // In an unsharded run's order: the wall clock, then the judge's cost (./evaluate.ts).
  if (merged.timings !== undefined) report.timings = merged.timings;
  if (merged.judge !== undefined) report.judge = merged.judge;
  return { report, baseline };
}
