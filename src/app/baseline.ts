/**
 * Baselines that cannot be misused (docs/gates-and-exit-codes.md):
 *
 * - the default baseline path follows `--kb`: `<kb>/eval/baseline.json`;
 * - `checkBaselineBeforeRun` compares a baseline with what a run WILL
 *   measure (dataset, `--locale`/`--case` subset, k, what runs — retrace's own
 *   graph, a `--graph` module and export, recorded traces — then mode,
 *   reranking, embedder when it is known without loading a model, or a
 *   graph's scoring) before Chroma starts, a graph loads or anything is
 *   ingested, for every source alike, and its advice names the exact command to run;
 * - `suggestFloors` (`retrace report [FILE] --floors`) gives evidence-based
 *   floors (observed minus slack: the lower bound of the recorded 95%
 *   interval, per scope, rounded down to the step) from a baseline or report
 *   file (`readAggregates`).
 */
import { modelLanguages } from "../retrieval/embedders/locale-routed.js";
import path from "node:path";
import { readTextFileOrThrow } from "../kb/text.js";
import { BaselineMismatchError, DataValidationError } from "../errors.js";
import { graphScoringDifferences, parseBaseline, type Baseline } from "../eval/gate/baseline.js";
import { sameSource, sourceText, type BaselineSource } from "../eval/gate/run-source.js";
import type { BaselineGraph } from "../eval/report/schemas.js";
import { FLOOR_OPTIONS } from "../eval/gate/gate.js";
import { parseReport } from "../eval/report/schemas.js";
import type { Aggregate } from "../eval/report/types.js";
import { HashingEmbedder } from "../retrieval/embedders/builtin.js";
import { locateModel, modelIdOf, parseModelSpec } from "../retrieval/embedders/transformers.js";
import { parseJsonOrThrow } from "../kb/json.js";

/** `<kb>/eval/baseline.json`: where a KB's baseline lives (read by default, written by --update-baseline). */
export function defaultBaselineFile(kbDir: string): string {
  return path.join(kbDir, "eval", "baseline.json");
}

/** The options of `retrace eval` that decide what a baseline must match, and how to spell them again. */
export interface RunIntent {
  kb: string;
  cases?: string;
  /** What runs: retrace's own graph (the default), a graph of your own, recorded traces. */
  source?: BaselineSource;
  /** How the command names the source: `--graph SPEC` as typed, `--traces PATH`, `--catalog FILE`. */
  graph?: string;
  traces?: string;
  catalog?: string;
  /** A `--graph` or `--traces` run: how it will be scored (retrieval-call mode, id keys, id map; compared as the gate compares them). */
  scoring?: BaselineGraph;
  k: number;
  /** retrace's own graph: the retrieval mode and embedder spec (default `hybrid`, `auto`). */
  mode?: string;
  embedder?: string;
  rerank?: string;
  locale?: string[];
  case?: string[];
  /** The baseline file (as given, or the default of the KB). */
  baselineFile: string;
  /** Whether the file is the KB's default (so the command need not name it). */
  baselineIsDefault: boolean;
  /** The baseline checks of the run as `--gate` values (`max-drop=auto`, `max-flips=0`), repeated in the command lines (a baseline file names no check itself). */
  gates?: readonly string[];
}

/** What the run will measure, known before anything starts. */
export interface RunPlan {
  /** datasetHash of the selected cases. */
  datasetHash: string;
  /** datasetHash of every case of the dataset. */
  fullDatasetHash: string;
  selected: number;
  total: number;
}

const q = (s: string) => (/^[\w./:@=,+-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

/** The `retrace eval` command line for `intent` with some options replaced (undefined = drop). */
export function evalCommandLine(
  intent: RunIntent,
  over: Partial<Record<"k" | "mode" | "embedder" | "rerank" | "filters" | "update", string | null>> = {},
): string {
  const parts = ["retrace", "eval"];
  if (intent.graph !== undefined) parts.push("--graph", q(intent.graph));
  if (intent.traces !== undefined) parts.push("--traces", q(intent.traces));
  if (intent.catalog !== undefined) parts.push("--catalog", q(intent.catalog));
  if (intent.kb !== "kb") parts.push("--kb", q(intent.kb));
  if (intent.cases !== undefined) parts.push("--cases", q(intent.cases));
  const k = over.k !== undefined ? over.k : String(intent.k);
  if (k !== null && k !== "5") parts.push("-k", k);
  // The retrieval settings are keys of `--config` (src/cli/settings.ts), given inline.
  const retrieval: Record<string, string> = {};
  const mode = over.mode !== undefined ? over.mode : (intent.mode ?? null);
  if (mode !== null && mode !== "hybrid") retrieval.mode = mode;
  const embedder = over.embedder !== undefined ? over.embedder : (intent.embedder ?? null);
  if (embedder !== null && embedder !== "auto") retrieval.embedder = embedder;
  const rerank = over.rerank !== undefined ? over.rerank : (intent.rerank ?? null);
  if (rerank !== null) retrieval.rerank = rerank;
  if (Object.keys(retrieval).length > 0) parts.push("--config", q(JSON.stringify({ retrieval })));
  if (over.filters !== null) {
    for (const l of intent.locale ?? []) parts.push("--locale", q(l));
    for (const c of intent.case ?? []) parts.push("--case", q(c));
  }
  if (!intent.baselineIsDefault) parts.push("--baseline", q(intent.baselineFile));
  if (over.update !== undefined && over.update !== null) parts.push("--update-baseline");
  else for (const g of intent.gates ?? []) parts.push("--gate", q(g));
  return parts.join(" ");
}

/**
 * The id of the embedder `spec` will resolve to, found without loading a
 * model: `builtin` → the built-in embedder's id; `auto` and `lsa` → null (the
 * LSA embedder's id is known only after its fit; `auto` never picks a model:
 * docs/models.md); a model id → that id with the precision it names, else the
 * one its folder holds (`Xenova/bge-small-en-v1.5@fp32`; the same file lookup
 * resolveEmbedder makes), else the id alone (the load then fails, exit 3).
 */
export async function predictEmbedderId(spec: string): Promise<string | null> {
  if (spec === "builtin") return new HashingEmbedder().id;
  // The LSA id carries the hash of a fit on the chunks: known only after the fit (the gate checks it after the run).
  if (spec === "lsa" || spec === "auto") return null;
  // Per-locale embedders (docs/models.md): which locales a model covers depends on the KB's locales, known after the load (the gate checks it after the run).
  if (spec.includes(";") || modelLanguages(spec) !== undefined) return null;
  const { model, dtype } = parseModelSpec(spec);
  if (dtype !== undefined) return `${modelIdOf(model)}@${dtype}`;
  const location = await locateModel(model).catch(() => null);
  return location?.found === true ? `${modelIdOf(model)}@${location.dtype}` : modelIdOf(model);
}

/**
 * Throws BaselineMismatchError (exit 2) when `baseline` cannot be compared
 * with the run `intent` describes, before it starts; the advice names the
 * command that can. One check for every source (retrace's own graph,
 * `--graph`, `--traces`), in order: dataset (a `--locale`/`--case` subset of
 * the baseline's full set is named as such), k, what runs (another source,
 * or another graph module or export: ../eval/gate/run-source.ts); then for
 * retrace's own graph mode, reranking on/off and the embedder when
 * `embedderId` (predictEmbedderId) is given, and for a graph or a recording
 * how it is scored (retrieval-call mode, id keys, id map). The reranker's id
 * is only known once its model loads, and a graph's notes (module or
 * configurable changed) belong with the gate: both after the run.
 */
export function checkBaselineBeforeRun(
  baseline: Baseline,
  intent: RunIntent,
  plan: RunPlan,
  embedderId: string | null = null,
): void {
  const file = intent.baselineFile;
  const recreate = `to replace it with this run's results instead, run \`${evalCommandLine(intent, { filters: null, update: "" })}\``;
  if (baseline.datasetHash !== plan.datasetHash) {
    if (plan.selected < plan.total && baseline.datasetHash === plan.fullDatasetHash) {
      throw new BaselineMismatchError(
        "datasetHash",
        baseline.datasetHash,
        plan.datasetHash,
        `${file} covers all ${plan.total} cases but --locale/--case selects ${plan.selected}; compare the full run with \`${evalCommandLine(intent, { filters: null })}\` (a baseline always covers the whole dataset)`,
      );
    }
    throw new BaselineMismatchError(
      "datasetHash",
      baseline.datasetHash,
      plan.datasetHash,
      `${file} was written for other eval cases (the cases changed since); ${recreate}`,
    );
  }
  if (baseline.k !== intent.k)
    throw new BaselineMismatchError(
      "k",
      baseline.k,
      intent.k,
      `compare at the baseline's k with \`${evalCommandLine(intent, { k: String(baseline.k) })}\`, or ${recreate}`,
    );
  const source: BaselineSource = intent.source ?? { kind: "own" };
  if (!sameSource(baseline.source, source))
    throw new BaselineMismatchError(
      "source",
      sourceText(baseline.source),
      sourceText(source),
      `${file} was written ${baseline.source.kind === source.kind ? "for another graph module or export" : `by ${sourceText(baseline.source)}, not ${sourceText(source)}`}; give this run's baseline with --baseline FILE, or ${recreate}`,
    );
  if (source.kind === "own") checkOwnConfig(baseline, intent, recreate, embedderId);
  else if (intent.scoring !== undefined && baseline.graph !== undefined) {
    const r = graphScoringDifferences(baseline.graph, intent.scoring).refusals[0];
    if (r !== undefined) throw new BaselineMismatchError(r.field, r.before, r.now, r.why);
  }
}

/** retrace's own graph: the baseline's mode, reranking on/off and (when known before the run) embedder. */
function checkOwnConfig(baseline: Baseline, intent: RunIntent, recreate: string, embedderId: string | null): void {
  const mode = intent.mode ?? "hybrid";
  if (baseline.config.mode !== null && baseline.config.mode !== mode)
    throw new BaselineMismatchError(
      "config.mode",
      baseline.config.mode,
      mode,
      `run \`${evalCommandLine(intent, { mode: baseline.config.mode })}\`, or ${recreate}`,
    );
  const rerankOn = intent.rerank !== undefined;
  if ((baseline.config.rerank !== null) !== rerankOn)
    throw new BaselineMismatchError(
      "config.rerank",
      baseline.config.rerank,
      intent.rerank ?? null,
      baseline.config.rerank === null
        ? `run without retrieval.rerank: \`${evalCommandLine(intent, { rerank: null })}\`, or ${recreate}`
        : `run \`${evalCommandLine(intent, { rerank: baseline.config.rerank })}\`, or ${recreate}`,
    );
  if (embedderId !== null && baseline.config.embedder !== embedderId)
    throw new BaselineMismatchError(
      "config.embedder",
      baseline.config.embedder,
      embedderId,
      `run \`${evalCommandLine(intent, { embedder: baseline.config.embedder })}\`, or ${recreate}`,
    );
}

// ---------------------------------------------------------------- retrace report --floors

export interface FloorSuggestion {
  key: string;
  flag: string;
  /** scope → floor (lower bound of the 95% interval, rounded down to the step). */
  floors: Record<string, number>;
  /** Scopes left out and why (n < 2: no interval). */
  skipped: Record<string, string>;
}

/** Round `x` down to a multiple of `step` (float-safe: 0.9 stays 0.9). */
function floorTo(x: number, step: number): number {
  const m = Math.floor(x / step + 1e-9);
  return Number((m * step).toFixed(6));
}

/**
 * Evidence-based floors from recorded aggregates: for each gateable metric
 * and each scope (`all`, then each group of each split: kind, locale, part),
 * the lower bound of the 95% interval, rounded down to `step` ("observed
 * minus slack": a run as good as the recorded one passes with high
 * probability, a real drop below the interval fails). A scope without an
 * interval (n < 2) is skipped with the reason. Pure.
 */
export function suggestFloors(
  aggregates: Record<string, Aggregate>,
  splits: Record<string, Record<string, Record<string, Aggregate>>>,
  step = 0.01,
): FloorSuggestion[] {
  const out: FloorSuggestion[] = [];
  for (const { flag, key } of FLOOR_OPTIONS) {
    const scopes: [string, Aggregate | undefined][] = [["all", aggregates[key]]];
    // Every split but the turn position (1, 2, 3, 4+), which is a view, not a gate scope (src/eval/gate/gate.ts).
    for (const [split, groups] of Object.entries(splits))
      if (split !== "position") for (const [g, byKey] of Object.entries(groups)) scopes.push([g, byKey[key]]);
    const s: FloorSuggestion = { key, flag, floors: {}, skipped: {} };
    for (const [scope, agg] of scopes) {
      if (agg === undefined) continue;
      if (agg.ci95 === undefined) s.skipped[scope] = `n=${agg.n}: no interval`;
      else s.floors[scope] = floorTo(Math.max(0, agg.ci95[0]), step);
    }
    if (Object.keys(s.floors).length > 0 || Object.keys(s.skipped).length > 0) out.push(s);
  }
  return out;
}

/** Reads a baseline or a report JSON; its aggregates and splits. */
export async function readAggregates(file: string): Promise<{
  aggregates: Record<string, Aggregate>;
  splits: Record<string, Record<string, Record<string, Aggregate>>>;
}> {
  const text = await readTextFileOrThrow(file, {
    missing: "no such file (write a baseline with `retrace eval --update-baseline`)",
  });
  const data = parseJsonOrThrow(text, { file, expected: "a retrace baseline or report JSON file" }); // src/kb/json.ts
  if (typeof data === "object" && data !== null && "perTurn" in data) {
    const b = parseBaseline(data, file);
    return { aggregates: b.aggregates, splits: b.splits ?? {} };
  }
  const r = parseReport(data, file);
  if (r.shard !== undefined)
    throw new DataValidationError([
      {
        file,
        field: "shard",
        message: `a partial report (shard ${r.shard.index}/${r.shard.count}): suggest floors from the report of \`retrace merge\` instead (docs/reliability.md)`,
      },
    ]);
  return { aggregates: r.aggregates, splits: r.splits as Record<string, Record<string, Record<string, Aggregate>>> };
}
