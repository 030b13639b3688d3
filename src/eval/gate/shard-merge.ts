/**
 * `retrace merge`'s checks and the merged inputs of the report
 * (docs/reliability.md, "Sharded sweeps"). Given the partial reports of
 * `retrace eval --shard i/n`, it verifies that they are the n shards of one
 * run and returns what the report is recomputed from: the run header with
 * the whole selection's dataset hash, every turn in dataset order (the turn
 * objects exactly as written), the bootstrap settings and card counts. The
 * aggregates, intervals, p-values and chance levels are NOT merged: the
 * caller recomputes them with the same `buildReport` an unsharded run uses.
 *
 * A `--graph` run's shards are compared on their graph's identity and
 * scoring (module, export, module hash, id keys, retrieval-call mode, catalog,
 * id map, configurable); its counts are per shard and recomputed.
 *
 * Refused (DataValidationError, exit 2, naming the file and the field):
 * a report without a `shard` section; shards of different shard counts,
 * assignment rules, selections (dataset hash, case ids, turn counts), run
 * headers (KB, embedder, k, store kind, mode, rerank, ...), bootstrap
 * settings (seed, samples, unit), card counts, judges or repeats; a shard given
 * twice; a missing shard; a case in two shards; a shard whose turns are not
 * its cases' turns; a shard whose cases are not the ones the rule assigns it.
 *
 * `timings` is the only run-dependent section; it is combined (earliest
 * start, summed durations, every turn's stage timings, the judge's summed
 * calls, cache hits and tokens) and never compared.
 *
 * The reading and the checks are in ./shard-check.ts; here, what is merged.
 * Pure; inputs are never mutated.
 */
import { differingPaths } from "../report/run-config-text.js";
import {
  checkAssignment,
  checkSet,
  collectTurns,
  counterfactualOf,
  fail,
  readShards,
  type Shard,
  type ShardFile,
} from "./shard-check.js";
import { DEFAULT_RESAMPLE, DEFAULT_SAMPLES, DEFAULT_SEED } from "../stats/bootstrap.js";
import type {
  GraphRunInfo,
  JudgeInfo,
  JudgeUsage,
  RetrievalRunConfig,
  RunInfo,
  Timings,
  TurnReport,
} from "../report/types.js";

/** What the full report is recomputed from. */
export interface MergedShards {
  /** The shards' common run header, with the whole selection's `datasetHash`. */
  run: RunInfo;
  /** Every turn of every shard, in dataset order (case order of the selection, then turn index). */
  turns: TurnReport[];
  bootstrap: { seed: number; samples: number; unit: "case" | "turn" };
  /** Cards per locale behind the chance levels (absent when the shards have none). */
  cardsPerLocale?: Record<string, number>;
  /** The shards' judge (absent when no shard ran one): model, prompt, unparsable replies summed; the summed cost is in `timings.judge`. */
  judge?: JudgeInfo;
  /** The shards' wall-clock sections combined. */
  timings?: Timings;
  /** Whether the shards ran counterfactual retrieval (the same in every shard: part of their identity); absent when they have no query attribution. */
  counterfactual?: { enabled: boolean; reason?: string };
  /** Number of shards merged. */
  count: number;
  /**
   * `--graph` runs: what the shards' `run.graph` headers give the merged one
   * beyond their shared identity: the scored retrievers (union, sorted) and
   * the locales whose turns retrieved no card of their locale in every shard
   * that ran such turns (in the order of the merged turns). The counts are
   * recomputed from the turns.
   */
  graph?: {
    retrievers: string[];
    localesWithoutCards: string[];
    /** `--traces` shards: each shard's `run.graph.traces`, in shard order (merged by src/app/traces-eval.ts). */ traces?: NonNullable<
      GraphRunInfo["traces"]
    >[];
  };
  /**
   * `--repeat N` shards: the repeats per case, whether every shard's repeats
   * were identical, and the turns that errored in a repeat (summed). The
   * section's flaky turns and intervals are recomputed from the turns'
   * `repeatScores` (src/eval/sweep/repeats.ts `repeatsSection`).
   */
  repeats?: { n: number; identical: boolean; errorTurns: number };
}

export { firstDifference, type ShardFile } from "./shard-check.js";

/** The shards' judge section: model and prompt (the same in every shard: checked by identity), unparsable replies summed. */
function sumJudge(shards: readonly Shard[]): JudgeInfo | undefined {
  const all = shards.map((s) => s.report.judge).filter((c): c is JudgeInfo => c !== undefined);
  if (all.length === 0) return undefined;
  return { model: all[0]!.model, prompt: all[0]!.prompt, unparsable: all.reduce((n, c) => n + c.unparsable, 0) };
}

/** The judge's cost summed over the shards (`timings.judge`): calls, cache hits, and tokens (null when any shard's model reported none). */
function sumJudgeUsage(all: readonly Timings[]): JudgeUsage | undefined {
  const usage = all.map((t) => t.judge).filter((u): u is JudgeUsage => u !== undefined);
  if (usage.length === 0) return undefined;
  const sum = (f: (c: JudgeUsage) => number) => usage.reduce((n, c) => n + f(c), 0);
  const sumOrNull = (f: (c: JudgeUsage) => number | null) =>
    usage.some((c) => f(c) === null) ? null : usage.reduce((n, c) => n + (f(c) as number), 0);
  return {
    calls: sum((c) => c.calls),
    cached: sum((c) => c.cached),
    inputTokens: sumOrNull((c) => c.inputTokens),
    outputTokens: sumOrNull((c) => c.outputTokens),
  };
}

/**
 * The union of the shards' `run.retrieval` (settings per locale): a locale's
 * settings must be the same in every shard that ran turns of it. Keys sorted,
 * as an unsharded run writes them.
 */
function mergeRetrieval(shards: readonly Shard[]): Record<string, RetrievalRunConfig> | undefined {
  const merged = new Map<string, { config: RetrievalRunConfig; file: string }>();
  let any = false;
  for (const s of shards) {
    // The migrated report's settings: a version 3 shard's are made opaque on read, so it merges with a current one.
    const own = s.report.run.retrieval;
    if (own === undefined) continue;
    any = true;
    for (const [locale, config] of Object.entries(own)) {
      const seen = merged.get(locale);
      if (seen === undefined) merged.set(locale, { config, file: s.file });
      else if (differingPaths(seen.config, config).length > 0)
        fail([
          {
            file: s.file,
            field: `run.retrieval.${locale}`,
            message: `differs from ${seen.file}: the shards of one merge must come from one run's configuration (retrieval settings of ${locale} differ at ${differingPaths(seen.config, config).join(", ")})`,
          },
        ]);
    }
  }
  if (!any) return undefined;
  return Object.fromEntries(
    [...merged].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([locale, { config }]) => [locale, config]),
  );
}

/** Earliest start, summed sweep durations (compute time over all shards), every turn's stage timings in merged turn order. */
function combineTimings(shards: readonly Shard[], turns: readonly TurnReport[]): Timings | undefined {
  const all = shards.map((s) => s.report.timings).filter((t): t is Timings => t !== undefined);
  if (all.length === 0) return undefined;
  const started = all.map((t) => t.started).sort()[0]!;
  const durationMs = all.reduce((n, t) => n + t.durationMs, 0);
  const perTurn = new Map<string, Record<string, number>>();
  for (const t of all) for (const [id, ms] of Object.entries(t.turns)) perTurn.set(id, ms);
  const ordered: Record<string, Record<string, number>> = {};
  for (const t of turns) {
    const id = `${t.caseId}#${t.turn}`;
    const ms = perTurn.get(id);
    if (ms !== undefined) ordered[id] = ms;
  }
  const withPhases = all.filter((t) => t.phases !== undefined);
  const phases =
    withPhases.length === all.length
      ? withPhases.reduce(
          (p, t) => ({
            graph: p.graph + t.phases!.graph,
            evaluate: p.evaluate + t.phases!.evaluate,
            report: p.report + t.phases!.report,
          }),
          { graph: 0, evaluate: 0, report: 0 },
        )
      : undefined;
  const judge = sumJudgeUsage(all);
  return {
    started,
    durationMs,
    turns: ordered,
    ...(phases !== undefined ? { phases } : {}),
    ...(judge !== undefined ? { judge } : {}),
  };
}

/** MergedShards.graph of `--graph` shards (their turns in `byCase`); undefined for other runs. */
function mergeGraphFacts(shards: readonly Shard[], turns: readonly TurnReport[]): MergedShards["graph"] {
  const graphs = shards.map((s) => s.report.run.graph);
  if (graphs.some((g) => g === undefined)) return undefined;
  const retrievers = [...new Set(graphs.flatMap((g) => g!.retrievers))].sort();
  // A locale has no card of its own in the merged run when no shard that retrieved for its turns found one.
  const found = new Set<string>();
  shards.forEach((s, i) => {
    const listed = new Set(graphs[i]!.localesWithoutCards ?? []);
    for (const t of s.report.turns) if (t.captured !== undefined && !listed.has(t.locale)) found.add(t.locale);
  });
  const localesWithoutCards: string[] = [];
  for (const t of turns)
    if (t.captured !== undefined && !found.has(t.locale) && !localesWithoutCards.includes(t.locale))
      localesWithoutCards.push(t.locale);
  const traces = graphs.map((g) => g!.traces);
  return {
    retrievers,
    localesWithoutCards,
    ...(traces.every((t) => t !== undefined) ? { traces: traces as NonNullable<GraphRunInfo["traces"]>[] } : {}),
  };
}

/**
 * Verifies that `files` are all the shards of one run and returns what the
 * full report is recomputed from. Throws DataValidationError (exit 2) naming
 * the file and the field on any refusal listed in the module comment.
 */
export function mergeShards(files: readonly ShardFile[]): MergedShards {
  const shards = readShards(files);
  checkSet(shards);
  const byCase = collectTurns(shards);
  checkAssignment(shards, byCase);
  const first = shards[0]!;
  const dataset = first.shard.dataset;
  const turns = dataset.caseIds.flatMap((id) => byCase.get(id)!.turns);
  const retrieval = mergeRetrieval(shards);
  // Spread keeps the key order; datasetHash is the whole selection's, retrieval the union over the shards.
  const run = {
    ...first.report.run, // as read: a shard of an older version migrated
    datasetHash: dataset.datasetHash,
    ...(retrieval !== undefined ? { retrieval } : {}),
  };
  const bootstrap = first.report.bootstrap;
  const chance = first.report.chance;
  const judge = sumJudge(shards);
  const timings = combineTimings(shards, turns);
  const graph = mergeGraphFacts(shards, turns);
  const sections = shards.map((s) => s.report.repeats);
  const repeats =
    sections[0] === undefined
      ? undefined
      : {
          n: sections[0].n,
          identical: sections.every((r) => r!.identical),
          errorTurns: sections.reduce((n, r) => n + r!.errorTurns, 0),
        };
  return {
    run,
    turns,
    bootstrap: {
      seed: bootstrap?.seed ?? DEFAULT_SEED,
      samples: bootstrap?.samples ?? DEFAULT_SAMPLES,
      unit: bootstrap?.unit ?? DEFAULT_RESAMPLE,
    },
    ...(chance !== undefined ? { cardsPerLocale: { ...chance.cardsPerLocale } } : {}),
    ...(judge !== undefined ? { judge } : {}),
    ...(timings !== undefined ? { timings } : {}),
    ...(counterfactualOf(first) !== undefined ? { counterfactual: counterfactualOf(first)! } : {}),
    count: first.shard.count,
    ...(graph !== undefined ? { graph } : {}),
    ...(repeats !== undefined ? { repeats } : {}),
  };
}
