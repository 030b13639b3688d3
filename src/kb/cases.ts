/**
 * Parse and validate eval cases (docs/architecture.md §2.1): `kb/eval/cases.jsonl`, one
 * JSON object a line. Every issue names file, line and field and says what
 * was expected. Blank lines are allowed and ignored.
 */
import { closest } from "../edit-distance.js";
import { readTextFile } from "./text.js";
import { DataValidationError, type DataIssue } from "../errors.js";
import { parseWithSchema } from "./schema-issues.js";
import { CASE_ID_PATTERN, CaseLineSchema } from "./schemas.js";
import type { EvalCase, KnowledgeBase, Locale } from "./types.js";
import { parseJsonOrIssue } from "./json.js";
import { commonCaseLine } from "./case-line-fast.js";

export { CASE_ID_PATTERN };

/**
 * Parse one JSONL line into a case: JSON, then CaseLineSchema (src/kb/schemas.ts).
 * Card references and the locale are cross-checked by `validateCases`.
 */
export function parseCaseLine(text: string, file: string, line: number): { case?: EvalCase; issues: DataIssue[] } {
  const json = parseJsonOrIssue(text, { file, line, expected: "one JSON object per line" }); // line and column of a syntax error (./json.ts)
  if ("issue" in json) return { issues: [json.issue] };
  const raw = json.value;
  // The common shape checked by hand (./case-line-fast.ts), anything else by the schema, which names the problem.
  const common = commonCaseLine(raw);
  const parsed = common !== undefined ? { data: common } : parseWithSchema(CaseLineSchema, raw, { file, line });
  if (parsed.data === undefined) return { issues: parsed.issues };
  const { category, ...rest } = parsed.data;
  // The locale is a well-formed tag here; `validateCases` checks it is one of the KB's.
  const evalCase: EvalCase = { ...rest, locale: rest.locale as Locale, line };
  if (category !== undefined) evalCase.category = category;
  return { case: evalCase, issues: [] };
}

function suggest(id: string, kb: KnowledgeBase): string {
  const best = closest(id, kb.byId.keys(), Math.max(2, Math.floor(id.length / 4)));
  return best !== undefined ? `; did you mean "${best}"?` : "";
}

/** Cross-checks against the KB and across cases: the case's locale is one of the KB's, unique ids, gold ids that exist, gold in the case's locale. */
export function validateCases(cases: readonly EvalCase[], kb: KnowledgeBase, file: string): DataIssue[] {
  const issues: DataIssue[] = [];
  const firstLine = new Map<string, number>();
  const kbLocales = [...new Set(kb.cards.map((card) => card.locale as string))].sort();
  for (const c of cases) {
    if (kbLocales.length > 0 && !kbLocales.includes(c.locale))
      issues.push({ file, line: c.line, field: "locale", message: `expected one of the KB's locales (${kbLocales.join(", ")}), got ${JSON.stringify(c.locale)}` });
    const prior = firstLine.get(c.id);
    if (prior !== undefined) issues.push({ file, line: c.line, field: "id", message: `duplicate case id "${c.id}", first used on line ${prior}` });
    else firstLine.set(c.id, c.line);
    c.turns.forEach((t, i) => {
      const named: Array<[string, string, string]> = [
        ...(t.must_cite_one_of ?? []).map((g, j): [string, string, string] => [g, `turns[${i}].must_cite_one_of[${j}]`, "gold"]),
        ...Object.keys(t.relevant ?? {}).map((g): [string, string, string] => [g, `turns[${i}].relevant.${g}`, "graded"]),
        ...(t.judged ?? []).map((g, j): [string, string, string] => [g, `turns[${i}].judged[${j}]`, "judged"]),
        ...Object.keys(t.suggested ?? {}).map((g): [string, string, string] => [g, `turns[${i}].suggested.${g}`, "suggested"]),
      ];
      for (const [g, field, what] of named) {
        const card = kb.byId.get(g);
        if (!card) issues.push({ file, line: c.line, field, message: `${what} id "${g}" names no card in the KB${suggest(g, kb)}` });
        else if (card.locale !== c.locale)
          issues.push({ file, line: c.line, field, message: `${what} card "${g}" is in locale ${card.locale} but the case is ${c.locale}; cases cite cards of their own locale` });
      }
    });
  }
  return issues;
}

/** Read, parse and validate a cases file against a KB. Throws one DataValidationError listing every issue. */
export async function loadCases(file: string, kb: KnowledgeBase): Promise<EvalCase[]> {
  // One strict loader for every input file (docs/reliability.md): UTF-8 (BOM stripped), regular files only.
  const read = await readTextFile(file);
  if ("issue" in read) throw new DataValidationError([{ ...read.issue, message: read.issue.message.replace(/^cannot read the file/, "cannot read the cases file") }]);
  const text = read.text;
  const issues: DataIssue[] = [];
  const cases: EvalCase[] = [];
  text.split(/\r?\n/).forEach((lineText, i) => {
    if (lineText.trim() === "") return;
    const { case: c, issues: found } = parseCaseLine(lineText, file, i + 1);
    issues.push(...found);
    if (c) cases.push(c);
  });
  issues.push(...validateCases(cases, kb, file));
  if (cases.length === 0 && issues.length === 0) issues.push({ file, message: "no cases found; expected one JSON object per line" });
  if (issues.length > 0) throw new DataValidationError(issues);
  return cases;
}

/** Where each case is: its 1-based line in the cases file and its number of turns (GitHub annotations, quarantine checks). */
export type CaseIndex = ReadonlyMap<string, { line: number; turns: number }>;

/** The index of already loaded cases (each keeps its line). */
export function caseIndexOf(cases: readonly EvalCase[]): CaseIndex {
  return new Map(cases.map((c) => [c.id, { line: c.line, turns: c.turns.length }]));
}

/**
 * The index of a cases file read on its own, without a KB (`retrace merge`
 * has no KB loaded): each line parsed with CaseLineSchema, gold ids not
 * cross-checked. A malformed line is an error naming file and line (exit 2).
 */
export async function readCaseIndex(file: string): Promise<CaseIndex> {
  const read = await readTextFile(file);
  if ("issue" in read) throw new DataValidationError([{ ...read.issue, message: read.issue.message.replace(/^cannot read the file/, "cannot read the cases file") }]);
  const issues: DataIssue[] = [];
  const index = new Map<string, { line: number; turns: number }>();
  read.text.split(/\r?\n/).forEach((lineText, i) => {
    if (lineText.trim() === "") return;
    const { case: c, issues: found } = parseCaseLine(lineText, file, i + 1);
    issues.push(...found);
    if (c !== undefined && !index.has(c.id)) index.set(c.id, { line: c.line, turns: c.turns.length });
  });
  if (issues.length > 0) throw new DataValidationError(issues);
  return index;
}
