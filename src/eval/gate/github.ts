/**
 * GitHub workflow annotations of a gated report (docs/ci.md): one `::error`
 * line per gate failure and one per turn whose hit@k went from 1 to 0
 * against the baseline, pointing at the case's line in the cases file, so
 * the pull request's "Files changed" view and the run summary show them.
 *
 * Escaping follows GitHub's workflow-command rules (the same as
 * `@actions/core`'s `issueCommand`): in the message `%` → `%25`, CR → `%0D`,
 * LF → `%0A`; in property values also `:` → `%3A` and `,` → `%2C`.
 *
 * Pure: the caller gives the cases file as GitHub should name it (relative
 * to the repository root) and the line of each case.
 */
import type { CaseIndex } from "../../kb/cases.js";
import { HIT_KEY } from "../measures/metrics.js";
import { metricLabel } from "../measures/label.js";
import type { GateFailure, GateFlip, Report } from "../report/types.js";
import { flipText } from "./gate.js";

/** GitHub shows at most 10 error annotations a step and 50 a job; more than this many flip annotations only fill the log. */
export const MAX_FLIP_ANNOTATIONS = 50;

/** A workflow command's message, escaped (`%`, CR, LF). */
export function escapeData(s: string): string {
  return s.replace(/%/g, "%25").replace(/\r/g, "%0D").replace(/\n/g, "%0A");
}

/** A workflow command's property value, escaped (`%`, CR, LF, `:`, `,`). */
export function escapeProperty(s: string): string {
  return escapeData(s).replace(/:/g, "%3A").replace(/,/g, "%2C");
}

/** `::error file=…,line=…,title=…::message`, properties in the order given, undefined ones left out. */
export function workflowCommand(
  command: "error" | "warning" | "notice",
  props: Readonly<Record<string, string | number | undefined>>,
  message: string,
): string {
  const p = Object.entries(props)
    .filter((e): e is [string, string | number] => e[1] !== undefined)
    .map(([k, v]) => `${k}=${escapeProperty(String(v))}`)
    .join(",");
  return `::${command}${p === "" ? "" : ` ${p}`}::${escapeData(message)}`;
}

export interface AnnotationTarget {
  /** The cases file as GitHub names it: relative to the repository root, `/`-separated. */
  casesFile: string;
  /** Line of each case in it. */
  index: CaseIndex;
}

/** The case a failure concerns, when it concerns exactly one (a flips failure of one turn). */
function caseOfFailure(f: GateFailure, flips: readonly GateFlip[]): string | undefined {
  return f.kind === "flips" && flips.length === 1 ? flips[0]!.caseId : undefined;
}

/**
 * The annotation lines of a report: nothing when it was not gated; one
 * `::error` per gate failure (pointing at the cases file, at the case's line
 * when the failure is about one case), then one `::error` per hit→miss flip
 * at its case's line, at most MAX_FLIP_ANNOTATIONS, then one line saying how
 * many more there are.
 */
export function annotationLines(report: Report, target: AnnotationTarget): string[] {
  const g = report.gate;
  if (g === null) return [];
  const flips = g.flips ?? [];
  const lineOf = (caseId: string | undefined) => (caseId === undefined ? undefined : target.index.get(caseId)?.line);
  const out: string[] = [];
  for (const f of g.failures) {
    const caseId = caseOfFailure(f, flips);
    const scope = f.scope !== undefined ? ` [${f.scope}]` : "";
    out.push(
      workflowCommand(
        "error",
        { file: target.casesFile, line: lineOf(caseId), title: `retrace gate: ${f.kind} ${f.key}${scope}` },
        f.reason,
      ),
    );
  }
  for (const f of flips.slice(0, MAX_FLIP_ANNOTATIONS))
    out.push(
      workflowCommand(
        "error",
        {
          file: target.casesFile,
          line: lineOf(f.caseId),
          title: `retrace: ${metricLabel(HIT_KEY, report.run.k)} 1 → 0 at ${f.caseId}#${f.turn}`,
        },
        `hit→miss against the baseline: ${flipText(f)}`,
      ),
    );
  if (flips.length > MAX_FLIP_ANNOTATIONS)
    out.push(
      workflowCommand(
        "error",
        { file: target.casesFile, title: "retrace: more flips" },
        `… and ${flips.length - MAX_FLIP_ANNOTATIONS} more turns went from hit to miss (every one is in the report's gate.flips and the step summary)`,
      ),
    );
  return out;
}
