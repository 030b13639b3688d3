/**
 * Renderings of ONE Report (docs/architecture.md §7): JSON, markdown, a compact stdout
 * table and JUnit XML. Nothing here computes a metric, a mean or an interval:
 * every number comes from the report object, so the renderings cannot
 * disagree with each other or with `--json`.
 *
 * Conventions of every rendering:
 * - each aggregate is shown with its n and its 95% interval;
 * - a vacuous key is shown as "not measured (<reason>)" (or "not run: ...")
 *   instead of a number;
 * - recall@k is labelled a lower bound (gold is disjunctive);
 * - turns are identified as `caseId#turn`, turn 0-based (the baseline's key);
 * - with a tune/holdout split, answer-side rows of the overall, kind and
 *   locale tables are marked "(held-out)" (they are computed on the holdout
 *   part only) and a per-part table follows; without one, a note says that
 *   no held-out part exists (docs/holdout.md).
 */
export { reportToJSON } from "./render/json.js";
export { renderJUnit, xmlEscape } from "./render/junit.js";
export { renderMarkdown } from "./render/markdown.js";
export { judgmentLines, metricLabel, missedTurns, SIGNIFICANCE_LEVEL, vacuousText } from "./render/shared.js";
export { renderTable } from "./render/table.js";
