/**
 * The regression baseline (docs/gates-and-exit-codes.md): a versioned JSON file holding a
 * run's aggregates and per-turn scores, written only on explicit request
 * (`--update-baseline`), read back with validation, and compared with a new
 * run only when both measured the same thing (same eval cases, same k, same
 * retrieval configuration).
 *
 * File shape (schemaVersion 4, defined by BaselineSchema in src/eval/report/schemas.ts;
 * older versions are migrated on read, docs/schema-versions.md):
 * ```json
 * { "schemaVersion": 4, "created": "2025-01-01T00:00:00.000Z", "datasetHash": "…", "kbHash": "…", "k": 5,
 *   "source": { "kind": "own" },
 *   "config": { "embedder": "builtin-hash-ngram-384", "mode": "hybrid", "rerank": null },
 *   "storeKind": "local",
 *   "aggregates": { "retrieval_hit_at_k": { "mean": 0.9, "n": 120, "ci95": [0.85, 0.95] } },
 *   "splits": { "locale": { "en": { "retrieval_hit_at_k": { "mean": 0.95, "n": 40, "ci95": [0.9, 1] } } } },
 *   "perTurn": { "en-refund-003#0": { "retrieval_hit_at_k": 1 } } }
 * ```
 * `source` is what the run evaluated (`own`, `graph` with its module and
 * export, `traces`; ./run-source.ts); `config.embedder` is null for a graph
 * or a recording. `storeKind` (local | remote | memory | none | graph) and `splits` (the report's
 * split aggregates, read by `retrace baseline floors`) are optional, so
 * baselines written before them still load. A `--graph` run's baseline also
 * records how it was scored and what ran (`graph`: module, export, module
 * hash, retrieval-call mode, id keys or id-map hash, configurable hash;
 * BaselineGraphSchema): absent in baselines of retrace's own graph and in
 * older ones. A `--repeat N` run's baseline records its repeats (`repeats`:
 * n, identical, and each turn's scores per repeat when they differed), what
 * the gate's interval-aware drop test resamples. `retrieval` (optional) is
 * the run's retrieval settings per locale (the report's `run.retrieval`): a
 * run whose settings differ is compared, with a note naming the change.
 */
import { readTextFileOrThrow } from "../../kb/text.js";
import { embedderIdentity } from "../../contract/embedder-id.js";
import { writeFileAtomic } from "../../atomic.js";
import { BaselineMismatchError, DataValidationError, type DataIssue } from "../../errors.js";
import { BASELINE_VERSION, parseBaselineData, type BaselineData, type BaselineGraph } from "../report/schemas.js";
import { turnKey } from "../stats/bootstrap.js";
import type { Aggregate, Report, RetrievalRunConfig } from "../report/types.js";
import { differingPaths, retrievalConfigText } from "../report/run-config-text.js";
import { isDeepStrictEqual } from "node:util";
import { parseJsonOrThrow } from "../../kb/json.js";
import { sameSource, sourceOfReport, sourceText } from "./run-source.js";

export { BASELINE_VERSION };

/** A baseline, inferred from BaselineSchema (src/eval/report/schemas.ts); `created` is the ISO-8601 time it was written, `perTurn` maps `caseId#turn` → key → score. */
export type Baseline = BaselineData;
export type BaselineConfig = Baseline["config"];

/** Kind of store a run used: a self-started local Chroma, a Chroma server at a URL, an in-process index, none, or a `--graph` run's own (`graph`). */
export type StoreKind = "local" | "remote" | "memory" | "none" | "graph";

/** The kind of a report's `run.store` ("local", "memory", "none", "graph" (a `--graph` run), or a server URL → "remote"). */
export function storeKindOf(store: string): StoreKind {
  if (store === "local" || store === "memory" || store === "none" || store === "graph") return store;
  return "remote";
}

/**
 * How a `--graph` or `--traces` report was scored and what ran, as its baseline records it (a recording has no module:
 * its `moduleHash` is null); undefined for retrace's own graph and for graph reports written before the module hash.
 */
export function graphScoringOf(report: Pick<Report, "run">): BaselineGraph | undefined {
  const g = report.run.graph;
  if (g === undefined || (g.moduleHash === undefined && report.run.source !== "traces")) return undefined;
  return {
    module: g.file,
    exportName: g.exportName,
    moduleHash: g.moduleHash ?? null,
    retrievalCall: g.retrievalCall,
    idKey: g.idKey,
    idMapHash: g.idMapHash ?? null,
    configurableHash: g.configurable?.hash ?? null,
  };
}

function configOf(report: Report): BaselineConfig {
  return { embedder: report.run.embedder, mode: report.run.mode ?? null, rerank: report.run.rerank ?? null };
}

/** The baseline a report would be saved as. */
export function baselineFromReport(report: Report, created: Date = new Date()): Baseline {
  const perTurn: Record<string, Record<string, number>> = {};
  for (const t of report.turns) {
    if (t.results.length === 0) continue;
    const scores: Record<string, number> = {};
    for (const r of t.results) scores[r.key] = r.score;
    perTurn[turnKey(t.caseId, t.turn)] = scores;
  }
  return {
    schemaVersion: BASELINE_VERSION,
    created: created.toISOString(),
    datasetHash: report.run.datasetHash,
    kbHash: report.run.kbHash,
    k: report.run.k,
    source: sourceOfReport(report),
    config: configOf(report),
    storeKind: report.run.storeKind ?? storeKindOf(report.run.store),
    ...(graphScoringOf(report) !== undefined ? { graph: graphScoringOf(report) } : {}),
    ...(report.run.retrieval !== undefined ? { retrieval: structuredClone(report.run.retrieval) } : {}),
    // A copy: the baseline must not alias (and later edits must not change) the report.
    aggregates: structuredClone(report.aggregates),
    splits: structuredClone(report.splits) as Record<string, Record<string, Record<string, Aggregate>>>,
    perTurn,
    // The stage shares, for `--max-stage-drop` (docs/gates-and-exit-codes.md).
    ...(report.funnel !== undefined ? { funnel: structuredClone(report.funnel.stages) } : {}),
    // A `--repeat N` run: what the gate's interval-aware test resamples (docs/statistics.md, "Baseline gates with repeats").
    ...(report.repeats !== undefined ? { repeats: repeatsOf(report, report.repeats) } : {}),
  };
}

/** The baseline's `repeats`: n, identical, and (when the repeats differed) each turn's scores per repeat. */
function repeatsOf(report: Report, section: NonNullable<Report["repeats"]>): NonNullable<Baseline["repeats"]> {
  if (section.identical) return { n: section.n, identical: true };
  const perTurn: Record<string, Record<string, number[]>> = {};
  for (const t of report.turns)
    if (t.repeatScores !== undefined) perTurn[turnKey(t.caseId, t.turn)] = structuredClone(t.repeatScores);
  return { n: section.n, identical: false, perTurn };
}

/**
 * Write the report's baseline to `path` atomically: the JSON goes to a
 * temporary file in the same directory, which is then renamed over `path`
 * (a reader sees the old file or the new one, never half of one). The
 * temporary file is removed if anything fails. Returns what was written.
 */
export async function writeBaseline(path: string, report: Report, created: Date = new Date()): Promise<Baseline> {
  const baseline = baselineFromReport(report, created);
  await writeFileAtomic(path, baselineToJSON(baseline), { inPlace: true }); // replacing the baseline is the purpose
  return baseline;
}

/** A baseline as its file holds it (2-space JSON and a final newline). */
export function baselineToJSON(baseline: Baseline): string {
  return `${JSON.stringify(baseline, null, 2)}\n`;
}

/**
 * Validate a parsed baseline (migrating an older schemaVersion), and that it
 * agrees with itself: every retrieval metric its turns carry has an aggregate
 * over exactly those turns (a file whose aggregates were emptied, or whose
 * `perTurn` lost entries, would otherwise fail the gate as a "regression").
 * Throws DataValidationError (exit 2) naming `file` and each bad field.
 */
export function parseBaseline(data: unknown, file: string): Baseline {
  const baseline = parseBaselineData(data, file);
  const counts = new Map<string, number>();
  for (const scores of Object.values(baseline.perTurn))
    for (const key of Object.keys(scores)) counts.set(key, (counts.get(key) ?? 0) + 1);
  const issues: DataIssue[] = [];
  if (counts.size === 0)
    issues.push({
      file,
      field: "perTurn",
      message:
        "expected the scores of the baseline's turns, got none: it cannot be compared with; re-create it with --update-baseline",
    });
  for (const [key, n] of [...counts].sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (!key.startsWith("retrieval_")) continue; // answer-side means may cover one part of the split only (docs/holdout.md)
    const agg = baseline.aggregates[key];
    if (agg === undefined)
      issues.push({
        file,
        field: `aggregates.${key}`,
        message: `missing, though ${n} turns in perTurn carry ${key}: the file is damaged; re-create it with --update-baseline`,
      });
    else if (agg.n !== n)
      issues.push({
        file,
        field: `aggregates.${key}.n`,
        message: `${agg.n} turns, but perTurn holds ${key} for ${n}: the file is damaged (entries removed or added by hand); re-create it with --update-baseline`,
      });
  }
  if (issues.length > 0) throw new DataValidationError(issues);
  return baseline;
}

/**
 * The baseline's turns are turns of `cases` (the whole dataset the run
 * reads; called once its `datasetHash` matched): a `perTurn` key naming a case
 * or turn the dataset does not have is exit 2 naming the file and the key,
 * before the sweep.
 */
export function checkBaselineTurns(
  baseline: Baseline,
  file: string,
  cases: readonly { id: string; turns: readonly unknown[] }[],
): void {
  const turns = new Map(cases.map((c) => [c.id, c.turns.length]));
  const issues: DataIssue[] = [];
  for (const key of Object.keys(baseline.perTurn)) {
    const hash = key.lastIndexOf("#");
    const n = turns.get(key.slice(0, hash));
    const turn = Number(key.slice(hash + 1));
    if (hash < 0 || n === undefined || !Number.isInteger(turn) || turn < 0 || turn >= n)
      issues.push({
        file,
        field: `perTurn.${key}`,
        message:
          "names no turn of the eval cases, though the dataset hash matches: the file is damaged; re-create it with --update-baseline",
      });
    if (issues.length >= 5) break;
  }
  if (issues.length > 0) throw new DataValidationError(issues);
}

/** Read and validate a baseline file (DataValidationError naming the file and the field). */
export async function readBaseline(path: string): Promise<Baseline> {
  const text = await readTextFileOrThrow(path, {
    missing: "baseline file not found (create it with --update-baseline)",
  }); // src/kb/text.ts
  return parseBaseline(parseJsonOrThrow(text, { file: path, expected: "a retrace baseline JSON file" }), path); // src/kb/json.ts
}

const short = (h: string | null) => (h === null ? "none" : `sha256 ${h.slice(0, 12)}`);

/** One difference in how two `--graph` runs were scored: the field, both values, and why a comparison would be wrong. */
export interface ScoringDifference {
  field: "graph.retrievalCall" | "graph.idKey" | "graph.idMapHash";
  before: string | null;
  now: string | null;
  why: string;
}

const callText = (c: string) => (c === "all" ? "every retrieval call" : `the ${c} retrieval step`);

/**
 * How two `--graph` runs' scorings differ (pure): `refusals` — the
 * retrieval-call mode or the id mapping (id keys, id-map module) differs, so a
 * comparison would measure the scoring change, not the graph — and `notes` for
 * what ran differently (the module's content: "graph module changed since the
 * baseline"; the `--configurable`). `what` names the two sides.
 */
export function graphScoringDifferences(
  before: BaselineGraph,
  now: BaselineGraph,
  what = { before: "the baseline", now: "this run" },
): { refusals: ScoringDifference[]; notes: string[] } {
  const refusals: ScoringDifference[] = [];
  if (before.retrievalCall !== now.retrievalCall)
    refusals.push({
      field: "graph.retrievalCall",
      before: before.retrievalCall,
      now: now.retrievalCall,
      why: `${what.before} scored ${callText(before.retrievalCall)} of each turn and ${what.now} ${callText(now.retrievalCall)}: a comparison would measure the scoring change, not a regression; use --retrieval-call ${before.retrievalCall}, or re-create the baseline with --update-baseline`,
    });
  if (before.idKey !== now.idKey)
    refusals.push({
      field: "graph.idKey",
      before: before.idKey,
      now: now.idKey,
      why: `${what.before} read card ids from ${before.idKey} and ${what.now} from ${now.idKey}: a comparison would measure the id mapping, not a regression; use the same --id-key / --id-map, or re-create the baseline with --update-baseline`,
    });
  else if (before.idMapHash !== now.idMapHash)
    refusals.push({
      field: "graph.idMapHash",
      before: before.idMapHash,
      now: now.idMapHash,
      why: `the --id-map module differs (${short(before.idMapHash)} in ${what.before}, ${short(now.idMapHash)} in ${what.now}): a comparison would measure the id mapping, not a regression; re-create the baseline with --update-baseline`,
    });
  const notes: string[] = [];
  if (before.moduleHash !== now.moduleHash && before.module === now.module && before.exportName === now.exportName)
    notes.push(
      `graph module ${what.before === "the baseline" ? "changed since the baseline" : `differs between ${what.before} and ${what.now}`} (${before.module}: ${short(before.moduleHash)} in ${what.before}, ${short(now.moduleHash)} in ${what.now}); comparing anyway`,
    );
  if (before.configurableHash !== now.configurableHash)
    notes.push(
      `run.configurable differs (${short(before.configurableHash)} in ${what.before}, ${short(now.configurableHash)} in ${what.now}); comparing anyway`,
    );
  return { refusals, notes };
}

/** graphScoringDifferences for the gate: throws BaselineMismatchError (exit 2) on the first refusal, else returns the notes. */
export function checkGraphScoring(before: BaselineGraph, now: BaselineGraph): string[] {
  const { refusals, notes } = graphScoringDifferences(before, now);
  const r = refusals[0];
  if (r !== undefined) throw new BaselineMismatchError(r.field, r.before, r.now, r.why);
  return notes;
}

/** The note for a `--graph` run compared with a graph baseline that does not record its scoring (written before it was). */
export const GRAPH_SCORING_MISSING =
  "the baseline does not record how it was scored (retrieval-call mode, id keys or id-map hash, configurable hash, graph module hash: it was written before they were recorded); comparing as before, without checking them — re-create it with --update-baseline to record them";

/**
 * The note for retrieval settings that differ between a baseline and a run
 * (pure): each locale whose settings differ, both sides as the report prints
 * them; null when they are the same or either side does not record them (a
 * baseline written before they were, a run without retrieval).
 */
export function retrievalDifferences(before: Baseline["retrieval"], now: Report["run"]["retrieval"]): string | null {
  if (before === undefined || now === undefined) return null;
  const locales = [...new Set([...Object.keys(before), ...Object.keys(now)])].sort();
  const text = (c: RetrievalRunConfig | undefined) => (c === undefined ? "(not run)" : retrievalConfigText(c));
  // Locales with the same change are named together.
  const groups = new Map<string, string[]>();
  for (const l of locales) {
    if (isDeepStrictEqual(before[l], now[l])) continue;
    const paths = before[l] !== undefined && now[l] !== undefined ? differingPaths(before[l], now[l]) : [];
    const change = `${text(before[l])} in the baseline, ${text(now[l])} now${paths.length > 0 ? ` [${paths.join(", ")}]` : ""}`;
    groups.set(change, [...(groups.get(change) ?? []), l]);
  }
  if (groups.size === 0) return null;
  const each = [...groups].map(
    ([change, ls]) => `${ls.length === 1 && ls[0] === "*" ? "" : `${ls.join(", ")}: `}${change}`,
  );
  return `retrieval settings differ from the baseline's (${each.join("; ")}); comparing anyway — the deltas measure the change`;
}

/** An embedder is compared by its identity (src/contract/embedder-id.ts): a corpus-fit embedder without its fit hash. */
function sameEmbedder(a: string | null, b: string | null): boolean {
  return a === b || (a !== null && b !== null && embedderIdentity(a) === embedderIdentity(b));
}

/**
 * Throw BaselineMismatchError when the baseline and the run did not measure
 * the same thing, checked in this order: `datasetHash` (other eval cases:
 * other turns, other gold), `k` (scores at another cutoff), `source` (another
 * graph, or recorded traces: ./run-source.ts), then the
 * retrieval configuration `config.embedder`, `config.mode`, `config.rerank`
 * (a comparison would measure the configuration change, not a regression;
 * an embedder is compared by its identity, src/contract/embedder-id.ts: a
 * corpus-fit embedder without its fit hash).
 * A different `kbHash` is allowed — a KB edit is exactly what a regression
 * check should catch — and returned as a note for the caller to show
 * (this function does no I/O, so the gate that calls it stays pure).
 */
export function assertComparable(baseline: Baseline, report: Report): string[] {
  if (baseline.datasetHash !== report.run.datasetHash) {
    throw new BaselineMismatchError("datasetHash", baseline.datasetHash, report.run.datasetHash);
  }
  if (baseline.k !== report.run.k) throw new BaselineMismatchError("k", baseline.k, report.run.k);
  const source = sourceOfReport(report);
  if (!sameSource(baseline.source, source))
    throw new BaselineMismatchError("source", sourceText(baseline.source), sourceText(source));
  const cfg = configOf(report);
  for (const field of ["embedder", "mode", "rerank"] as const) {
    // A corpus-fit embedder refitted after a KB edit is the same embedder (its identity, src/contract/embedder-id.ts).
    const same =
      field === "embedder"
        ? sameEmbedder(baseline.config.embedder, cfg.embedder)
        : baseline.config[field] === cfg[field];
    if (!same) {
      throw new BaselineMismatchError(`config.${field}`, baseline.config[field], cfg[field]);
    }
  }
  const notes: string[] = [];
  const scoring = graphScoringOf(report);
  if (scoring !== undefined) {
    if (baseline.graph === undefined) notes.push(GRAPH_SCORING_MISSING);
    else notes.push(...checkGraphScoring(baseline.graph, scoring));
  }
  const retrieval = retrievalDifferences(baseline.retrieval, report.run.retrieval);
  if (retrieval !== null) notes.push(retrieval);
  if (baseline.kbHash !== report.run.kbHash) {
    notes.push(
      `the baseline was made with another knowledge base (kbHash ${baseline.kbHash}, now ${report.run.kbHash}); comparing anyway`,
    );
  }
  return notes;
}
