/**
 * The parts of `retrace eval` that turn per-turn results into the report and
 * its gate verdict, shared with `retrace merge` so a merged sharded run goes
 * through the very same code as an unsharded one (docs/reliability.md,
 * "Sharded sweeps"): which evaluators a run has (their keys order the
 * report and say why a key was not measured), the report itself
 * (`buildReport`), and the gate (floors, baseline drops and flips).
 *
 * Kept free of the graph, the store and LangChain, so `retrace merge` loads
 * none of them.
 */
import path from "node:path";
import { writeFileAtomic } from "../atomic.js";
import { buildReport } from "../eval/report/aggregate.js";
import { assertComparable, type Baseline } from "../eval/gate/baseline.js";
import type { EvaluatorSpec } from "../eval/measures/evaluators.js";
import { FLOOR_OPTIONS, gate, type FloorThresholds, type GateThresholds } from "../eval/gate/gate.js";
import type { ResampleUnit } from "../eval/stats/bootstrap.js";
import type { Report, RunInfo, TurnReport } from "../eval/report/types.js";
import { renderHtmlReport } from "../eval/report/html/report-page.js";
import { renderJUnit, renderMarkdown, renderTable, reportToJSON } from "../eval/report/render.js";
import { log } from "../log.js";
import { out, outputWidth, outText, useColor } from "./io.js";

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
}

/** The report of a sweep, its gate not yet applied (`gate: null`). */
export function reportOf(i: ReportInput): Report {
  return buildReport({
    run: i.run,
    turns: i.turns,
    evaluators: i.evaluators,
    seed: i.seed,
    ...(i.samples !== undefined ? { samples: i.samples } : {}),
    ...(i.resample !== undefined ? { resample: i.resample } : {}),
    ...(i.cardsPerLocale !== undefined ? { cardsPerLocale: i.cardsPerLocale } : {}),
  });
}

/** The gate options of `eval` and `merge`. */
export interface GateOptions extends FloorThresholds {
  maxDrop?: number;
  maxFlips?: number;
}

/**
 * Sets `report.gate` from the gate options and the baseline (null: none),
 * after warning about anything the baseline differs in that does not
 * prevent the comparison (assertComparable throws on what does). `seed`
 * seeds the paired test quoted in regression reasons: the run's bootstrap seed.
 */
export function applyGate(report: Report, o: GateOptions, seed: number, baseline: Baseline | null): void {
  if (baseline !== null) for (const note of assertComparable(baseline, report)) log.warn(note);
  const thresholds: GateThresholds = { seed };
  for (const { option } of FLOOR_OPTIONS) if (o[option] !== undefined) thresholds[option] = o[option];
  if (o.maxDrop !== undefined) thresholds.maxDrop = o.maxDrop;
  if (o.maxFlips !== undefined) thresholds.maxFlips = o.maxFlips;
  report.gate = gate(report, thresholds, baseline ?? undefined);
}

/** Where a finished report goes: stdout as JSON (`--json`) or the table, and each file option given. */
export interface ReportOutputs {
  json?: boolean;
  /** Markdown. */
  out?: string;
  junit?: string;
  reportJson?: string;
  html?: string;
}

/**
 * Prints the report and writes every requested file (atomically), the same for
 * `retrace eval` and `retrace merge`. Called only once the report is complete:
 * a failed run writes none of them (docs/reliability.md).
 */
export async function emitReport(report: Report, o: ReportOutputs): Promise<void> {
  if (o.json === true) out(reportToJSON(report));
  else outText(renderTable(report, { color: useColor(), width: outputWidth() }));
  if (o.out !== undefined) await writeFileAtomic(o.out, renderMarkdown(report));
  if (o.junit !== undefined) await writeFileAtomic(o.junit, renderJUnit(report));
  if (o.reportJson !== undefined) await writeFileAtomic(o.reportJson, reportToJSON(report));
  if (o.html !== undefined) await writeFileAtomic(o.html, renderHtmlReport(report, { name: path.basename(o.html) }));
}

