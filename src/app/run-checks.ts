/**
 * What every source's eval does the same way before its sweep, written once
 * (retrace's own graph: ./eval-plan.ts and ./own-graph/eval.ts; a graph of yours and
 * recorded traces: ./graph-eval.ts `runModuleEval`): the baseline-writing
 * rules, the `--quarantine` file read against the cases, and the judge
 * module opened. Typed errors (exit 2), nothing printed.
 */
import { InvalidArgumentError } from "../errors.js";
import { readQuarantine, type Quarantine } from "../eval/gate/quarantine.js";
import { caseIndexOf } from "../kb/cases.js";
import type { EvalCase } from "../kb/types.js";
import type { LoadedData } from "../system.js";
import { isolationLimits } from "./graph-isolation.js";
import { openJudge } from "./judge.js";

/**
 * `--update-baseline` writes a baseline of the whole dataset that compares
 * with nothing: refused with `--locale`/`--case` (a filtered run) and with a
 * drop or flip tolerance.
 */
export function checkBaselineWriting(o: {
  updateBaseline?: boolean | undefined;
  locale?: readonly string[] | undefined;
  case?: readonly string[] | undefined;
  maxDrop?: unknown;
  maxFlips?: unknown;
}): void {
  if (o.updateBaseline === true && ((o.locale?.length ?? 0) > 0 || (o.case?.length ?? 0) > 0))
    throw new InvalidArgumentError(
      "--update-baseline",
      "used without --locale/--case (a baseline covers the whole dataset)",
      "a filtered run",
    );
  if (o.updateBaseline === true && (o.maxDrop !== undefined || o.maxFlips !== undefined))
    throw new InvalidArgumentError(
      "--update-baseline",
      "used without --gate max-drop/max-flips (it writes the baseline; it compares with nothing)",
      "both",
    );
}

/** The `--quarantine` file (when given), checked against every case of the cases file (not only the selected ones): exit 2 naming file and line. */
export async function readRunQuarantine(
  file: string | undefined,
  cases: readonly EvalCase[],
): Promise<Quarantine | undefined> {
  return file !== undefined ? readQuarantine(file, caseIndexOf(cases)) : undefined;
}

/**
 * The judge module of a run (`run.judge`), loaded and checked before the
 * sweep (and, for retrace's own graph, before a store starts): undefined
 * without one. `limits`: the options its thread's limits come from
 * (`run.turnTimeout` is each call's deadline).
 */
export async function openRunJudge(
  o: { judge?: string | undefined; judgeCache?: string | undefined },
  data: Pick<LoadedData, "kb" | "cases">,
  limits: Parameters<typeof isolationLimits>[0],
): Promise<Awaited<ReturnType<typeof openJudge>> | undefined> {
  return o.judge === undefined ? undefined : openJudge(o.judge, data, o.judgeCache, isolationLimits(limits));
}
