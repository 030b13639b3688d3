/**
 * The common shape of a `cases.jsonl` line checked by hand, before
 * CaseLineSchema (./schemas.ts): a large cases file (100,000 cases of a
 * recorded run, docs/recorded-traces.md "Scale") spent most of its loading in
 * zod. `commonCaseLine` accepts only lines that the schema accepts too, and
 * returns what the schema's parse returns for them (the same keys in the same
 * order, arrays copied); for anything else — an optional field it does not
 * know (`origin`, `relevant`, `judged`, `context`…), a synthetic case, any
 * doubt — it returns undefined and the caller parses with the schema, which
 * names the problem. test/kb/case-line-fast.test.ts holds it to the schema on
 * every cases fixture and on planted bad lines.
 */
import {
  ADVERSARIAL_CATEGORIES,
  canonicalLocale, CASE_ID_PATTERN, CASE_KINDS, EXPECTS, isBlankText, type CaseLine, type EvalTurn } from "./schemas.js";

const CASE_KEYS = new Set(["id", "locale", "kind", "category", "turns"]);
const TURN_KEYS = new Set(["user", "must_cite_one_of", "expect", "standalone"]);

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype;

function onlyKeys(v: Record<string, unknown>, allowed: ReadonlySet<string>): boolean {
  for (const k in v) if (!allowed.has(k)) return false;
  return true;
}

function commonTurn(v: unknown): EvalTurn | undefined {
  if (!isPlainObject(v) || !onlyKeys(v, TURN_KEYS)) return undefined;
  const { user, must_cite_one_of: gold, expect, standalone } = v;
  if (typeof user !== "string" || isBlankText(user)) return undefined;
  if (standalone !== undefined && (typeof standalone !== "string" || isBlankText(standalone))) return undefined;
  if ((gold === undefined) !== (expect === undefined)) return undefined;
  // The schema's key order: user, must_cite_one_of, expect, standalone.
  const turn: EvalTurn = { user };
  if (gold !== undefined) {
    if (!Array.isArray(gold) || !(EXPECTS as readonly unknown[]).includes(expect)) return undefined;
    const ids: string[] = [];
    for (const g of gold as unknown[]) {
      if (typeof g !== "string" || g.length === 0 || ids.includes(g)) return undefined;
      ids.push(g);
    }
    turn.must_cite_one_of = ids;
    turn.expect = expect as EvalTurn["expect"];
  }
  if (standalone !== undefined) turn.standalone = standalone;
  return turn;
}

/** The parse of a `cases.jsonl` line of the common shape (what CaseLineSchema returns for it), or undefined: then parse it with the schema. */
export function commonCaseLine(v: unknown): CaseLine | undefined {
  if (!isPlainObject(v) || !onlyKeys(v, CASE_KEYS)) return undefined;
  const { id, locale, kind, category, turns } = v;
  if (typeof id !== "string" || !CASE_ID_PATTERN.test(id)) return undefined;
  if (typeof locale !== "string" || canonicalLocale(locale) !== locale) return undefined;
  // A synthetic case needs its `origin`: the schema says so.
  if (kind === "synthetic" || !(CASE_KINDS as readonly unknown[]).includes(kind)) return undefined;
  if (category !== undefined && (kind !== "adversarial" || !(ADVERSARIAL_CATEGORIES as readonly unknown[]).includes(category)))
    return undefined;
  if (!Array.isArray(turns) || turns.length === 0) return undefined;
  const parsed: EvalTurn[] = [];
  for (const t of turns as unknown[]) {
    const turn = commonTurn(t);
    if (turn === undefined) return undefined;
    parsed.push(turn);
  }
  // The schema's key order: id, locale, kind, category, turns.
  const k = kind as CaseLine["kind"];
  return category !== undefined
    ? { id, locale, kind: k, category: category as CaseLine["category"], turns: parsed }
    : { id, locale, kind: k, turns: parsed };
}
