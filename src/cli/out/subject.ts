/**
 * What a command hands the output registry (src/cli/out-formats.ts) to
 * render (its subject), and the shape of a format's module. Types only, so
 * the registry's table loads nothing.
 */
import type { OutputData } from "../../atomic.js";
import type { Baseline } from "../../eval/gate/baseline.js";
import type { Comparison, RunSide } from "../../eval/gate/compare.js";
import type { LabelPageData } from "../../eval/label/pool.js";
import type { Report } from "../../eval/report/types.js";
import type { RecordedGraphTurn } from "../../eval/sweep/recorded.js";
import type { ConfigFile } from "../../research/tune-config.js";

/** A run's report (`eval`, `start`, `merge`, `report`). */
export interface ReportSubject {
  kind: "report";
  report: Report;
  /** The pull-request comment's reference (the baseline the gate compared with; null: none), seed and title. */
  comment: { reference: { file: string; data: Baseline | Report } | null; seed: number; title: string };
  /** The name the HTML page shows (default: the page's own file name; `retrace report`: the JSON read). */
  pageName?: string;
  /** `eval --traces`: the recorded turns, for the write-back formats. */
  recorded?: readonly RecordedGraphTurn[];
  /** `trec:`: the run tag (6th column). */
  trecTag?: string;
}

/** Two runs compared (`compare`). */
export interface ComparisonSubject {
  kind: "comparison";
  a: RunSide;
  b: RunSide;
  /** The comparison, computed once (src/eval/gate/compare.ts `buildComparison`): the document `compare --json` prints. */
  comparison: Comparison;
}

/** A labelling page's data (`label`). */
export interface LabelSubject {
  kind: "label";
  data: LabelPageData;
}

/** A tuned retrieval configuration (`tune`, `beir --tune`). */
export interface TuningSubject {
  kind: "tuning";
  config: ConfigFile;
}

/** Cases written as JSON Lines (`cases import`, `cases synth`). */
export interface CasesSubject {
  kind: "cases";
  text: string;
}

export type OutSubject = ReportSubject | ComparisonSubject | LabelSubject | TuningSubject | CasesSubject;
export type SubjectKind = OutSubject["kind"];

/** What a format's module renders for one subject: the data of FILE, or several files (a TREC pair) with notes to print once written. */
export type Rendered = OutputData | { files: readonly { path: string; data: OutputData }[]; notes?: readonly string[] };

/** A format's module (./out/NAME.ts): a renderer per subject it can write. */
export interface OutFormatModule {
  render: { [K in SubjectKind]?: (subject: Extract<OutSubject, { kind: K }>, file: string) => Rendered };
}
