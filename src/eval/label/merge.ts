/**
 * `retrace label --merge EXPORTED --into CASES` (docs/labelling.md): the
 * labelled turns of a labelling page's export merged into a cases file.
 * Pure: text in, text out. For each case of the export, by id:
 *
 * - absent from the cases file: appended;
 * - present: each turn's judgments are merged — grades (`relevant`, and
 *   `judged` cards without a grade are grade 0), citeable cards
 *   (`must_cite_one_of`) and `expect`. The same card judged with another grade,
 *   a card citeable in one file and not in the other (both turns carrying
 *   `must_cite_one_of`), or another `expect`, is a conflict: nothing is merged
 *   and every conflict is reported with file:line of both sides (exit 2).
 *
 * Lines of cases the export does not change are kept byte for byte, so a
 * second merge of the same export changes nothing (idempotent).
 */
import { DataValidationError, type DataIssue } from "../../errors.js";
import { parseCaseLine } from "../../kb/cases.js";

type RawTurn = Record<string, unknown> & {
  user?: unknown;
  relevant?: Record<string, number>;
  judged?: string[];
  suggested?: Record<string, number>;
  must_cite_one_of?: string[];
  expect?: string;
};
type RawCase = Record<string, unknown> & { id: string; turns: RawTurn[] };

interface Line {
  line: number;
  raw: RawCase;
}

/** The cases of a JSONL text, validated as case lines (every issue with file, line and field). */
function readLines(text: string, file: string, issues: DataIssue[]): { lines: string[]; cases: Line[] } {
  const lines = text.replace(/^\uFEFF/, "").split("\n");
  const cases: Line[] = [];
  const seen = new Map<string, number>();
  lines.forEach((l, i) => {
    const body = l.replace(/\r$/, "");
    if (body.trim() === "") return;
    const parsed = parseCaseLine(body, file, i + 1);
    if (parsed.case === undefined) {
      issues.push(...parsed.issues);
      return;
    }
    const first = seen.get(parsed.case.id);
    if (first !== undefined)
      issues.push({
        file,
        line: i + 1,
        field: "id",
        message: `duplicate case id ${JSON.stringify(parsed.case.id)}, first on line ${first}`,
      });
    seen.set(parsed.case.id, i + 1);
    cases.push({ line: i + 1, raw: JSON.parse(body) as RawCase });
  });
  if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  return { lines, cases };
}

/** A turn's judged grades: `relevant`, and `judged` cards without a grade as 0. */
export function gradesOf(t: RawTurn): Map<string, number> {
  const g = new Map<string, number>();
  for (const id of t.judged ?? []) g.set(id, 0);
  for (const [id, grade] of Object.entries(t.relevant ?? {})) g.set(id, grade);
  return g;
}

const where = (file: string, line: number) => `${file}:${line}`;

/** Merges turn `b` (exported) into turn `a` (the cases file); pushes conflicts to `issues`. */
function mergeTurn(
  a: RawTurn,
  b: RawTurn,
  ctx: { caseId: string; turn: number; into: string; intoLine: number; exported: string; exportedLine: number },
  issues: DataIssue[],
): RawTurn {
  const other = where(ctx.into, ctx.intoLine);
  const at = (field: string, message: string) =>
    issues.push({
      file: ctx.exported,
      line: ctx.exportedLine,
      field: `turns[${ctx.turn}].${field}`,
      message: `case ${ctx.caseId} turn ${ctx.turn}: ${message}`,
    });
  if (a.user !== b.user) {
    at(
      "user",
      `the text differs from ${other} (${JSON.stringify(a.user)}): the export was made from another version of this case`,
    );
    return a;
  }
  const ga = gradesOf(a);
  const gb = gradesOf(b);
  for (const [id, grade] of gb) {
    const prev = ga.get(id);
    if (prev !== undefined && prev !== grade)
      at(`relevant.${id}`, `card ${id} graded ${grade} here, ${prev} in ${other}`);
  }
  if (a.must_cite_one_of !== undefined && b.must_cite_one_of !== undefined) {
    const sa = new Set(a.must_cite_one_of);
    const sb = new Set(b.must_cite_one_of);
    for (const id of sb) if (!sa.has(id)) at("must_cite_one_of", `card ${id} citeable here, not in ${other}`);
    for (const id of sa) if (!sb.has(id)) at("must_cite_one_of", `card ${id} not citeable here, citeable in ${other}`);
  }
  if (a.expect !== undefined && b.expect !== undefined && a.expect !== b.expect)
    at("expect", `expect ${JSON.stringify(b.expect)} here, ${JSON.stringify(a.expect)} in ${other}`);
  const out: RawTurn = { ...a };
  const cite = a.must_cite_one_of ?? b.must_cite_one_of;
  const expect = a.expect ?? b.expect;
  if (cite !== undefined) out.must_cite_one_of = cite;
  if (expect !== undefined) out.expect = expect;
  const relevant = { ...(b.relevant ?? {}), ...(a.relevant ?? {}) };
  if (Object.keys(relevant).length > 0) out.relevant = relevant;
  const judged = [...(a.judged ?? [])];
  for (const id of b.judged ?? []) if (!judged.includes(id)) judged.push(id);
  if (judged.length > 0) out.judged = judged;
  const suggested = a.suggested ?? b.suggested;
  if (suggested !== undefined) out.suggested = suggested;
  return out;
}

export interface MergeOutcome {
  /** The cases file's new text. */
  text: string;
  /** Cases whose line changed, cases appended, cases of the export that changed nothing. */
  changed: string[];
  appended: string[];
  unchanged: number;
}

/** Deep equality of JSON values (key order ignored). */
function sameJson(x: unknown, y: unknown): boolean {
  if (x === y) return true;
  if (typeof x !== "object" || typeof y !== "object" || x === null || y === null) return false;
  if (Array.isArray(x) !== Array.isArray(y)) return false;
  const kx = Object.keys(x);
  const ky = Object.keys(y);
  return (
    kx.length === ky.length &&
    kx.every(
      (k) =>
        Object.prototype.hasOwnProperty.call(y, k) &&
        sameJson((x as Record<string, unknown>)[k], (y as Record<string, unknown>)[k]),
    )
  );
}

/**
 * Merges the export's labelled turns into the cases file (see the module
 * comment). @throws DataValidationError (exit 2) listing every bad line and
 * every conflict with file:line of both sides; nothing is merged then.
 */
export function mergeLabels(
  exportedText: string,
  exportedFile: string,
  intoText: string,
  intoFile: string,
): MergeOutcome {
  const issues: DataIssue[] = [];
  const into = readLines(intoText, intoFile, issues);
  const exported = readLines(exportedText, exportedFile, issues);
  if (issues.length > 0) throw new DataValidationError(issues);
  const byId = new Map(into.cases.map((c) => [c.raw.id, c]));
  const lines = [...into.lines];
  const changed: string[] = [];
  const appended: string[] = [];
  let unchanged = 0;
  for (const e of exported.cases) {
    const a = byId.get(e.raw.id);
    if (a === undefined) {
      lines.push(JSON.stringify(e.raw));
      appended.push(e.raw.id);
      continue;
    }
    if (a.raw.locale !== e.raw.locale) {
      issues.push({
        file: exportedFile,
        line: e.line,
        field: "locale",
        message: `case ${e.raw.id} is locale ${JSON.stringify(e.raw.locale)} here, ${JSON.stringify(a.raw.locale)} in ${where(intoFile, a.line)}: a merge never changes a case's locale (its gold cites cards of its own locale); fix the export or the cases file`,
      });
      continue;
    }
    if (a.raw.turns.length !== e.raw.turns.length) {
      issues.push({
        file: exportedFile,
        line: e.line,
        field: "turns",
        message: `case ${e.raw.id} has ${e.raw.turns.length} turns here, ${a.raw.turns.length} in ${where(intoFile, a.line)}: the export was made from another version of this case`,
      });
      continue;
    }
    const turns = a.raw.turns.map((t, i) =>
      mergeTurn(
        t,
        e.raw.turns[i]!,
        { caseId: e.raw.id, turn: i, into: intoFile, intoLine: a.line, exported: exportedFile, exportedLine: e.line },
        issues,
      ),
    );
    const merged = { ...a.raw, turns };
    if (sameJson(merged, a.raw)) unchanged++;
    else {
      lines[a.line - 1] = JSON.stringify(merged);
      changed.push(e.raw.id);
    }
  }
  if (issues.length > 0) throw new DataValidationError(issues);
  return { text: lines.length === 0 ? "" : `${lines.join("\n")}\n`, changed, appended, unchanged };
}
