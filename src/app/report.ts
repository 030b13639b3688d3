/**
 * The report-and-gate step every run ends with, the same for `retrace eval`,
 * `retrace eval --graph` and `retrace merge`, so a merged sharded run goes
 * through the very same code as an unsharded one (docs/reliability.md,
 * "Sharded sweeps"): the report of a sweep's per-turn results (`reportOf`,
 * `buildReport`), its gate (`applyGate`: floors, baseline drops and flips;
 * a `--graph` run's errored and no-retrieval turns),
 * and a saved report read back (`readReport`).
 *
 * Kept free of the graph, the store and LangChain, so `retrace merge` loads
 * none of them.
 */
import { InvalidArgumentError } from "../errors.js";
import { assertComparable, type Baseline } from "../eval/gate/baseline.js";
import { FLOOR_OPTIONS, gate, gatedTurns, type FloorThresholds, type GateThresholds } from "../eval/gate/gate.js";
import type { Quarantine } from "../eval/gate/quarantine.js";
import { unjudgedGateCheck } from "../eval/gate/unjudged.js";
import type { EvaluatorSpec } from "../eval/measures/evaluators.js";
import { buildReport, type BuildReportInput } from "../eval/report/aggregate.js";
import { buildReportYielding } from "../eval/report/build-thread.js";
import { judgmentWarning } from "../eval/report/judgments.js";
import { parseAndFillReport } from "../eval/report/derived-on-read.js";
import type { Report, RunInfo, TurnReport } from "../eval/report/types.js";
import type { ResampleUnit } from "../eval/stats/bootstrap.js";
import { graphGateChecks } from "../eval/sweep/graph-checks.js";
import { readTextFileOrThrow } from "../kb/text.js";
import { log } from "../log.js";
import { parseJsonOrThrow } from "../kb/json.js";

/** What the report of a sweep is computed from (everything but the turns is a setting of the run). */
export interface ReportInput {
  run: RunInfo;
  turns: TurnReport[];
  evaluators: readonly EvaluatorSpec[];
  seed: number;
  samples?: number;
  resample?: ResampleUnit;
  /** Cards per locale of the KB: the chance levels' N. */
  cardsPerLocale?: Record<string, number>;
  /** Whether counterfactual retrieval ran (the report's `queryAttribution` section); unset: no section. */
  counterfactual?: { enabled: boolean; reason?: string };
}

function buildInput(i: ReportInput): BuildReportInput {
  return {
    run: i.run,
    turns: i.turns,
    evaluators: i.evaluators,
    seed: i.seed,
    ...(i.samples !== undefined ? { samples: i.samples } : {}),
    ...(i.resample !== undefined ? { resample: i.resample } : {}),
    ...(i.cardsPerLocale !== undefined ? { cardsPerLocale: i.cardsPerLocale } : {}),
    ...(i.counterfactual !== undefined ? { counterfactual: i.counterfactual } : {}),
  };
}

/** The report of a sweep, its gate not yet applied (`gate: null`). */
export function reportOf(i: ReportInput): Report {
  return buildReport(buildInput(i));
}

/**
 * `reportOf` for the CLI's runs: the same bytes, built in steps with the
 * event loop running between them, so that SIGINT, SIGTERM and SIGHUP end
 * the run during the bootstrap too (src/eval/report/build-thread.ts).
 */
export function reportInSteps(i: ReportInput): Promise<Report> {
  return buildReportYielding(buildInput(i));
}

/**
 * Warns on stderr when the run's judged@k is below its warning level
 * (docs/metrics.md, "judged@k"), naming the turns with unjudged cards, so new
 * retrieval results get labelled instead of silently counted as misses.
 * Every run that builds a report calls it: `eval`, `eval --graph`, `merge`.
 */
export function warnAboutJudgments(report: Report): void {
  const warning = judgmentWarning(report);
  if (warning !== null) log.warn(warning);
}

/** The gate options of `eval` and `merge`: floors (`minHit`, … one per FLOOR_OPTIONS entry), drops and flips, and the gates of `--graph` runs. */
export interface GateOptions extends FloorThresholds {
  /** `--gate max-drop=X`: drops against the baseline beyond X fail; `auto`: at the default tolerance (0 on the same data and configuration, else 0.02; docs/gates-and-exit-codes.md). Unset: drops are not checked. */
  maxDrop?: MaxDrop;
  maxFlips?: number;
  /** Turns whose graph run threw or was given up that the gate tolerates (default 0), for every graph. */
  maxErrors?: number;
  /** Gold-bearing turns with no retrieval (scored as misses) the gate tolerates (default: not gated), for every graph. */
  maxNoRetrieval?: number;
  /** Runs with `--repeat N` (N ≥ 2): flaky turns (hit in some repeats, missed in others) the gate tolerates (default: not gated). */
  maxFlaky?: number;
  /** The mean unjudged@k over the turns that carry judgments the gate tolerates (a share in [0, 1]; default: not gated; src/eval/gate/unjudged.ts). */
  maxUnjudged?: number;
  /** A quarantine file: `caseId#turn reason` lines the gate leaves out (src/eval/gate/quarantine.ts, docs/ci.md). */
  quarantine?: string;
  /** Stage floors (`--min-stage STAGE=VALUE`) and drops against the baseline (`--max-stage-drop STAGE=VALUE`); src/eval/gate/stage-gate.ts. */
  minStage?: Record<string, number>;
  maxStageDrop?: Record<string, number>;
  /** The baseline file named on the command line (`--baseline`): which file the baseline checks compare with; it adds or removes no check. */
  baseline?: string;
}

/** A drop tolerance: a number in [0, 1], or `auto` (the default tolerance, src/eval/gate/gate.ts defaultMaxDrop). */
export type MaxDrop = number | "auto";

/**
 * Whether the options compare with a baseline: a baseline check is named
 * (`--gate max-drop`, `max-flips` or `max-stage-drop`) and the run does not
 * write one. A gate checks exactly the checks named: `--baseline FILE` only
 * says which file they compare with (docs/gates-and-exit-codes.md, "A gate
 * means one thing"), so `--baseline` with no baseline check and no
 * `--update-baseline` checks nothing and is exit 2 (InvalidArgumentError).
 */
export function wantsBaseline(
  o: Pick<GateOptions, "maxDrop" | "maxFlips" | "maxStageDrop"> & { baseline?: string; updateBaseline?: boolean },
): boolean {
  const checks = o.maxDrop !== undefined || o.maxFlips !== undefined || o.maxStageDrop !== undefined;
  if (o.baseline !== undefined && !checks && o.updateBaseline !== true)
    throw new InvalidArgumentError(
      "--baseline",
      "used with a baseline check (--gate max-drop=X or max-drop=auto, --gate max-flips=N, --gate max-stage-drop=STAGE=X) or --update-baseline: it names the file those checks compare with and checks nothing itself",
      o.baseline,
    );
  return !o.updateBaseline && checks;
}

/**
 * Sets `report.gate` from the gate options and the baseline (null: none),
 * after warning about anything the baseline differs in that does not
 * prevent the comparison (assertComparable throws on what does). `seed`
 * seeds the paired test quoted in regression reasons: the run's bootstrap seed.
 * `quarantine`: the parsed `o.quarantine` file (read before the run starts).
 */
export function applyGate(
  report: Report,
  o: GateOptions,
  seed: number,
  baseline: Baseline | null,
  quarantine?: Quarantine,
): void {
  if (baseline !== null) for (const note of assertComparable(baseline, report)) log.warn(note);
  const thresholds: GateThresholds = { seed };
  for (const { option } of FLOOR_OPTIONS) if (o[option] !== undefined) thresholds[option] = o[option];
  if (typeof o.maxDrop === "number") thresholds.maxDrop = o.maxDrop; // `auto`: the default tolerance
  if (o.maxFlips !== undefined) thresholds.maxFlips = o.maxFlips;
  // A gate checks exactly the checks named: drops only with `--gate max-drop`, whichever baseline file is named (docs/gates-and-exit-codes.md).
  if (o.maxDrop === undefined) thresholds.drops = false;
  if (o.minStage !== undefined) thresholds.minStage = o.minStage;
  if (o.maxStageDrop !== undefined) thresholds.maxStageDrop = o.maxStageDrop;
  if (quarantine !== undefined) thresholds.quarantine = quarantine;
  const gated = gatedTurns(report, quarantine);
  // Checked first: a --gate max-unjudged that cannot be checked (no gated turn carries judgments) is exit 2, never a silent pass.
  const unjudged = o.maxUnjudged !== undefined ? unjudgedGateCheck(gated, o.maxUnjudged) : undefined;
  const g0 = gate(report, thresholds, baseline ?? undefined);
  const g =
    unjudged === undefined
      ? g0
      : {
          ...g0,
          passed: g0.passed && unjudged.failure === null,
          failures: [...g0.failures, ...(unjudged.failure !== null ? [unjudged.failure] : [])],
          checks: [...(g0.checks ?? []), unjudged.check],
        };
  // One rule for every graph (src/eval/sweep/graph-checks.ts): a turn that errored (threw, or was given up at its deadline) fails the gate unless
  // --gate max-errors tolerates it; quarantined turns are left out. retrace's own graph lists that check (and max-no-retrieval) when it has
  // something to say — an error turn, or either check set — so a clean run's gate reads as it did.
  const turnChecks =
    report.run.graph !== undefined ||
    o.maxErrors !== undefined ||
    o.maxNoRetrieval !== undefined ||
    gated.some((t) => t.error !== undefined);
  if (!turnChecks && o.maxFlaky === undefined) {
    report.gate = g;
    return;
  }
  const checked = graphGateChecks(gated, {
    maxErrors: o.maxErrors ?? 0,
    ...(o.maxNoRetrieval !== undefined ? { maxNoRetrieval: o.maxNoRetrieval } : {}),
    ...(o.maxFlaky !== undefined ? { maxFlaky: o.maxFlaky, flaky: gatedFlaky(report, gated) } : {}),
  });
  const own = turnChecks
    ? checked
    : {
        checks: checked.checks.filter((c) => c.kind === "flaky"),
        failures: checked.failures.filter((f) => f.kind === "flaky"),
      };
  const failures = [...g.failures, ...own.failures];
  report.gate = { ...g, passed: failures.length === 0, failures, checks: [...(g.checks ?? []), ...own.checks] };
}

/** The report's flaky turns (`repeats.flaky`) among the gated turns (quarantined ones left out); a --max-flaky without a repeats section cannot be checked: exit 2. */
function gatedFlaky(report: Report, gated: readonly TurnReport[]): NonNullable<Report["repeats"]>["flaky"] {
  if (report.repeats === undefined)
    throw new InvalidArgumentError(
      "--gate max-flaky",
      "a run with --repeat N, N ≥ 2 (the report has no repeats section)",
      "a report without repeats",
    );
  const keep = new Set(gated.map((t) => `${t.caseId}#${t.turn}`));
  return report.repeats.flaky.filter((f) => keep.has(`${f.caseId}#${f.turn}`));
}

/** Reads and checks the shape of a report JSON file (version, run, aggregates, splits, turns). */
export async function readReport(file: string): Promise<Report> {
  const text = await readTextFileOrThrow(file); // the one text loader (src/kb/text.ts): exit 2 naming the file
  const data = parseJsonOrThrow(text, { file, expected: "a retrace report JSON file" }); // file:line:column of a syntax error (src/kb/json.ts)
  return parseAndFillReport(data, file); // ReportSchema, older schemaVersions migrated (src/eval/report/schemas.ts), derived sections filled (src/eval/report/derived-on-read.ts)
}
