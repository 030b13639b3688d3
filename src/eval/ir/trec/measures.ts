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

/** A retrieved document the qrels do not list. */
export const NONPOOL = -1;
/** A retrieved document the qrels list with a negative value (pooled, not judged). */
export const UNJUDGED = -2;
/** trec_eval.h: the floor of a value in a geometric mean (gm_map, gm_bpref). */
export const MIN_GEO_MEAN = 0.00001;
/** trec_eval.h: infAP's smoothing constant. */
export const INFAP_EPSILON = 0.00001;
/** m_rbp.c: rbp's persistence when not given. */
export const RBP_PERSISTENCE = 0.9;

/** One query's judgments, as counts: what trec_eval's form_res_rels gives every measure. */
export interface QueryJudgments {
  /** levels[r] = judged documents with relevance value r (r ≥ 0). */
  levels: readonly number[];
  /** Documents with relevance ≥ the relevance level. */
  numRel: number;
  /** Judged documents with 0 ≤ relevance < the relevance level. */
  numNonrel: number;
}

/** How values are computed: trec_eval's -l, and whether gains are graded (the qrels values) or binary. */
export interface EvalSettings {
  relevanceLevel: number;
  graded: boolean;
}

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
function averagePrecision(rels: ArrayLike<number>, n: number, numRel: number, L: number, k: number): number {
  if (numRel === 0) return 0;
  let relSoFar = 0;
  let sum = 0;
  const top = Math.min(k, n);
  for (let i = 0; i < top; i++) {
    if ((rels[i] as number) >= L) {
      relSoFar++;
      sum += relSoFar / (i + 1);
    }
  }
  return sum / numRel;
}

/** m_bpref.c: unjudged documents are skipped; each relevant one scores 1 − min(nonrel above, R) / min(N, R). */
function bpref(rels: ArrayLike<number>, n: number, q: QueryJudgments, L: number): number {
  const R = q.numRel;
  const denom = Math.min(q.numNonrel, R);
  let nonrelSoFar = 0;
  let sum = 0;
  for (let i = 0; i < n; i++) {
    const r = rels[i] as number;
    if (r < 0) continue;
    if (r < L) nonrelSoFar++;
    else sum += nonrelSoFar > 0 ? 1 - Math.min(nonrelSoFar, R) / denom : 1;
  }
  return R > 0 ? sum / R : 0;
}

/** m_infap.c (Yilmaz and Aslam): precision above each relevant document estimated from the judged ones. */
function infAP(rels: ArrayLike<number>, n: number, numRel: number, L: number): number {
  let nonrel = 0;
  let rel = 0;
  let poolUnjudged = 0;
  let sum = 0;
  for (let j = 0; j < n; j++) {
    const r = rels[j] as number;
    if (r === NONPOOL) continue;
    if (r === UNJUDGED) {
      poolUnjudged++;
      continue;
    }
    if (r < L) nonrel++;
    else {
      rel++;
      if (j === 0) sum += 1;
      else {
        const fj = j;
        sum +=
          1 / (fj + 1) +
          (fj / (fj + 1)) *
            ((rel - 1 + nonrel + poolUnjudged) / fj) *
            ((rel - 1 + INFAP_EPSILON) / (rel - 1 + nonrel + 2 * INFAP_EPSILON));
      }
    }
  }
  return numRel > 0 ? sum / numRel : 0;
}

/** A ranked document's gain: its qrels value (graded) or 1 when relevant (binary); 0 when unjudged. */
function gainOf(r: number, s: EvalSettings): number {
  if (r <= 0) return 0;
  return s.graded ? r : r >= s.relevanceLevel ? 1 : 0;
}

/**
 * m_ndcg_cut.c: DCG of the top k over the ideal DCG of the top k of every
 * judged document sorted by gain (graded: every judged value > 0; binary:
 * the relevant ones, gain 1). 0 when the ideal is 0.
 */
function ndcgCut(rels: ArrayLike<number>, n: number, q: QueryJudgments, s: EvalSettings, k: number): number {
  let dcg = 0;
  const top = Math.min(k, n);
  for (let i = 0; i < top; i++) {
    const g = gainOf(rels[i] as number, s);
    if (g > 0) dcg += g / Math.log2(i + 2);
  }
  let idcg = 0;
  let i = 0;
  if (s.graded) {
    for (let lvl = q.levels.length - 1; lvl > 0 && i < k; lvl--) {
      const count = q.levels[lvl] as number;
      for (let c = 0; c < count && i < k; c++, i++) idcg += lvl / Math.log2(i + 2);
    }
  } else {
    const count = Math.min(q.numRel, k);
    for (; i < count; i++) idcg += 1 / Math.log2(i + 2);
  }
  return idcg > 0 ? dcg / idcg : 0;
}

/**
 * m_rbp.c (Moffat and Zobel), p = 0.9: (1 − p) Σ gain_i p^(i−1). Graded gains
 * are the qrels values scaled to [0, 1] by the query's highest judged value
 * when it exceeds 1, as trec_eval normalizes them; binary gains are 1 for a
 * relevant document.
 */
function rbp(rels: ArrayLike<number>, n: number, q: QueryJudgments, s: EvalSettings): number {
  const p = RBP_PERSISTENCE;
  const maxLevel = q.levels.length - 1;
  const scale = s.graded && maxLevel > 1 ? maxLevel : 1;
  let sum = 0;
  let cur = 1;
  for (let i = 0; i < n; i++) {
    const g = gainOf(rels[i] as number, s);
    if (g !== 0) sum += (g / scale) * cur;
    cur *= p;
  }
  return (1 - p) * sum;
}

/**
 * m_rbp_resid.c, p = 0.9: the most rbp could still rise if every unjudged
 * document were relevant, p^n + (1 − p) Σ_{unjudged i} p^(i−1); 0 when the
 * ranking has no unjudged document (trec_eval then leaves the value unset).
 */
function rbpResid(rels: ArrayLike<number>, n: number): number {
  const p = RBP_PERSISTENCE;
  let unj = 0;
  let sum = 0;
  let cur = 1;
  for (let i = 0; i < n; i++) {
    if ((rels[i] as number) < 0) {
      unj++;
      sum += cur;
    }
    cur *= p;
  }
  return unj > 0 ? cur + (1 - p) * sum : 0;
}
