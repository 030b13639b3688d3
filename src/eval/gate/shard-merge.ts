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
 * Pure; inputs are never mutated.
 */
import { DataValidationError, type DataIssue } from "../../errors.js";
import { GRAPH_IDENTITY_KEYS, parseReport, REPORT_VERSION } from "../report/schemas.js";
import { differingPaths } from "../report/run-config-text.js";
import { assignShards } from "./shard.js";
import { DEFAULT_RESAMPLE, DEFAULT_SAMPLES, DEFAULT_SEED } from "../stats/bootstrap.js";
import type {
  GraphRunInfo,
  JudgeInfo,
  JudgeUsage,
  Report,
  RetrievalRunConfig,
  RunInfo,
  ShardInfo,
  Timings,
  TurnReport,
} from "../report/types.js";

/** One shard report as read from disk: its file name and its parsed JSON. */
export interface ShardFile {
  file: string;
  data: unknown;
}

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

const fail = (issues: DataIssue[]): never => {
  throw new DataValidationError(issues);
};

const show = (v: unknown) => (v === undefined ? "absent" : (JSON.stringify(v) ?? String(v)));

/** Dotted path of the first field where `a` and `b` differ (object keys in sorted order), or null when they are equal. */
export function firstDifference(a: unknown, b: unknown, at = ""): { field: string; a: unknown; b: unknown } | null {
  if (Object.is(a, b)) return null;
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return { field: `${at}.length`.replace(/^\./, ""), a: a.length, b: b.length };
    for (let i = 0; i < a.length; i++) {
      const d = firstDifference(a[i], b[i], `${at}[${i}]`);
      if (d !== null) return d;
    }
    return null;
  }
  if (
    typeof a === "object" &&
    a !== null &&
    typeof b === "object" &&
    b !== null &&
    !Array.isArray(a) &&
    !Array.isArray(b)
  ) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    for (const k of keys) {
      const d = firstDifference(
        (a as Record<string, unknown>)[k],
        (b as Record<string, unknown>)[k],
        at === "" ? k : `${at}.${k}`,
      );
      if (d !== null) return d;
    }
    return null;
  }
  return { field: at, a, b };
}

interface Shard {
  file: string;
  raw: Record<string, unknown>;
  report: Report;
  shard: ShardInfo;
}

/** The identity every shard must share with the first: what was run, how, and on which selection. */
function identity(s: Shard): Record<string, unknown> {
  // `retrieval` is per locale and a shard holds only some locales' turns: checked locale by locale in mergeRetrieval.
  // A --graph run's `run.graph` counts are per shard (recomputed from the merged turns): only its identity and scoring are compared.
  const { datasetHash: _ownHash, retrieval: _retrieval, graph, ...run } = s.raw.run as Record<string, unknown>;
  const judge = s.report.judge;
  const graphIdentity =
    graph === undefined
      ? {}
      : { graph: Object.fromEntries(GRAPH_IDENTITY_KEYS.map((k) => [k, (graph as Record<string, unknown>)[k]])) };
  return {
    schemaVersion: s.report.schemaVersion,
    shard: { count: s.shard.count, rule: s.shard.rule, dataset: s.shard.dataset },
    run: { ...run, ...graphIdentity },
    bootstrap: s.raw.bootstrap,
    chance: (s.raw.chance as { cardsPerLocale?: unknown } | undefined)?.cardsPerLocale,
    judge: judge === undefined ? undefined : { model: judge.model, prompt: judge.prompt },
    counterfactual: counterfactualOf(s),
    // `--repeat N`: every shard ran the same number of repeats (or none).
    repeats: s.report.repeats?.n,
  };
}

/** Whether a shard ran counterfactual retrieval (and why not): its `queryAttribution` header; undefined when it has no such section. */
function counterfactualOf(s: Shard): { enabled: boolean; reason?: string } | undefined {
  const qa = s.report.queryAttribution;
  return qa === undefined
    ? undefined
    : { enabled: qa.enabled, ...(qa.reason !== undefined ? { reason: qa.reason } : {}) };
}

const FIELD_NAMES: Record<string, string> = {
  "shard.count": "shard count",
  "shard.rule": "assignment rule",
  "shard.dataset": "case selection (dataset hash, case ids or turns)",
  run: "run configuration",
  bootstrap: "bootstrap settings",
  chance: "card counts",
  judge: "judge",
  repeats: "number of repeats (--repeat)",
};

function fieldName(field: string): string {
  for (const [prefix, name] of Object.entries(FIELD_NAMES))
    if (field === prefix || field.startsWith(`${prefix}.`) || field.startsWith(`${prefix}[`)) return name;
  return field;
}

/** Reads each file's report and its `shard` section (a non-shard report is refused). */
function readShards(files: readonly ShardFile[]): Shard[] {
  if (files.length === 0) fail([{ file: "retrace merge", message: "no shard report given" }]);
  return files.map(({ file, data }) => {
    const report = parseReport(data, file); // ReportSchema: fields and the shard section checked, exit 2 naming the field
    if (report.shard === undefined)
      fail([
        {
          file,
          field: "shard",
          message:
            "not a shard report (no `shard` section): retrace merge takes the reports written by `retrace eval --shard i/n`",
        },
      ]);
    // Shards came with schemaVersion 2; a version 2 or 3 shard is migrated on read (judge counters into timings, retrieval settings opaque) and merges with current ones.
    const written = (data as Record<string, unknown>).schemaVersion;
    if (report.schemaVersion !== REPORT_VERSION || (written !== 2 && written !== 3 && written !== REPORT_VERSION))
      fail([
        {
          file,
          field: "schemaVersion",
          message: `a shard report is written with schemaVersion 2, 3 or ${REPORT_VERSION}`,
        },
      ]);
    return { file, raw: data as Record<string, unknown>, report, shard: report.shard as ShardInfo };
  });
}

/** Every shard agrees with the first on identity(); each index given once; none missing. */
function checkSet(shards: readonly Shard[]): void {
  const first = shards[0]!;
  const ref = identity(first);
  for (const s of shards.slice(1)) {
    const d = firstDifference(identity(s), ref);
    if (d !== null)
      fail([
        {
          file: s.file,
          field: d.field,
          message: `differs from ${first.file}: ${show(d.a)} here, ${show(d.b)} there. The shards of one merge must come from one run's configuration (${fieldName(d.field)} differs)`,
        },
      ]);
  }
  const byIndex = new Map<number, Shard>();
  for (const s of shards) {
    const other = byIndex.get(s.shard.index);
    if (other !== undefined)
      fail([
        {
          file: s.file,
          field: "shard.index",
          message: `shard ${s.shard.index}/${s.shard.count} is given twice (also ${other.file})`,
        },
      ]);
    byIndex.set(s.shard.index, s);
  }
  const count = first.shard.count;
  const missing = Array.from({ length: count }, (_, i) => i + 1).filter((i) => !byIndex.has(i));
  if (missing.length > 0)
    fail([
      {
        file: "retrace merge",
        message: `missing shard${missing.length === 1 ? "" : "s"} ${missing.map((i) => `${i}/${count}`).join(", ")} (given: ${[
          ...byIndex.keys(),
        ]
          .sort((a, b) => a - b)
          .map((i) => `${i}/${count} ${byIndex.get(i)!.file}`)
          .join(", ")}); every shard of a run must be merged`,
      },
    ]);
}

/**
 * Each shard's turns are exactly its cases' turns, 0..m−1 each, in its case
 * order; no case is in two shards. Returns each case's turns. The shards of a
 * `--traces` run (`dataset.caseTurns`) hold only the recorded turns that
 * joined: their turns are in increasing order within the case's turns, and a
 * case may have none.
 */
function collectTurns(shards: readonly Shard[]): Map<string, { file: string; turns: TurnReport[] }> {
  const dataset = shards[0]!.shard.dataset;
  const caseTurns =
    dataset.caseTurns === undefined ? undefined : new Map(dataset.caseIds.map((id, i) => [id, dataset.caseTurns![i]]));
  if (caseTurns !== undefined && dataset.caseTurns!.length !== dataset.caseIds.length)
    fail([
      {
        file: shards[0]!.file,
        field: "shard.dataset.caseTurns",
        message: `expected one turn count per selected case (${dataset.caseIds.length}), got ${dataset.caseTurns!.length}`,
      },
    ]);
  const inDataset = new Set(dataset.caseIds);
  const byCase = new Map<string, { file: string; turns: TurnReport[] }>();
  for (const s of shards) {
    for (const [i, id] of s.shard.caseIds.entries()) {
      if (!inDataset.has(id))
        fail([
          {
            file: s.file,
            field: `shard.caseIds[${i}]`,
            message: `case ${show(id)} is not in the selection the shards split`,
          },
        ]);
      const other = byCase.get(id);
      if (other !== undefined)
        fail([
          {
            file: s.file,
            field: `shard.caseIds[${i}]`,
            message: `case ${show(id)} is also in ${other.file}: shards must not overlap`,
          },
        ]);
      byCase.set(id, { file: s.file, turns: [] });
    }
    const rawTurns = s.raw.turns as TurnReport[];
    for (const [i, t] of rawTurns.entries()) {
      const entry = byCase.get(t.caseId);
      if (entry === undefined || entry.file !== s.file)
        fail([
          {
            file: s.file,
            field: `turns[${i}].caseId`,
            message: `turn of case ${show(t.caseId)}, which is not one of this shard's cases (shard.caseIds)`,
          },
        ]);
      const e = entry!;
      if (caseTurns !== undefined) {
        const last = e.turns.at(-1)?.turn ?? -1;
        if (t.turn <= last || t.turn >= caseTurns.get(t.caseId)!)
          fail([
            {
              file: s.file,
              field: `turns[${i}].turn`,
              message: `expected a turn of case ${show(t.caseId)} after turn ${last} and below ${caseTurns.get(t.caseId)}, got ${t.turn}`,
            },
          ]);
      } else if (t.turn !== e.turns.length)
        fail([
          {
            file: s.file,
            field: `turns[${i}].turn`,
            message: `expected turn ${e.turns.length} of case ${show(t.caseId)}, got ${t.turn}`,
          },
        ]);
      e.turns.push(t);
    }
    if (caseTurns !== undefined) continue; // recorded traces: the turns that joined, checked above
    const count = s.shard.caseIds.reduce((n, id) => n + (byCase.get(id)?.turns.length ?? 0), 0);
    if (count !== s.shard.turns || count !== rawTurns.length)
      fail([
        {
          file: s.file,
          field: "shard.turns",
          message: `the shard says ${s.shard.turns} turns but its report holds ${rawTurns.length}`,
        },
      ]);
    for (const [i, id] of s.shard.caseIds.entries())
      if (byCase.get(id)!.turns.length === 0)
        fail([{ file: s.file, field: `shard.caseIds[${i}]`, message: `case ${show(id)} has no turn in this report` }]);
  }
  return byCase;
}

/** The rule, recomputed from the merged turn counts, assigns each shard exactly the cases it ran. */
function checkAssignment(shards: readonly Shard[], byCase: Map<string, { turns: TurnReport[] }>): void {
  const dataset = shards[0]!.shard.dataset;
  const total = [...byCase.values()].reduce((n, c) => n + c.turns.length, 0);
  // A --traces run's shards hold the turns that joined; the assignment reads the cases' own turn counts (dataset.caseTurns).
  if (dataset.caseTurns === undefined && total !== dataset.turns)
    fail([
      {
        file: shards[0]!.file,
        field: "shard.dataset.turns",
        message: `the selection has ${dataset.turns} turns but the shards hold ${total} together`,
      },
    ]);
  const count = shards[0]!.shard.count;
  const shardOf = assignShards(
    dataset.caseIds.map((id, i) => ({ id, turns: dataset.caseTurns?.[i] ?? byCase.get(id)!.turns.length })),
    count,
  );
  for (const s of shards) {
    const expected = dataset.caseIds.filter((_, i) => shardOf[i] === s.shard.index);
    const d = firstDifference(s.shard.caseIds, expected);
    if (d !== null)
      fail([
        {
          file: s.file,
          field: "shard.caseIds",
          message: `shard ${s.shard.index}/${count} ran ${show(s.shard.caseIds.slice(0, 5))}${s.shard.caseIds.length > 5 ? "…" : ""} but the assignment rule gives it ${show(expected.slice(0, 5))}${expected.length > 5 ? "…" : ""} (first difference at ${d.field})`,
        },
      ]);
  }
}

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
    ...(first.raw.run as RunInfo),
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
