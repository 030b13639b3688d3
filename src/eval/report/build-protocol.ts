/**
 * What the calling thread and the worker of `buildReportOffThread`
 * (./build-thread.ts, ./build-worker.ts) exchange. The evaluators cross as
 * data: what `buildReport` reads of them (their keys, whether they concern
 * any turn, the reason their keys were not measured: src/eval/report/vacuous.ts)
 * is worked out over the turns before the worker starts, and the worker
 * rebuilds evaluators that give the same answers.
 */
import type { EvaluatorSpec } from "../measures/evaluators.js";
import type { BuildReportInput } from "./aggregate.js";
import type { Report, TurnReport } from "./types.js";
import { artifactsOf, vacuousReason } from "./vacuous.js";

/** An evaluator as data: its name, keys, whether it concerns any turn of the run, and the reason its keys would be vacuous. */
export interface EvaluatorData {
  name: string;
  keys: string[];
  applies: boolean;
  reason: string;
}

export interface BuildWorkerData {
  /** The input without its turns and evaluators (sent apart) and without functions. */
  input: Omit<BuildReportInput, "turns" | "evaluators" | "extraSplits">;
  evaluators: EvaluatorData[];
}

/** The report without its run, turns and gate (the caller's own objects go back in those places). */
export type BuildResult = Omit<Report, "run" | "turns" | "gate"> & { run: null; turns: null; gate: null };

/**
 * The evaluators as data over `turns`, answering as `vacuousKeys` would ask
 * them: `applies` is whether `appliesTo` holds for some turn, and `reason`
 * the most frequent "not measured" reason among the turns (ties: first
 * seen), else `whenEmpty`.
 */
export function evaluatorData(turns: readonly TurnReport[], evaluators: readonly EvaluatorSpec[]): EvaluatorData[] {
  return evaluators.map((spec) => {
    const appliesTo = spec.appliesTo;
    const applies = appliesTo === undefined || turns.some((t) => appliesTo(artifactsOf(t)));
    const reason = applies ? vacuousReason(spec, turns) : spec.whenEmpty;
    return { name: spec.name, keys: [...spec.keys], applies, reason };
  });
}

/**
 * What the worker's `buildReport` reads of a turn, and nothing it does not
 * (issue 51, scale): the turn without its texts (the user message, the
 * answer, the trace's query), its results' comments, its captured documents
 * and the trace's ranked heads (`trace.stages`, which the build never reads;
 * `trace.stageSizes` it does). Everything else is kept as it is, so a field a
 * computation reads later is never lost by accident, only the ones above are
 * left out: at a million spans they made the copy into the worker a
 * gigabyte. A shallow projection: the kept arrays and records are the
 * turn's own (the copy into the worker is made from it, not mutated).
 */
export function reportTurn(t: TurnReport): TurnReport {
  const out: TurnReport = {
    ...t,
    user: "",
    answer: "",
    results: t.results.map((r) => ({ key: r.key, score: r.score })),
  };
  if (t.trace !== undefined) {
    const { stages: _stages, ...trace } = t.trace;
    out.trace = { ...trace, query: "" };
  }
  if (t.captured?.documents !== undefined) {
    const { documents: _documents, ...captured } = t.captured;
    out.captured = captured;
  }
  return out;
}

/** Evaluators that answer `buildReport`'s questions as the originals did (they never evaluate). */
export function standInEvaluators(data: readonly EvaluatorData[]): EvaluatorSpec[] {
  return data.map((d) => ({
    name: d.name,
    keys: d.keys,
    evaluate: () => [],
    whenEmpty: d.reason,
    ...(d.applies ? {} : { appliesTo: () => false }),
  }));
}
