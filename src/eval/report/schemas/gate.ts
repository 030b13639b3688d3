/**
 * The report's `gate` section: the gate's verdict, its checks, failures and
 * flips (docs/gates-and-exit-codes.md).
 *
 * One section of the schemas indexed by ../schemas.ts (src/eval/report/schemas.ts).
 */
import { z } from "zod";
import { count } from "./primitives.js";
import { GoldPositionsSchema } from "./turn.js";

const gateFailureObject = z.object({
  kind: z.enum([
    "floor",
    "regression",
    "flips",
    "not_measured",
    "baseline_mismatch",
    "turn_errors",
    "no_retrieval",
    "flaky",
    "unjudged",
  ]),
  key: z.string(),
  reason: z.string(),
  /** Scope of a scoped check ("all", a locale, "golden", "adversarial", "tune", "holdout"); absent = "all". */
  scope: z.string().optional(),
});
/** Why the gate failed: one entry per failed check or refusal. */
export interface GateFailure extends z.output<typeof gateFailureObject> {}
const GateFailureSchema: z.ZodType<GateFailure> = gateFailureObject;

const gateCheckObject = z.object({
  /**
   * floor: mean ≥ threshold; drop: baseline mean − mean ≤ threshold; flips: count of hit 1→0 turns ≤ threshold;
   * `--graph` runs: turn_errors: turns whose graph run threw ≤ threshold (`--max-errors`), no_retrieval:
   * gold-bearing turns with no retriever run ≤ threshold (`--max-no-retrieval`), flaky: turns hit in some
   * repeats and missed in others ≤ threshold (`--max-flaky`, with `--repeat`); unjudged: mean unjudged@k over
   * the turns that carry judgments ≤ threshold (`--gate max-unjudged`).
   */
  kind: z.enum(["floor", "drop", "flips", "turn_errors", "no_retrieval", "flaky", "unjudged"]),
  key: z.string(),
  scope: z.string(),
  /** The CLI option the check comes from, e.g. `--gate min-hit=en=0.950`. */
  option: z.string(),
  threshold: z.number(),
  /** Mean (floor), drop (drop) or flip count (flips); null when not measured. */
  observed: z.number().nullable(),
  n: count,
  /** The baseline's mean over the same scope (drop checks). */
  baseline: z.number().optional(),
  /**
   * Drop checks of the interval-aware test (a `--repeat` run; `dropTest`):
   * the one-sided lower bound of the drop at the test's level; the check
   * fails when it exceeds the threshold.
   */
  bound: z.number().optional(),
  verdict: z.enum(["pass", "fail", "not_measured"]),
  reason: z.string(),
});
/** One check the gate made, with its verdict (docs/gates-and-exit-codes.md). */
export interface GateCheck extends z.output<typeof gateCheckObject> {}
const GateCheckSchema: z.ZodType<GateCheck> = gateCheckObject;

const gateFlipObject = z.object({
  caseId: z.string(),
  turn: count,
  locale: z.string(),
  kind: z.string(),
  user: z.string(),
  gold: z.array(z.string()),
  retrievedIds: z.array(z.string()),
  /** Where each gold card is now, per stage (1-based rank; null = absent), from the trace summary. */
  goldPositions: GoldPositionsSchema.optional(),
});
/** A gold-bearing turn whose hit@k was 1 in the baseline and is 0 now. */
export interface GateFlip extends z.output<typeof gateFlipObject> {}
const GateFlipSchema: z.ZodType<GateFlip> = gateFlipObject;

const gateResultObject = z.object({
  passed: z.boolean(),
  failures: z.array(GateFailureSchema),
  /** Every floor and baseline check with its verdict (absent in reports written before gates recorded them). */
  checks: z.array(GateCheckSchema).optional(),
  /** With a baseline: the tolerance of the drop checks and where it came from. */
  tolerance: z.object({ maxDrop: z.number(), source: z.string() }).optional(),
  /**
   * With a baseline: how the drop checks decided (docs/statistics.md,
   * "Baseline gates with repeats"): `point` compares the means (a run
   * without repeats, or whose repeats were identical); `repeat-bootstrap`
   * fails only when the one-sided lower bound of the drop, at `level`, exceeds
   * the tolerance. `description` says it in words, as the gate output prints it.
   */
  dropTest: z
    .object({ method: z.enum(["point", "repeat-bootstrap"]), level: z.number().optional(), description: z.string() })
    .optional(),
  /** With a baseline: every hit@k 1→0 turn (gated only with maxFlips), quarantined turns left out. */
  flips: z.array(GateFlipSchema).optional(),
  /**
   * With `--quarantine FILE`: the turns of this run the gate left out (they
   * stay in the report and its aggregates; docs/ci.md). `listed` counts the
   * file's entries, `count` those that are turns of this run.
   */
  quarantine: z
    .object({
      file: z.string(),
      listed: count,
      count: count,
      turns: z.array(z.object({ caseId: z.string(), turn: count, locale: z.string(), reason: z.string() })),
    })
    .optional(),
});
/** The gate's verdict (docs/gates-and-exit-codes.md). */
export interface GateResult extends z.output<typeof gateResultObject> {}
export const GateResultSchema: z.ZodType<GateResult> = gateResultObject;
