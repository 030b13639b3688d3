/**
 * Use-cases over a labelling page's export (docs/labelling.md):
 * `mergeLabelFiles` (`retrace label --merge EXPORTED --into CASES`: the pure
 * merge of src/eval/label/merge.ts over the two files) and `labelAgreement`
 * (`retrace label --agreement EXPORTED`: Cohen's κ, unweighted, between the
 * judge's suggested grades and the person's grades of the same cards).
 */
import { DataValidationError, type DataIssue } from "../errors.js";
import { gradesOf, mergeLabels, type MergeOutcome } from "../eval/label/merge.js";
import { cohenKappa, type KappaResult } from "../eval/stats/kappa.js";
import { loadKnowledgeBase } from "../kb/cards.js";
import { loadCatalog } from "../kb/catalog.js";
import { parseCaseLine, validateCases } from "../kb/cases.js";
import { readTextFileOrThrow } from "../kb/text.js";
import type { EvalCase, KnowledgeBase } from "../kb/types.js";
import { logLine, type LogLevel } from "../log.js";
import { moduleWorker, siblingModule } from "../module-worker.js";
import { InternalError } from "../errors.js";
import { reviveError, type SerializedError } from "../thread-errors.js";

/** The merged cases text (nothing written here: the command writes it, src/output-set.ts). */
/**
 * Merges an export into a cases file. With `ids` (the KB or catalog the cases
 * cite), every card id the export names is checked against it first: an id
 * no card or entry has, or a card of another locale, is exit 2 naming the
 * export's file, line and field, and nothing is merged.
 */
export async function mergeLabelFiles(exported: string, into: string, ids?: KnowledgeBase): Promise<MergeOutcome> {
  const [e, i] = await Promise.all([readTextFileOrThrow(exported), readTextFileOrThrow(into)]);
  if (ids !== undefined) {
    const cases: EvalCase[] = [];
    const issues: DataIssue[] = [];
    e.split(/\r?\n/).forEach((line, n) => {
      if (line.trim() === "") return;
      const parsed = parseCaseLine(line, exported, n + 1);
      if (parsed.case !== undefined) cases.push(parsed.case);
      issues.push(...parsed.issues);
    });
    issues.push(...validateCases(cases, ids, exported));
    if (issues.length > 0) throw new DataValidationError(issues);
  }
  return mergeLabels(e, exported, i, into);
}

/** What the merge's thread is started with (`mergeLabelFilesApart`). */
export interface MergeApartInit {
  exported: string;
  into: string;
  /** What to check the export's ids against (`mergeIdsOf`), or null. */
  ids: { kb?: string; catalog?: string; maxCardBytes?: number } | null;
}

/**
 * `mergeLabelFiles` (the ids read by `mergeIdsOf` when `ids` is given) in a
 * worker thread (./label-merge-worker.ts): the merge of a large export is
 * minutes of synchronous work, and this thread stays free to end the run on
 * SIGINT / SIGTERM / SIGHUP meanwhile (docs/reliability.md). The same outcome
 * and the same errors (their class and exit code survive the thread boundary).
 */
export function mergeLabelFilesApart(init: MergeApartInit): Promise<MergeOutcome> {
  const worker = moduleWorker(siblingModule(import.meta.url, "label-merge-worker"), init);
  return new Promise<MergeOutcome>((resolve, reject) => {
    let settled = false;
    const settle = (f: () => void) => {
      if (settled) return;
      settled = true;
      f();
      void worker.terminate();
    };
    worker.on(
      "message",
      (
        m:
          | { type: "log"; level: LogLevel; msg: string }
          | { type: "done"; outcome: MergeOutcome }
          | { type: "failed"; error: SerializedError },
      ) => {
        if (m.type === "log") logLine(m.level, m.msg);
        else if (m.type === "done") settle(() => resolve(m.outcome));
        else settle(() => reject(reviveError(m.error)));
      },
    );
    worker.on("error", (e) => settle(() => reject(e)));
    worker.on("exit", (code) =>
      settle(() => reject(new InternalError(`the merge's thread ended (exit ${code}) before it finished`))),
    );
  });
}

/** The cards `label --merge` checks the export against: `--catalog`'s entries, else `--kb`'s cards (default ./kb). */
export async function mergeIdsOf(o: { kb?: string; catalog?: string; maxCardBytes?: number }): Promise<KnowledgeBase> {
  if (o.catalog !== undefined) return loadCatalog(o.catalog);
  return loadKnowledgeBase(o.kb ?? "kb", o.maxCardBytes !== undefined ? { maxCardBytes: o.maxCardBytes } : {});
}

export interface AgreementOutcome extends KappaResult {
  /** Turns that carry both suggestions and the person's grades. */
  turns: number;
  /** Cards the judge suggested a grade for that the person did not grade (left out). */
  unconfirmed: number;
}

/**
 * κ between `suggested` (the judge) and the person's grades (`relevant`, and
 * `judged` cards without a grade as 0) over the cards of each turn that carry
 * both. Exit 2 naming file, line and field for a bad line, or when no card
 * carries both (nothing to measure).
 */
export async function labelAgreement(file: string): Promise<AgreementOutcome> {
  const text = await readTextFileOrThrow(file);
  const issues: DataIssue[] = [];
  const judge: number[] = [];
  const human: number[] = [];
  let turns = 0;
  let unconfirmed = 0;
  text.split("\n").forEach((raw, i) => {
    const line = raw.replace(/\r$/, "");
    if (line.trim() === "") return;
    const parsed = parseCaseLine(line, file, i + 1);
    if (parsed.case === undefined) return void issues.push(...parsed.issues);
    for (const t of parsed.case.turns) {
      if (t.suggested === undefined) continue;
      const grades = gradesOf(t);
      let both = 0;
      for (const [id, s] of Object.entries(t.suggested)) {
        const g = grades.get(id);
        if (g === undefined) unconfirmed++;
        else {
          judge.push(s);
          human.push(g);
          both++;
        }
      }
      if (both > 0) turns++;
    }
  });
  if (issues.length > 0) throw new DataValidationError(issues);
  if (judge.length === 0)
    throw new DataValidationError([
      {
        file,
        message:
          "no card carries both a judge's suggested grade and a person's grade (export a page written with --judge after grading some suggested cards)",
      },
    ]);
  return { ...cohenKappa(judge, human), turns, unconfirmed };
}
