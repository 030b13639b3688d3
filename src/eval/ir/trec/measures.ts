/**
 * trec_eval 10's measures over one query's ranked relevance list, the way its
 * m_*.c files compute them (docs/metrics.md, "retrace score"). Pure functions,
 * no I/O, no strings in the loops: a query is its ranked list of relevance
 * values plus the counts of its judgments per relevance value.
 *
 * The ranked list holds, for each retrieved document in trec order (after the
 * first-occurrence dedup, the `-M` depth and `-J`), its qrels value when judged
 * (≥ 0), NONPOOL (−1) when the qrels do not list it, UNJUDGED (−2) when the
 * qrels list it with a negative value (in the pool, not judged: infAP's case).
 */
import { InvalidArgumentError } from "../../../errors.js";
import { averagePrecision, bpref, infAP, ndcgCut, rbp, rbpResid } from "./formulas.js";
import type { EvalSettings, QueryJudgments } from "./judgments.js";
export * from "./judgments.js";
export * from "./formulas.js";

/** How a measure's per-query values become the `all` row. */
export type Aggregate = "mean" | "sum" | "gm";

/** One measure of trec_eval's table that retrace implements. */
export interface TrecMeasureSpec {
  /** trec_eval's name (`map`, `P`, `unj`). */
  name: string;
  /** Cutoff measures print one row per cutoff, `name_k`. */
  defaultCutoffs?: readonly number[];
  /** Printed with `%ld` (counts), else `%6.4f`. */
  integer: boolean;
  /** Printed only in the `all` rows (num_q, gm_map, gm_bpref; runid is separate). */
  allOnly: boolean;
  aggregate: Aggregate;
  /** In trec_eval's `official` set (its default measures). */
  official: boolean;
}

/** trec_eval's measures in its print order (measures.c), the ones retrace implements. */
export const TREC_MEASURES: readonly TrecMeasureSpec[] = Object.freeze([
  { name: "runid", integer: false, allOnly: true, aggregate: "sum", official: true },
  { name: "num_q", integer: true, allOnly: true, aggregate: "sum", official: true },
  { name: "num_ret", integer: true, allOnly: false, aggregate: "sum", official: true },
  { name: "num_rel", integer: true, allOnly: false, aggregate: "sum", official: true },
  { name: "num_rel_ret", integer: true, allOnly: false, aggregate: "sum", official: true },
  { name: "map", integer: false, allOnly: false, aggregate: "mean", official: true },
  { name: "gm_map", integer: false, allOnly: true, aggregate: "gm", official: true },
  { name: "Rprec", integer: false, allOnly: false, aggregate: "mean", official: true },
  { name: "bpref", integer: false, allOnly: false, aggregate: "mean", official: true },
  { name: "recip_rank", integer: false, allOnly: false, aggregate: "mean", official: true },
  {
    name: "P",
    defaultCutoffs: [5, 10, 15, 20, 30, 100, 200, 500, 1000],
    integer: false,
    allOnly: false,
    aggregate: "mean",
    official: true,
  },
  {
    name: "recall",
    defaultCutoffs: [5, 10, 15, 20, 30, 100, 200, 500, 1000],
    integer: false,
    allOnly: false,
    aggregate: "mean",
    official: false,
  },
  { name: "infAP", integer: false, allOnly: false, aggregate: "mean", official: false },
  { name: "gm_bpref", integer: false, allOnly: true, aggregate: "gm", official: false },
  {
    name: "ndcg_cut",
    defaultCutoffs: [5, 10, 15, 20, 30, 100, 200, 500, 1000],
    integer: false,
    allOnly: false,
    aggregate: "mean",
    official: false,
  },
  {
    name: "map_cut",
    defaultCutoffs: [5, 10, 15, 20, 30, 100, 200, 500, 1000],
    integer: false,
    allOnly: false,
    aggregate: "mean",
    official: false,
  },
  { name: "success", defaultCutoffs: [1, 5, 10], integer: false, allOnly: false, aggregate: "mean", official: false },
  { name: "num_nonrel_judged_ret", integer: true, allOnly: false, aggregate: "sum", official: false },
  { name: "rbp", integer: false, allOnly: false, aggregate: "mean", official: false },
  { name: "rbp_resid", integer: false, allOnly: false, aggregate: "mean", official: false },
  { name: "unj", defaultCutoffs: [5, 10, 20], integer: false, allOnly: false, aggregate: "mean", official: false },
]);

/**
 * trec_eval 10's `all_trec` measures retrace does not implement: `-m all_trec`
 * prints the others and names these on stderr (docs/metrics.md).
 */
export const ALL_TREC_NOT_IMPLEMENTED: readonly string[] = Object.freeze([
  "iprec_at_recall",
  "relstring",
  "Rprec_mult",
  "utility",
  "11pt_avg",
  "binG",
  "G",
  "ndcg",
  "ndcg_rel",
  "Rndcg",
  "relative_P",
  "set_P",
  "set_relative_P",
  "set_recall",
  "set_map",
  "set_F",
]);

const SPEC_BY_NAME: ReadonlyMap<string, TrecMeasureSpec> = new Map(TREC_MEASURES.map((m) => [m.name, m]));

/** The spec of trec_eval measure `name`, or undefined when retrace does not implement it. */
export function trecMeasureSpec(name: string): TrecMeasureSpec | undefined {
  return SPEC_BY_NAME.get(name);
}

/** One selected measure: its spec and, for a cutoff measure, its cutoffs (ascending, distinct). */
export interface SelectedMeasure {
  spec: TrecMeasureSpec;
  cutoffs: readonly number[];
}

/** The printed row names of a selection, in trec_eval's print order. */
export function rowNames(selected: readonly SelectedMeasure[]): string[] {
  return selected.flatMap((m) =>
    m.spec.defaultCutoffs === undefined ? [m.spec.name] : m.cutoffs.map((k) => `${m.spec.name}_${k}`),
  );
}

function cutoffList(option: string, raw: string): number[] {
  const ks: number[] = [];
  for (const part of raw.split(",")) {
    if (!/^\d+$/.test(part) || Number(part) <= 0)
      throw new InvalidArgumentError(option, "comma-separated positive integer cutoffs, e.g. P.5,10", raw);
    ks.push(Number(part));
  }
  return [...new Set(ks)].sort((a, b) => a - b);
}

/**
 * trec_eval's `-m` arguments (`map`, `P.5,10`, `unj.5,10`, `map_cut.10`,
 * `all_trec`, `official`) as a selection in its print order. A measure named
 * twice takes the last cutoffs given. A measure retrace does not implement is
 * an InvalidArgumentError naming the ones it does; `all_trec` selects every
 * implemented measure (the caller says which of trec_eval's are missing).
 */
export function selectMeasures(args: readonly string[]): SelectedMeasure[] {
  const chosen = new Map<string, readonly number[]>();
  for (const arg of args) {
    if (arg === "all_trec" || arg === "official") {
      for (const m of TREC_MEASURES) if (arg === "all_trec" || m.official) chosen.set(m.name, m.defaultCutoffs ?? []);
      continue;
    }
    const dot = arg.indexOf(".");
    const name = dot < 0 ? arg : arg.slice(0, dot);
    const spec = SPEC_BY_NAME.get(name);
    if (spec === undefined) {
      const known = [...SPEC_BY_NAME.keys(), "all_trec", "official"].join(", ");
      const why = ALL_TREC_NOT_IMPLEMENTED.includes(name) ? " (a trec_eval measure retrace does not implement)" : "";
      throw new InvalidArgumentError("-m", `one of ${known}${why}`, arg);
    }
    if (dot < 0) chosen.set(name, spec.defaultCutoffs ?? []);
    else if (spec.defaultCutoffs === undefined)
      throw new InvalidArgumentError("-m", `${name} without parameters (retrace takes cutoffs only)`, arg);
    else chosen.set(name, cutoffList("-m", arg.slice(dot + 1)));
  }
  return TREC_MEASURES.filter((m) => chosen.has(m.name)).map((spec) => ({
    spec,
    cutoffs: chosen.get(spec.name) as readonly number[],
  }));
}

/** The selection retrace prints without `-m`: recip_rank, P, recall, ndcg_cut, success at the `-k` cutoffs. */
export function defaultSelection(ks: readonly number[]): SelectedMeasure[] {
  return ["recip_rank", "P", "recall", "ndcg_cut", "success"].map((name) => {
    const spec = SPEC_BY_NAME.get(name) as TrecMeasureSpec;
    return { spec, cutoffs: spec.defaultCutoffs === undefined ? [] : ks };
  });
}

/** Judgment counts of one query from its qrels values (negative values are pooled but unjudged: not counted). */
export function queryJudgments(rels: Iterable<number>, relevanceLevel: number): QueryJudgments {
  const levels: number[] = [];
  for (const r of rels) {
    if (r < 0) continue;
    while (levels.length <= r) levels.push(0);
    levels[r] = (levels[r] as number) + 1;
  }
  let numRel = 0;
  let numNonrel = 0;
  for (let r = 0; r < levels.length; r++) {
    if (r >= relevanceLevel) numRel += levels[r] as number;
    else numNonrel += levels[r] as number;
  }
  return { levels, numRel, numNonrel };
}

/**
 * Every selected measure of one query into `out` (row order of
 * `rowNames(selected)`, allOnly measures included: gm_map / gm_bpref hold the
 * query's map / bpref for the geometric mean; num_q holds 1; runid 0).
 * `rels[0..n)` is the ranked relevance list.
 */
export function evaluateQuery(
  rels: ArrayLike<number>,
  n: number,
  q: QueryJudgments,
  selected: readonly SelectedMeasure[],
  s: EvalSettings,
  out: Float64Array | number[],
): void {
  const L = s.relevanceLevel;
  const numRel = q.numRel;
  let o = 0;
  for (const m of selected) {
    const cut = m.cutoffs;
    switch (m.spec.name) {
      case "runid":
        out[o++] = 0;
        break;
      case "num_q":
        out[o++] = 1;
        break;
      case "num_ret":
        out[o++] = n;
        break;
      case "num_rel":
        out[o++] = numRel;
        break;
      case "num_rel_ret": {
        let c = 0;
        for (let i = 0; i < n; i++) if ((rels[i] as number) >= L) c++;
        out[o++] = c;
        break;
      }
      case "map":
      case "gm_map":
        out[o++] = averagePrecision(rels, n, numRel, L, n);
        break;
      case "Rprec": {
        let c = 0;
        const top = Math.min(numRel, n);
        for (let i = 0; i < top; i++) if ((rels[i] as number) >= L) c++;
        out[o++] = numRel > 0 ? c / numRel : 0;
        break;
      }
      case "bpref":
      case "gm_bpref":
        out[o++] = bpref(rels, n, q, L);
        break;
      case "recip_rank": {
        let v = 0;
        for (let i = 0; i < n; i++)
          if ((rels[i] as number) >= L) {
            v = 1 / (i + 1);
            break;
          }
        out[o++] = v;
        break;
      }
      case "P":
      case "recall":
      case "success": {
        for (const k of cut) {
          let c = 0;
          const top = Math.min(k, n);
          for (let i = 0; i < top; i++) if ((rels[i] as number) >= L) c++;
          out[o++] =
            m.spec.name === "P" ? c / k : m.spec.name === "recall" ? (numRel > 0 ? c / numRel : 0) : c > 0 ? 1 : 0;
        }
        break;
      }
      case "infAP":
        out[o++] = infAP(rels, n, numRel, L);
        break;
      case "ndcg_cut":
        for (const k of cut) out[o++] = ndcgCut(rels, n, q, s, k);
        break;
      case "map_cut":
        for (const k of cut) out[o++] = averagePrecision(rels, n, numRel, L, k);
        break;
      case "num_nonrel_judged_ret": {
        let c = 0;
        for (let i = 0; i < n; i++) {
          const r = rels[i] as number;
          if (r >= 0 && r < L) c++;
        }
        out[o++] = c;
        break;
      }
      case "rbp":
        out[o++] = rbp(rels, n, q, s);
        break;
      case "rbp_resid":
        out[o++] = rbpResid(rels, n);
        break;
      case "unj":
        for (const k of cut) {
          let c = 0;
          const top = Math.min(k, n);
          for (let i = 0; i < top; i++) if ((rels[i] as number) < 0) c++;
          out[o++] = c / k;
        }
        break;
      default:
        throw new Error(`no computation for trec_eval measure ${m.spec.name}`);
    }
  }
}

/** m_map.c / m_map_cut.c: Σ precision at each relevant document within the top `k`, over num_rel. */
