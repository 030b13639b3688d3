/**
 * The stage funnel as statistics (docs/metrics.md, "Stage funnel"): per
 * stage, the share of gold-bearing turns whose gold is still present there,
 * with a seeded bootstrap interval resampling whole cases (by default), overall
 * and per split (turn position, kind, locale, part); and the turn-position
 * groups every report splits by. Pure and synchronous.
 *
 * Presence of a gold-bearing turn at a stage:
 *   - `query`: the query did not lose it (its attribution is not `rewrite lost
 *     it`; measured only on turns with a query attribution);
 *   - `dense`, `bm25`, `fused`, `reranked`, `parents`: some gold card is in
 *     that stage's list (the trace summary's goldPositions; measured on turns
 *     whose trace ran that stage);
 *   - `child`, `scored` (a turn captured from a user's graph's retriever runs,
 *     `--graph`; ./gold-ranks.ts): some gold card is in a child run's list of
 *     a scored call (measured on turns with child runs), or in the scored
 *     calls' joined lists (measured on every captured turn, and on a
 *     gold-bearing turn that made no retriever run, where it is absent);
 *   - `final`: hit@k is 1 (measured on every turn with a hit@k score).
 *
 * The one computation of the funnel: the terminal, markdown, HTML page and PR
 * comment render this section (docs/html-report.md).
 */
import { HIT_KEY } from "../measures/metrics.js";
import {
  ClusterMeanBatch,
  DEFAULT_RESAMPLE,
  DEFAULT_SAMPLES,
  DEFAULT_SEED,
  pairedBootstrap,
  turnKey,
  type ClusteredValue,
  type ResampleUnit,
} from "../stats/bootstrap.js";
import { capturedLists, goldRanks } from "./gold-ranks.js";
import { CAPTURED_STAGES, FUNNEL_STAGES, TRACE_STAGES } from "./stages.js";
import type { FunnelReport, FunnelStage, TurnReport } from "./types.js";
import { hasLongPositions, LONG_TURN_POSITIONS, TURN_POSITIONS, turnPosition } from "./positions.js";

/** The funnel's stages in order: the query, the trace's stages, a captured turn's groups, `final` (declared once in ./stages.ts). */
export { FUNNEL_STAGES };

export { hasLongPositions, LONG_TURN_POSITIONS, positionLabel, turnPosition, TURN_POSITIONS } from "./positions.js";

/** Stage → 1 (gold still present) or 0 for one turn; stages not measured on it are absent; null for a turn without gold. */
export function stagePresence(t: TurnReport): Record<string, 0 | 1> | null {
  if (t.gold.length === 0) return null;
  const out: Record<string, 0 | 1> = {};
  if (t.queries !== undefined) out.query = t.queries.attribution === "rewrite_lost_it" ? 0 : 1;
  if (t.trace !== undefined) {
    const positions = Object.values(t.trace.goldPositions);
    for (const stage of TRACE_STAGES) {
      if (!positions.some((p) => stage in p)) continue;
      out[stage] = positions.some((p) => p[stage] !== null && p[stage] !== undefined) ? 1 : 0;
    }
  }
  if (capturedLists(t) !== null || t.noRetrieval === true) {
    // --graph: the captured groups, by the ranks the page's turn view shows (./gold-ranks.ts).
    const ranks = t.gold.map((g) => goldRanks(t, g) ?? {});
    for (const stage of CAPTURED_STAGES.map((s) => s.id)) {
      if (!ranks.some((r) => stage in r)) continue;
      out[stage] = ranks.some((r) => r[stage] !== null && r[stage] !== undefined) ? 1 : 0;
    }
  }
  const hit = t.results.find((r) => r.key === HIT_KEY);
  if (hit !== undefined) out.final = hit.score > 0 ? 1 : 0;
  return Object.keys(out).length === 0 ? null : out;
}

/** `caseId#turn` → stage → presence, over the gold-bearing turns (a baseline's `perTurnStages`). */
export function perTurnStages(turns: readonly TurnReport[]): Record<string, Record<string, 0 | 1>> {
  const out: Record<string, Record<string, 0 | 1>> = {};
  for (const t of turns) {
    const p = stagePresence(t);
    if (p !== null) out[turnKey(t.caseId, t.turn)] = p;
  }
  return out;
}

export interface FunnelOptions {
  seed?: number;
  samples?: number;
  resample?: ResampleUnit;
}

/** A batch of the funnel's own, with its options' seed, samples and unit (the report's defaults otherwise). */
function batchOf(opts: FunnelOptions): ClusterMeanBatch {
  return new ClusterMeanBatch({
    seed: opts.seed ?? DEFAULT_SEED,
    samples: opts.samples ?? DEFAULT_SAMPLES,
    unit: opts.resample ?? DEFAULT_RESAMPLE,
  });
}

/** Stage → the presence values of `turns` (each tagged with its case), in turn order. */
function stageValues(
  turns: readonly TurnReport[],
  presenceOf: (t: TurnReport) => Record<string, 0 | 1> | null,
): Map<string, ClusteredValue[]> {
  const byStage = new Map<string, ClusteredValue[]>();
  for (const t of turns) {
    const p = presenceOf(t);
    if (p === null) continue;
    for (const [stage, v] of Object.entries(p)) {
      let arr = byStage.get(stage);
      if (arr === undefined) byStage.set(stage, (arr = []));
      arr.push({ cluster: t.caseId, value: v });
    }
  }
  return byStage;
}

/** The funnel rows of `turns`: every stage measured on at least one of them, in pipeline order. */
export function funnelStages(
  turns: readonly TurnReport[],
  opts: FunnelOptions = {},
  shared?: ClusterMeanBatch,
): FunnelStage[] {
  return stageRows(stageValues(turns, stagePresence), opts, shared);
}

function stageRows(
  byStage: Map<string, ClusteredValue[]>,
  opts: FunnelOptions,
  shared: ClusterMeanBatch | undefined,
): FunnelStage[] {
  // The rows' intervals are filled in when the batch runs (here, unless the caller shares its batch).
  const batch = shared ?? batchOf(opts);
  const rows: FunnelStage[] = [];
  for (const { id, label } of FUNNEL_STAGES) {
    const values = byStage.get(id);
    if (values === undefined || values.length === 0) continue;
    const at = rows.length;
    // The callback runs when the batch does, after the row is made below.
    const m = batch.add(values, (ci95) => {
      if (ci95 !== null) rows[at]!.ci95 = ci95;
    });
    if (m === null) continue;
    const present = values.reduce((s, v) => s + v.value, 0);
    rows.push({ stage: id, label, n: values.length, present, nCases: m.nCases, share: m.mean });
  }
  if (shared === undefined) batch.run();
  return rows;
}

/**
 * The split groups of a set of turns (turn position always; kind, locale and part when present), each in a canonical order.
 * `long`: whether positions use the long buckets (./positions.ts); default: whether these turns have a turn past #3
 * (a subset of a report's turns passes the report's own answer, so its groups match the report's).
 */
export function turnSplits(
  turns: readonly TurnReport[],
  long: boolean = hasLongPositions(turns),
): Record<string, Map<string, TurnReport[]>> {
  const groups = (of: (t: TurnReport) => string | undefined, order: readonly string[]) => {
    const m = new Map<string, TurnReport[]>();
    for (const t of turns) {
      const g = of(t);
      if (g === undefined) continue;
      const arr = m.get(g);
      if (arr === undefined) m.set(g, [t]);
      else arr.push(t);
    }
    const keys = [...order.filter((g) => m.has(g)), ...[...m.keys()].filter((g) => !order.includes(g)).sort()];
    return new Map(keys.map((g) => [g, m.get(g) as TurnReport[]]));
  };
  const out: Record<string, Map<string, TurnReport[]>> = {
    position: groups((t) => turnPosition(t.turn, long), long ? LONG_TURN_POSITIONS : TURN_POSITIONS),
    kind: groups((t) => t.kind, ["golden", "adversarial"]),
    locale: groups((t) => t.locale, []),
  };
  const part = groups((t) => t.part, ["tune", "holdout"]);
  if (part.size > 0) out.part = part;
  return out;
}

/** The report's funnel section, or undefined when no turn measured any stage. */
export function funnelOf(
  turns: readonly TurnReport[],
  opts: FunnelOptions = {},
  shared?: ClusterMeanBatch,
): FunnelReport | undefined {
  const batch = shared ?? batchOf(opts);
  // Each turn's presence once, and each distinct list of turns once (a kind or locale group often holds every turn).
  const presence = new Map<TurnReport, Record<string, 0 | 1> | null>();
  const presenceOf = (t: TurnReport) => {
    let p = presence.get(t);
    if (p === undefined) presence.set(t, (p = stagePresence(t)));
    return p;
  };
  const seen: { turns: readonly TurnReport[]; byStage: Map<string, ClusteredValue[]> }[] = [];
  const valuesOf = (ts: readonly TurnReport[]) => {
    for (const s of seen) if (s.turns.length === ts.length && s.turns.every((t, i) => t === ts[i])) return s.byStage;
    const byStage = stageValues(ts, presenceOf);
    seen.push({ turns: ts, byStage });
    return byStage;
  };
  const stages = stageRows(valuesOf(turns), opts, batch);
  if (stages.length === 0) return undefined;
  const splits: FunnelReport["splits"] = {};
  for (const [split, groups] of Object.entries(turnSplits(turns))) {
    const out: Record<string, FunnelStage[]> = {};
    for (const [g, ts] of groups) {
      const rows = stageRows(valuesOf(ts), opts, batch);
      if (rows.length > 0) out[g] = rows;
    }
    splits[split] = out;
  }
  if (shared === undefined) batch.run();
  return { stages, splits };
}

/** One stage of two runs compared on the turns both measured (B − A), with the paired case-level interval. */
export interface FunnelStageDiff {
  stage: string;
  label: string;
  n: number;
  nCases: number;
  shareA: number;
  shareB: number;
  diff: number;
  ci95: [number, number] | null;
  pValue: number;
}

/** Per stage measured in both runs, the paired difference of the shares over the turns both measured. */
export function funnelDiff(
  a: Readonly<Record<string, Readonly<Record<string, number>>>>,
  b: Readonly<Record<string, Readonly<Record<string, number>>>>,
  opts: FunnelOptions = {},
): FunnelStageDiff[] {
  const out: FunnelStageDiff[] = [];
  for (const { id, label } of FUNNEL_STAGES) {
    const of = (src: Readonly<Record<string, Readonly<Record<string, number>>>>) => {
      const m = new Map<string, number>();
      for (const [key, stages] of Object.entries(src)) if (stages[id] !== undefined) m.set(key, stages[id] as number);
      return m;
    };
    const p = pairedBootstrap(of(a), of(b), {
      seed: opts.seed ?? DEFAULT_SEED,
      samples: opts.samples ?? DEFAULT_SAMPLES,
      unit: opts.resample ?? DEFAULT_RESAMPLE,
    });
    if (p === null) continue;
    out.push({
      stage: id,
      label,
      n: p.n,
      nCases: p.nCases,
      shareA: p.meanA,
      shareB: p.meanB,
      diff: p.diff,
      ci95: p.ci95,
      pValue: p.pValue,
    });
  }
  return out;
}
