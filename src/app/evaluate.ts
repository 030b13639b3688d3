/**
 * The one body of every eval (`retrace eval`, with or without `--graph` or
 * `--traces`): whatever the source of the turns — retrace's own graph
 * (./own-graph/eval.ts), a graph of your own or recorded traces (./graph-eval.ts) —
 * once the source has checked what it can before anything starts, its sweep
 * runs here and everything after it is the same: error texts redacted,
 * repeats combined, the report built with its intervals, attribution,
 * chance levels and splits, then either a shard's partial section or the
 * gate (floors, baseline, flips, errors, flaky turns), then the wall-clock
 * `timings` last (docs/determinism.md) and the judge's cost.
 */
import { shardNote, shardSection, type ShardSpec } from "../eval/gate/shard.js";
import type { Baseline } from "../eval/gate/baseline.js";
import type { Quarantine } from "../eval/gate/quarantine.js";
import type { EvaluatorSpec } from "../eval/measures/evaluators.js";
import { repeatsNote } from "../eval/report/render/shared.js";
import type { RepeatsSection, Report, TurnReport } from "../eval/report/types.js";
import type { ResampleUnit } from "../eval/stats/bootstrap.js";
import { attachRepeats } from "../eval/sweep/repeats.js";
import { combineRepeatsOffThread } from "../eval/sweep/repeats-thread.js";
import type { EvalCase, KnowledgeBase } from "../kb/types.js";
import { log } from "../log.js";
import { secretRedactor } from "../redact.js";
import type { JudgeCost } from "../eval/measures/types.js";
import { recordJudgeCost } from "./judge.js";
import { NO_PROGRESS, type UseCaseHooks } from "./progress.js";
import { applyGate, reportInSteps, warnAboutJudgments, type GateOptions, type ReportInput } from "./report.js";
import type { SweepSource, SweptTurns } from "./sweep-source.js";

/** An eval's report (gate applied unless it is a shard's) and the baseline it was compared with. */
export interface EvalOutcome {
  report: Report;
  baseline: Baseline | null;
  /** `eval --traces`: where each scored turn was recorded (its root span or run), for the write-back files. */
  recorded?: NonNullable<SweptTurns["recorded"]>;
}

/** What the one eval body runs: a source that has checked its options, the cases, the evaluators and what the gate compares with. */
export interface EvalRun {
  source: SweepSource;
  kb: KnowledgeBase;
  /** Every selected case (`--locale` / `--case`). */
  selected: readonly EvalCase[];
  /** The cases this run sweeps: the selection, or with `shard` this shard's whole cases. */
  cases: readonly EvalCase[];
  /** The dataset hash of a list of cases (the whole dataset's is known). */
  hashOf: (cases: readonly EvalCase[]) => string;
  evaluators: EvaluatorSpec[];
  /** Cards (or catalog entries) per locale: the N of the chance levels (docs/statistics.md). */
  cardsPerLocale: Record<string, number>;
  /** Whether gold-bearing turns are attributed (docs/query-attribution.md), and why not. */
  counterfactual: { enabled: boolean; reason?: string };
  options: GateOptions & { seed: number; resample?: ResampleUnit; shard?: ShardSpec };
  baseline: Baseline | null;
  quarantine?: Quarantine;
  /** The judge whose cost the report records (`--judge`). */
  judge?: { cost(): JudgeCost };
}

/** Rounds wall-clock milliseconds to a tenth (every `timings` figure). */
export const ms = (x: number) => Math.round(x * 10) / 10;

/** What the one report-and-gate step reads: an eval after its sweep, `retrace merge` after reading the shards (./merge.ts). */
export interface ReportStep {
  build: ReportInput;
  /** With repeats: the repeats section attached to the report (two-stage intervals, flaky turns). */
  repeats?: RepeatsSection;
  /** Log the repeats' note (an eval does; a merge's shards did). */
  repeatsNote?: boolean;
  gate: GateOptions;
  baseline: Baseline | null;
  quarantine?: Quarantine;
  /** `eval --shard`: the shard's section; the report is then partial and not gated (`retrace merge` gates). */
  shard?: () => NonNullable<Report["shard"]>;
}

/**
 * The one step after the turns are known, for `eval` (every source) and
 * `merge`: the report built with its intervals, attribution, chance levels
 * and splits (off thread when large), the repeats attached, the judgments
 * warned about, then either a shard's partial section or the gate (floors,
 * baseline, flips, errors, flaky turns), whose baseline tolerance is logged.
 */
export async function reportAndGate(step: ReportStep): Promise<Report> {
  const report = await reportInSteps(step.build);
  if (step.repeats !== undefined) {
    // Each key's overall interval accounts for both sources of variation: the two-stage one (cases, then repeats).
    attachRepeats(report, step.repeats);
    if (step.repeatsNote === true) log.info(repeatsNote(step.repeats));
  }
  warnAboutJudgments(report);
  if (step.shard !== undefined) {
    report.shard = step.shard();
    log.info(shardNote(report.shard));
  } else {
    applyGate(report, step.gate, step.build.seed, step.baseline, step.quarantine);
    if (report.gate?.tolerance !== undefined)
      log.info(
        `baseline tolerance: --gate max-drop=${report.gate.tolerance.maxDrop} (${report.gate.tolerance.source})`,
      );
  }
  return report;
}

/** Runs the source's sweep over `run.cases` and returns its report, gate applied (a shard's: partial, ungated). */
export async function evaluate(run: EvalRun, hooks: UseCaseHooks = {}): Promise<EvalOutcome> {
  const { source, options: o } = run;
  const started = new Date();
  const t0 = performance.now();
  const progress = (hooks.progress ?? NO_PROGRESS)("eval", "cases");
  let swept: SweptTurns;
  try {
    swept = await source.sweep(run.cases, run.kb, run.evaluators, (d, t) => progress.update(d, t), run.selected);
  } finally {
    progress.stop();
  }
  // Error text of a graph can echo credentials (a server's 5xx body with the request headers):
  // redacted before it reaches any output, the report files included (docs/reliability.md).
  const redact = secretRedactor();
  for (const { report: t } of swept.runs.flat()) {
    if (t.error !== undefined) t.error = redact(t.error);
    for (const st of t.captured?.stages ?? []) if (st.error !== null) st.error = redact(st.error);
    if (t.queriesOff !== undefined) t.queriesOff.detail = redact(t.queriesOff.detail);
  }
  const tReport = performance.now();
  // With repeats: one turn per turn, its scores the means over the repeats (src/eval/sweep/repeats.ts).
  const combined =
    swept.runs.length >= 2
      ? await combineRepeatsOffThread(
          swept.runs.map((r) => r.map((t) => t.report)),
          { seed: o.seed },
        )
      : undefined;
  const turns: TurnReport[] = combined?.turns ?? swept.turns.map((t) => t.report);
  const header = source.header(turns, swept);
  // The header was the captures' last reader (each turn's stages, texts and documents as captured; the report keeps what it shows of them):
  // let them go before the report is built, a fifth of the heap of a large recording (docs/recorded-traces.md, "Scale").
  for (const t of swept.runs.flat()) t.retrieval = null;
  const report = await reportAndGate({
    build: {
      run: header,
      turns,
      evaluators: run.evaluators,
      seed: o.seed,
      ...(o.resample !== undefined ? { resample: o.resample } : {}),
      cardsPerLocale: run.cardsPerLocale,
      counterfactual: run.counterfactual,
    },
    ...(combined !== undefined ? { repeats: combined.section, repeatsNote: true } : {}),
    gate: o,
    baseline: run.baseline,
    ...(run.quarantine !== undefined ? { quarantine: run.quarantine } : {}),
    ...(o.shard !== undefined
      ? {
          // A partial report: not gated (the merged report is), marked with the shard and the whole selection's identity.
          shard: () =>
            shardSection(o.shard!, run.selected, run.cases, run.hashOf(run.selected), {
              ...(source.recorded === true ? { recorded: true } : {}),
            }),
        }
      : {}),
  });
  // Wall clock last and apart: everything above is identical between identical runs (docs/determinism.md).
  report.timings = {
    started: started.toISOString(),
    durationMs: Math.round(performance.now() - t0),
    turns: swept.stageTimings ?? {},
    ...(swept.phases !== undefined
      ? {
          phases: {
            graph: ms(swept.phases.graph),
            evaluate: ms(swept.phases.evaluate),
            report: ms(performance.now() - tReport),
          },
        }
      : {}),
    ...(source.setupTimings?.() ?? {}),
  };
  if (run.judge !== undefined) recordJudgeCost(report, run.judge.cost());
  return { report, baseline: run.baseline, ...(swept.recorded !== undefined ? { recorded: swept.recorded } : {}) };
}
