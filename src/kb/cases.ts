/**
 * Parse and validate eval cases (DESIGN.md §3.2): `kb/eval/cases.jsonl`, one
 * JSON object a line. Every issue names file, line and field and says what
 * was expected. Blank lines are allowed and ignored.
 */
import { readTextFile } from "./text.js";
import { DataValidationError, type DataIssue } from "../errors.js";
import {
  ADVERSARIAL_CATEGORIES,
  CASE_KINDS,
  EXPECTS,
  LOCALES,
  isLocale,
  type AdversarialCategory,
  type CaseKind,
  type EvalCase,
  type EvalTurn,
  type Expect,
  type KnowledgeBase,
} from "./types.js";

export const CASE_ID_PATTERN = /^[a-z0-9][a-z0-9-]*$/;
const CASE_FIELDS = ["id", "locale", "kind", "category", "turns"] as const;
const TURN_FIELDS = ["user", "must_cite_one_of", "expect"] as const;
export const MAX_TURNS = 4;

const show = (v: unknown) => (v === undefined ? "nothing" : JSON.stringify(v));
const oneOf = (xs: readonly string[]) => xs.map((x) => `"${x}"`).join(" or ");

/** Parse one JSONL line into a case (structure only; card references are checked by `validateCases`). */
export function parseCaseLine(text: string, file: string, line: number): { case?: EvalCase; issues: DataIssue[] } {
  const issues: DataIssue[] = [];
  const issue = (field: string | undefined, message: string) => issues.push({ file, line, field, message });
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    issue(undefined, `malformed JSON (${(e as Error).message}); expected one JSON object per line`);
    return { issues };
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    issue(undefined, `expected a JSON object, got ${show(raw)}`);
    return { issues };
  }
  const obj = raw as Record<string, unknown>;
  for (const key of Object.keys(obj))
    if (!(CASE_FIELDS as readonly string[]).includes(key)) issue(key, `unknown field; expected only ${CASE_FIELDS.join(", ")}`);

  if (typeof obj.id !== "string" || !CASE_ID_PATTERN.test(obj.id)) issue("id", `expected \`id\` to match ${CASE_ID_PATTERN.source}, got ${show(obj.id)}`);
  if (!isLocale(obj.locale)) issue("locale", `expected \`locale\` to be ${oneOf(LOCALES)}, got ${show(obj.locale)}`);
  if (!(CASE_KINDS as readonly unknown[]).includes(obj.kind)) issue("kind", `expected \`kind\` to be ${oneOf(CASE_KINDS)}, got ${show(obj.kind)}`);
  if (obj.category !== undefined) {
    if (obj.kind !== "adversarial") issue("category", `\`category\` is only allowed on adversarial cases, got it on a ${show(obj.kind)} case`);
    else if (!(ADVERSARIAL_CATEGORIES as readonly unknown[]).includes(obj.category))
      issue("category", `expected \`category\` to be ${oneOf(ADVERSARIAL_CATEGORIES)}, got ${show(obj.category)}`);
  }
  const turns: EvalTurn[] = [];
  if (!Array.isArray(obj.turns) || obj.turns.length === 0 || obj.turns.length > MAX_TURNS) {
    issue("turns", `expected \`turns\` to be an array of 1 to ${MAX_TURNS} turns, got ${Array.isArray(obj.turns) ? `${obj.turns.length} turns` : show(obj.turns)}`);
  } else {
    obj.turns.forEach((t: unknown, i: number) => {
      const at = `turns[${i}]`;
      if (typeof t !== "object" || t === null || Array.isArray(t)) {
        issue(at, `expected a turn object {user, must_cite_one_of, expect}, got ${show(t)}`);
        return;
      }
      const turn = t as Record<string, unknown>;
      for (const key of Object.keys(turn))
        if (!(TURN_FIELDS as readonly string[]).includes(key)) issue(`${at}.${key}`, `unknown field; expected only ${TURN_FIELDS.join(", ")}`);
      if (typeof turn.user !== "string" || turn.user.trim() === "") issue(`${at}.user`, `expected a non-empty string, got ${show(turn.user)}`);
      const gold = turn.must_cite_one_of;
      if (!Array.isArray(gold)) issue(`${at}.must_cite_one_of`, `expected an array of card ids ([] for a no-match turn), got ${show(gold)}`);
      else {
        gold.forEach((g, j) => {
          if (typeof g !== "string" || g === "") issue(`${at}.must_cite_one_of[${j}]`, `expected a card id, got ${show(g)}`);
        });
        const seen = new Set<unknown>();
        gold.forEach((g, j) => {
          if (seen.has(g)) issue(`${at}.must_cite_one_of[${j}]`, `duplicate gold id ${show(g)}`);
          seen.add(g);
        });
      }
      if (!(EXPECTS as readonly unknown[]).includes(turn.expect)) issue(`${at}.expect`, `expected \`expect\` to be ${oneOf(EXPECTS)}, got ${show(turn.expect)}`);
      turns.push({ user: turn.user as string, must_cite_one_of: (gold as string[]) ?? [], expect: turn.expect as Expect });
    });
  }
  if (issues.length > 0) return { issues };
  const evalCase: EvalCase = { id: obj.id as string, locale: obj.locale as EvalCase["locale"], kind: obj.kind as CaseKind, turns, line };
  if (obj.category !== undefined) evalCase.category = obj.category as AdversarialCategory;
  return { case: evalCase, issues };
}

/** Levenshtein distance, for "did you mean" suggestions on misspelt gold ids. */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = tmp;
    }
  }
  return row[b.length]!;
}

function suggest(id: string, kb: KnowledgeBase): string {
  let best: string | undefined;
  let bestD = Infinity;
  for (const known of kb.byId.keys()) {
    const d = distance(id, known);
    if (d < bestD) [best, bestD] = [known, d];
  }
  return best !== undefined && bestD <= Math.max(2, Math.floor(id.length / 4)) ? `; did you mean "${best}"?` : "";
}

/** Cross-checks against the KB and across cases: unique ids, gold ids that exist, gold in the case's locale. */
export function validateCases(cases: readonly EvalCase[], kb: KnowledgeBase, file: string): DataIssue[] {
  const issues: DataIssue[] = [];
  const firstLine = new Map<string, number>();
  for (const c of cases) {
    const prior = firstLine.get(c.id);
    if (prior !== undefined) issues.push({ file, line: c.line, field: "id", message: `duplicate case id "${c.id}", first used on line ${prior}` });
    else firstLine.set(c.id, c.line);
    c.turns.forEach((t, i) =>
      t.must_cite_one_of.forEach((g, j) => {
        const field = `turns[${i}].must_cite_one_of[${j}]`;
        const card = kb.byId.get(g);
        if (!card) issues.push({ file, line: c.line, field, message: `gold id "${g}" names no card in the KB${suggest(g, kb)}` });
        else if (card.locale !== c.locale)
          issues.push({ file, line: c.line, field, message: `gold card "${g}" is in locale ${card.locale} but the case is ${c.locale}; cases cite cards of their own locale` });
      }),
    );
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
