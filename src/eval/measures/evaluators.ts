/**
 * Turn-level evaluators (docs/architecture.md §6): each is a pure function from one
 * turn's artifacts to `EvalResult[]` in the LangSmith / openevals shape
 * `{key, score, comment}`; `[]` contributes no keys (nothing measured is
 * never a vacuous 1.0). The comment states the numbers behind the score.
 *
 * Each evaluator comes with a descriptor (`EvaluatorSpec`) telling the
 * aggregator which keys it can emit and, when a run produced none of them,
 * why: "no store" (the retrieval node did not run), "no judge configured", ...
 *
 * Metric arithmetic lives in ./metrics.ts; nothing here recomputes it.
 */
import { InvalidArgumentError } from "../../errors.js";
import {
  bpref,
  dedupeFirst,
  gradedGold,
  JUDGED,
  judgedAtK,
  METRICS,
  ndcgAtK,
  UNJUDGED_KEY,
  unjudgedAtK,
  type Gold,
} from "./metrics.js";

/** The key of condensed (judged-only) nDCG@k (INCOMPLETE_JUDGMENT_MEASURES). */
const CONDENSED_NDCG_KEY = "retrieval_ndcg_condensed_at_k";
/** The key of bpref (INCOMPLETE_JUDGMENT_MEASURES). */
const BPREF_KEY = "retrieval_bpref";
import type { EvalResult, Evaluator, TurnArtifacts } from "./types.js";
import { oneLineText } from "../../control-chars.js";

/** An evaluator that needs I/O (a judge model). */
export type AsyncEvaluator = (a: TurnArtifacts) => Promise<EvalResult[]>;

export interface EvaluatorSpec {
  /** Short name, e.g. `retrieval`. */
  name: string;
  /** Every key this evaluator can emit. */
  keys: string[];
  evaluate: Evaluator | AsyncEvaluator;
  /**
   * Why this turn could not be measured at all (e.g. "no store"), or null
   * when it could. A turn that merely has nothing to score (empty gold,
   * nothing cited) is not "not measured": it returns null here and `[]`
   * from `evaluate`.
   */
  notMeasured?: (a: TurnArtifacts) => string | null;
  /** Reason reported when no turn of a run produced this evaluator's keys and none was "not measured". */
  whenEmpty: string;
  /**
   * The turns this evaluator concerns at all (e.g. judged@k: turns that carry
   * judgments). Given, a run with no such turn does not list its keys as
   * vacuous: they are simply absent. Omitted: every turn.
   */
  appliesTo?: (a: TurnArtifacts) => boolean;
}

/** Vacuous reason of retrieval keys in a store-less run (rendered "not measured (no store)"). */
export const NO_STORE = "no store";
/** Reasons starting with this prefix are rendered as-is ("not run: ..."), others as "not measured (reason)". */
export const NOT_RUN_PREFIX = "not run";
/** Vacuous reason of groundedness without a judge. */
export const NO_JUDGE = `${NOT_RUN_PREFIX}: no judge configured`;

export const CITATION_COVERAGE_KEY = "citation_coverage";
export const CITATION_CORRECTNESS_KEY = "citation_correctness";
export const REFUSAL_CORRECTNESS_KEY = "refusal_correctness";
export const GROUNDEDNESS_KEY = "groundedness";

/** `[a,b]`; an id with a line break or a control character shown on one line (src/control-chars.ts). */
function list(ids: readonly string[]): string {
  return `[${ids.map(oneLineText).join(",")}]`;
}

function fmt(x: number): string {
  return Number.isInteger(x) ? String(x) : x.toFixed(2);
}

/** `{a:3,b:1}`: a turn's graded relevance in a comment, in key order. */
function gradesText(relevant: Readonly<Record<string, number>>): string {
  return `{${Object.entries(relevant)
    .map(([id, g]) => `${id}:${g}`)
    .join(",")}}`;
}

/**
 * Retrieval recall (the metric triad of docs/decisions/0001-metric-contract.md plus MRR@k and P@k) over the ids the
 * retrieval node returned — never over cited ids.
 *
 * - empty gold (a no-match turn) and no graded `relevant` → `[]`: no score keys;
 * - `retrievedIds === null` (store-less: the node did not run) → `[]`, and
 *   `notMeasured` says "no store";
 * - otherwise one result per metric of the registry that has something
 *   relevant to score, all with the same comment, e.g.
 *   `hit=1 recall=0.50 ndcg=0.63 mrr=0.50 precision=0.33 gold=[a,b] top3=[c,a,d]`.
 *
 * Relevance apart from the citation contract (docs/metrics.md): when the turn
 * carries graded `relevant`, the graded metric of the registry (nDCG@k,
 * `trec.graded`) uses its grades as gains, exactly as trec_eval's ndcg_cut
 * (and `retrace score --graded`) does; every other metric keeps reading the
 * contract `gold`. A turn with `relevant` but no contract therefore gets
 * nDCG@k only; a graded turn whose grades are all 0 gets no nDCG@k (nothing
 * relevant). The comment then says `ndcg=0.80 (graded)` and lists `relevant={a:3,b:1}`.
 *
 * `k` is the configured retrieval top-k; `retrievedIds` longer than k are cut
 * (after first-occurrence dedup, as the metrics do).
 */
export function retrievalEvaluator(opts: { k: number }): EvaluatorSpec {
  const { k } = opts;
  if (!Number.isInteger(k) || k <= 0) throw new InvalidArgumentError("k", "a positive integer", k);
  const evaluate: Evaluator = (a) => {
    const relevant = a.relevant;
    if (a.retrievedIds === null || (a.gold.length === 0 && relevant === undefined)) return [];
    const ranked = a.retrievedIds;
    const graded = relevant !== undefined ? gradedGold(relevant) : undefined;
    const goldOf = (m: (typeof METRICS)[number]): Gold => (m.trec.graded && graded !== undefined ? graded : a.gold);
    const scores = METRICS.map((m) => ({
      key: m.key,
      name: m.name,
      graded: m.trec.graded && graded !== undefined,
      score: m.fn(ranked, goldOf(m), k),
    }));
    const top = dedupeFirst(ranked).slice(0, k);
    const parts = scores
      .filter((s) => s.score !== null)
      .map((s) => `${s.name}=${fmt(s.score as number)}${s.graded ? " (graded)" : ""}`);
    const judgments = [
      a.gold.length > 0 || relevant === undefined ? `gold=${list(dedupeFirst(a.gold))}` : "",
      relevant !== undefined ? `relevant=${gradesText(relevant)}` : "",
    ].filter((x) => x !== "");
    const comment = `${parts.join(" ")} ${judgments.join(" ")} top${k}=${list(top)}`;
    const results: EvalResult[] = [];
    for (const s of scores) if (s.score !== null) results.push({ key: s.key, score: s.score, comment });
    return results;
  };
  return {
    name: "retrieval",
    keys: METRICS.map((m) => m.key),
    evaluate,
    notMeasured: (a) => (a.retrievedIds === null ? NO_STORE : null),
    whenEmpty: "no gold-bearing turns",
  };
}

/**
 * Citation coverage: 1 when the answer cites at least one gold card, else 0.
 *
 * Rule for empty gold: no key (the refusal evaluator covers no-match turns;
 * a relevance-only turn has no contract). Also no key when the turn expects a refusal: a refusal should cite nothing,
 * and whether it refused is refusal correctness's question.
 */
export function citationCoverageEvaluator(): EvaluatorSpec {
  const evaluate: Evaluator = (a) => {
    if (a.gold.length === 0 || a.expect === "refuse") return [];
    const gold = new Set(a.gold);
    const cited = dedupeFirst(a.citedIds);
    const hits = cited.filter((id) => gold.has(id));
    const score = hits.length > 0 ? 1 : 0;
    return [
      {
        key: CITATION_COVERAGE_KEY,
        score,
        comment: `coverage=${score} cited=${list(cited)} gold=${list(dedupeFirst(a.gold))}${hits.length > 0 ? ` matched=${list(hits)}` : ""}`,
      },
    ];
  };
  return {
    name: "citation_coverage",
    keys: [CITATION_COVERAGE_KEY],
    evaluate,
    whenEmpty: "no gold-bearing turn expected an answer",
  };
}

/**
 * Citation correctness, all-or-nothing per turn: 1 when EVERY cited id is
 * correct, else 0. A cited id is correct when it exists (is in `knownIds`,
 * when the artifacts carry them) and was retrieved this turn (is in
 * `retrievedIds`). All-or-nothing because one invented or unretrieved
 * citation is enough to make an answer untrustworthy; the comment gives the
 * fraction and lists the bad ids with why.
 *
 * No key when nothing was cited, nor on a relevance-only turn (no contract:
 * its answer side is not scored). When `retrievedIds` is null (store-less)
 * "retrieved this turn" cannot be checked: not measured ("no store").
 * Duplicate citations count once.
 */
export function citationCorrectnessEvaluator(): EvaluatorSpec {
  const evaluate: Evaluator = (a) => {
    if (a.retrievedIds === null || a.relevanceOnly === true) return [];
    const cited = dedupeFirst(a.citedIds);
    if (cited.length === 0) return [];
    const retrieved = new Set(a.retrievedIds);
    const unknown: string[] = [];
    const notRetrieved: string[] = [];
    for (const id of cited) {
      if (a.knownIds !== undefined && !a.knownIds.has(id)) unknown.push(id);
      else if (!retrieved.has(id)) notRetrieved.push(id);
    }
    const bad = unknown.length + notRetrieved.length;
    const score = bad === 0 ? 1 : 0;
    const detail = [
      unknown.length > 0 ? `unknown=${list(unknown)}` : "",
      notRetrieved.length > 0 ? `not_retrieved=${list(notRetrieved)}` : "",
    ].filter((s) => s !== "");
    return [
      {
        key: CITATION_CORRECTNESS_KEY,
        score,
        comment: `correct=${cited.length - bad}/${cited.length} cited=${list(cited)}${detail.length > 0 ? ` ${detail.join(" ")}` : ""}`,
      },
    ];
  };
  return {
    name: "citation_correctness",
    keys: [CITATION_CORRECTNESS_KEY],
    evaluate,
    notMeasured: (a) => (a.retrievedIds === null ? NO_STORE : null),
    whenEmpty: "nothing was cited",
  };
}

/** Refusal correctness: 1 iff `refused === (expect === "refuse")`. Emitted on every turn but a relevance-only one (no `expect` to check against). */
export function refusalEvaluator(): EvaluatorSpec {
  const evaluate: Evaluator = (a) => {
    if (a.relevanceOnly === true) return [];
    const expected = a.expect === "refuse";
    const score = a.refused === expected ? 1 : 0;
    return [{ key: REFUSAL_CORRECTNESS_KEY, score, comment: `expected=${a.expect} refused=${a.refused}` }];
  };
  return { name: "refusal_correctness", keys: [REFUSAL_CORRECTNESS_KEY], evaluate, whenEmpty: "no turns" };
}

/** A judge's verdict: a score in [0, 1] and why, or null when the turn has nothing to judge. */
export interface JudgeVerdict {
  score: number;
  comment?: string;
}

/**
 * A groundedness judge (e.g. an LLM asked whether every claim of the answer
 * is supported by the retrieved cards). It receives the whole artifacts;
 * fetching card texts is its business.
 */
export type Judge = (a: TurnArtifacts) => Promise<JudgeVerdict | null> | JudgeVerdict | null;

/**
 * The judge-backed groundedness slot. Without a judge it never scores: every
 * turn is "not run: no judge configured" and the report lists the key as not
 * run — no fake score. With a judge, turns that refused or have an empty
 * answer are skipped (nothing to ground); otherwise the judge's score is
 * emitted (relevance-only turns are not judged: their answer side is not
 * scored; a score outside [0, 1] is a misconfigured judge and throws
 * InvalidArgumentError).
 */
export function groundednessEvaluator(opts: { judge?: Judge } = {}): EvaluatorSpec {
  const judge = opts.judge;
  if (judge === undefined) {
    return {
      name: "groundedness",
      keys: [GROUNDEDNESS_KEY],
      evaluate: () => [],
      notMeasured: () => NO_JUDGE,
      whenEmpty: NO_JUDGE,
    };
  }
  const evaluate: AsyncEvaluator = async (a) => {
    if (a.refused || a.answer.trim() === "" || a.relevanceOnly === true) return [];
    const verdict = await judge(a);
    if (verdict === null) return [];
    if (typeof verdict.score !== "number" || !(verdict.score >= 0 && verdict.score <= 1)) {
      throw new InvalidArgumentError("judge score", "a number between 0 and 1", verdict.score);
    }
    const result: EvalResult = { key: GROUNDEDNESS_KEY, score: verdict.score };
    if (verdict.comment !== undefined) result.comment = verdict.comment;
    return [result];
  };
  return { name: "groundedness", keys: [GROUNDEDNESS_KEY], evaluate, whenEmpty: "no answered turns" };
}

/** Whether a turn carries judgments beyond its contract (`judged` or graded `relevant`): judged@k is measured on it. */
export function carriesJudgments(a: Pick<TurnArtifacts, "judged" | "relevant">): boolean {
  return a.judged !== undefined || a.relevant !== undefined;
}

/** A turn's judged set: `judged` ∪ keys(`relevant`) ∪ `gold` (the contract's cards are judged relevant), first occurrence order. */
export function judgedSet(a: Pick<TurnArtifacts, "judged" | "relevant" | "gold">): string[] {
  return dedupeFirst([...(a.judged ?? []), ...Object.keys(a.relevant ?? {}), ...a.gold]);
}

/**
 * judged@k (docs/metrics.md): on a turn that carries judgments (`judged` or
 * `relevant`), the share of its top-k retrieved cards in its judged set
 * (`judged` ∪ keys of `relevant`, grade 0 included ∪ `must_cite_one_of`).
 * Emits nothing on turns without judgments (so a run without any has no
 * judged@k at all, not a vacuous one), when retrieval did not run
 * (store-less), or when nothing was retrieved. Comment:
 * `judged=0.60 unjudged=[d,e] top5=[a,b,c,d,e]`.
 */
export function judgedEvaluator(opts: { k: number }): EvaluatorSpec {
  const { k } = opts;
  if (!Number.isInteger(k) || k <= 0) throw new InvalidArgumentError("k", "a positive integer", k);
  const evaluate: Evaluator = (a) => {
    if (a.retrievedIds === null || !carriesJudgments(a)) return [];
    const judged = judgedSet(a);
    const score = judgedAtK(a.retrievedIds, judged, k);
    if (score === null) return [];
    const unjudged = unjudgedAtK(a.retrievedIds, judged, k);
    const out: EvalResult[] = [
      {
        key: JUDGED.key,
        score,
        comment: `judged=${fmt(score)} unjudged=${list(unjudged)} top${k}=${list(dedupeFirst(a.retrievedIds).slice(0, k))}`,
      },
      { key: UNJUDGED_KEY, score: unjudged.length / k, comment: `unjudged=${list(unjudged)} of top${k}` },
    ];
    // The turn's relevant cards: its gold (the contract's cards) and its graded relevant (grade > 0).
    const judgedIds = new Set(judged);
    const relevant = new Set([
      ...a.gold,
      ...Object.entries(a.relevant ?? {})
        .filter(([, g]) => g > 0)
        .map(([id]) => id),
    ]);
    if (relevant.size > 0) {
      // Condensed (judged-only) nDCG@k: the ranking without the cards nobody judged, scored as the turn's nDCG is.
      const condensed = dedupeFirst(a.retrievedIds).filter((id) => judgedIds.has(id));
      const gold: Gold = a.relevant !== undefined ? gradedGold(a.relevant) : a.gold;
      const ndcg = ndcgAtK(condensed, gold, k);
      if (ndcg !== null)
        out.push({
          key: CONDENSED_NDCG_KEY,
          score: ndcg,
          comment: `condensed top${k}=${list(condensed.slice(0, k))}`,
        });
      const nonrelevant = new Set(judged.filter((id) => !relevant.has(id)));
      const b = bpref(a.retrievedIds, relevant, nonrelevant);
      if (b !== null)
        out.push({
          key: BPREF_KEY,
          score: b,
          comment: `R=${relevant.size} N=${nonrelevant.size} (judged non-relevant)`,
        });
    }
    return out;
  };
  return {
    name: "judged",
    keys: [JUDGED.key, UNJUDGED_KEY, CONDENSED_NDCG_KEY, BPREF_KEY],
    evaluate,
    notMeasured: (a) => (a.retrievedIds === null ? NO_STORE : null),
    whenEmpty: "no turn with judgments retrieved anything",
    appliesTo: carriesJudgments,
  };
}

/** The retrieval-side evaluators: the retrieval metrics and judged@k (what a `--graph` run is scored with, the judge aside). */
export function retrievalSideEvaluators(opts: { k: number }): EvaluatorSpec[] {
  return [retrievalEvaluator(opts), judgedEvaluator(opts)];
}

/** The deterministic evaluators: retrieval (triad + MRR + P), judged@k (turns with judgments only), citation coverage, citation correctness, refusal. */
export function defaultEvaluators(opts: { k: number }): EvaluatorSpec[] {
  return [
    ...retrievalSideEvaluators(opts),
    citationCoverageEvaluator(),
    citationCorrectnessEvaluator(),
    refusalEvaluator(),
  ];
}

/** The deterministic evaluators plus the groundedness slot (listed as not run when no judge is given). */
export function allEvaluators(opts: { k: number; judge?: Judge }): EvaluatorSpec[] {
  return [...defaultEvaluators(opts), groundednessEvaluator(opts.judge !== undefined ? { judge: opts.judge } : {})];
}

/**
 * Run every evaluator on one turn, in order, and concatenate the results.
 * Throws InvalidArgumentError when two evaluators emit the same key or an
 * evaluator emits a key it did not declare, or a score that is not finite.
 */
export async function runEvaluators(specs: readonly EvaluatorSpec[], a: TurnArtifacts): Promise<EvalResult[]> {
  const out: EvalResult[] = [];
  const seen = new Set<string>();
  for (const spec of specs) {
    const results = await spec.evaluate(a);
    for (const r of results) {
      if (!spec.keys.includes(r.key))
        throw new InvalidArgumentError(`key of evaluator ${spec.name}`, `one of ${spec.keys.join(", ")}`, r.key);
      if (seen.has(r.key)) throw new InvalidArgumentError("evaluator keys", "unique across evaluators", r.key);
      if (!Number.isFinite(r.score)) throw new InvalidArgumentError(`score of ${r.key}`, "a finite number", r.score);
      seen.add(r.key);
      out.push(r);
    }
  }
  return out;
}

/**
 * The report's one key order: the keys of the default evaluators (allEvaluators), in its order — the
 * metric registry's keys, judged@k, then citation coverage, citation correctness, refusal correctness,
 * groundedness. Every rendering lists keys in this order (render/shared.ts `reportKeys`, which the
 * HTML page receives); every one of them depends on retrieval (./storeless.ts). Keys do not
 * depend on k.
 */
export const CANONICAL_KEYS: readonly string[] = Object.freeze(allEvaluators({ k: 1 }).flatMap((spec) => spec.keys));
