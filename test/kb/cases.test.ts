import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DataValidationError, type DataIssue } from "../../src/errors.js";
import { loadKnowledgeBase } from "../../src/kb/cards.js";
import { loadCases, parseCaseLine } from "../../src/kb/cases.js";
import { datasetHash } from "../../src/kb/hash.js";
import { isToLabel } from "../../src/kb/types.js";
import { copyKb, editFile, MINI_KB } from "../helpers/fixtures.js";

const good = { id: "en-x-001", locale: "en", kind: "golden", turns: [{ user: "q", must_cite_one_of: ["card-freeze"], expect: "answer" }] };
const line = (obj: unknown) => parseCaseLine(JSON.stringify(obj), "cases.jsonl", 7);

describe("parseCaseLine", () => {
  it("parses a valid case and keeps its line", () => {
    const { case: c, issues } = line(good);
    expect(issues).toEqual([]);
    expect(c).toMatchObject({ id: "en-x-001", line: 7, turns: [{ must_cite_one_of: ["card-freeze"] }] });
  });

  it.each<[string, unknown, string, string]>([
    ["unknown case field", { ...good, notes: "x" }, "notes", "unknown field"],
    ["unknown turn field", { ...good, turns: [{ ...good.turns[0], gold: [] }] }, "turns[0].gold", "unknown field"],
    ["bad kind", { ...good, kind: "gold" }, "kind", '"golden" or "adversarial"'],
    ["bad locale", { ...good, locale: "es_419" }, "locale", 'expected `locale` to be a canonical BCP-47 language tag (e.g. en, de, fr-CA, ja, zh-Hans), got "es_419"'],
    ["non-canonical locale", { ...good, locale: "pt-br" }, "locale", 'did you mean "pt-BR"?'],
    ["bad id", { ...good, id: 3 }, "id", "expected a case id matching ^[a-z0-9][a-z0-9-]*$, got 3"],
    ["missing kind", (({ kind: _k, ...rest }) => rest)(good), "kind", 'missing required field; expected "golden" or "adversarial"'],
    ["bad expect", { ...good, turns: [{ ...good.turns[0], expect: "maybe" }] }, "turns[0].expect", '"answer" or "refuse"'],
    ["gold not an array", { ...good, turns: [{ ...good.turns[0], must_cite_one_of: "card-freeze" }] }, "turns[0].must_cite_one_of", "array of card ids"],
    ["duplicate gold id", { ...good, turns: [{ ...good.turns[0], must_cite_one_of: ["a", "a"] }] }, "turns[0].must_cite_one_of[1]", "duplicate"],
    ["empty question", { ...good, turns: [{ ...good.turns[0], user: " " }] }, "turns[0].user", "non-empty string"],
    ["no turns", { ...good, turns: [] }, "turns", "an array of turns (one at least)"],
    ["a gold id not a string", { ...good, turns: [{ ...good.turns[0], must_cite_one_of: [7] }] }, "turns[0].must_cite_one_of[0]", "expected a card id, got 7"],
    ["category on a golden case", { ...good, category: "out_of_scope" }, "category", "only allowed on adversarial"],
    ["unknown category", { ...good, kind: "adversarial", category: "jailbreak" }, "category", '"prompt_injection"'],
    ["blank standalone", { ...good, turns: [{ ...good.turns[0], standalone: "\u00a0 " }] }, "turns[0].standalone", "non-empty standalone question"],
    ["empty standalone", { ...good, turns: [{ ...good.turns[0], standalone: "" }] }, "turns[0].standalone", 'got ""'],
    ["standalone not a string", { ...good, turns: [{ ...good.turns[0], standalone: 3 }] }, "turns[0].standalone", "non-empty standalone question"],
    ["a grade above 3", { ...good, turns: [{ ...good.turns[0], relevant: { "card-freeze": 4 } }] }, "turns[0].relevant.card-freeze", "a grade: an integer 0 to 3"],
    ["a fractional grade", { ...good, turns: [{ ...good.turns[0], relevant: { "card-freeze": 1.5 } }] }, "turns[0].relevant.card-freeze", "a grade: an integer 0 to 3"],
    ["relevant as a list", { ...good, turns: [{ ...good.turns[0], relevant: ["card-freeze"] }] }, "turns[0].relevant", "an object mapping card ids to a grade"],
    ["a duplicate judged id", { ...good, turns: [{ ...good.turns[0], judged: ["card-freeze", "card-freeze"] }] }, "turns[0].judged[1]", "duplicate card id"],
    ["a negative suggested grade", { ...good, turns: [{ ...good.turns[0], suggested: { "card-freeze": -1 } }] }, "turns[0].suggested.card-freeze", "a suggested grade: an integer 0 to 3"],
    ["context not a list", { ...good, turns: [{ ...good.turns[0], context: "Open the app." }] }, "turns[0].context", 'an array of {"role": "assistant", "content": "…"} messages'],
    ["a context message of another role", { ...good, turns: [{ ...good.turns[0], context: [{ role: "user", content: "hi" }] }] }, "turns[0].context[0].role", '"assistant"'],
    ["a blank context message", { ...good, turns: [{ ...good.turns[0], context: [{ role: "assistant", content: "\u200b" }] }] }, "turns[0].context[0].content", "non-empty message text"],
    ["an unknown field of a context message", { ...good, turns: [{ ...good.turns[0], context: [{ role: "assistant", content: "a", name: "bot" }] }] }, "turns[0].context[0].name", "unknown field"],
  ])("rejects %s, naming the field", (_name, obj, field, message) => {
    const { case: c, issues } = line(obj);
    expect(c).toBeUndefined();
    expect(issues).toEqual([{ file: "cases.jsonl", line: 7, field, message: expect.stringContaining(message) }]);
  });

  it("accepts a case of 200 turns (any length), and names a bad field deep in it by turn index", () => {
    const turns = Array.from({ length: 200 }, (_, i) => ({ ...good.turns[0], user: `question ${i}` }));
    const { case: c, issues } = line({ ...good, turns });
    expect(issues).toEqual([]);
    expect(c?.turns).toHaveLength(200);
    expect(c?.turns[199]?.user).toBe("question 199");
    const bad = turns.map((t, i) => (i === 157 ? { ...t, expect: "maybe" } : t));
    expect(line({ ...good, turns: bad }).issues).toEqual([
      { file: "cases.jsonl", line: 7, field: "turns[157].expect", message: expect.stringContaining('"answer" or "refuse"') },
    ]);
  });

  it("keeps a turn's optional standalone question", () => {
    const { case: c, issues } = line({ ...good, turns: [good.turns[0], { ...good.turns[0], user: "and that?", standalone: "How do I freeze my card?" }] });
    expect(issues).toEqual([]);
    expect(c?.turns[1]?.standalone).toBe("How do I freeze my card?");
    expect(c?.turns[0]?.standalone).toBeUndefined();
  });

  it("keeps graded relevance, judged ids and suggested grades; a turn with only `relevant` is labelled (nDCG only), not to label", () => {
    const graded = { user: "how long?", relevant: { "card-freeze": 2, "refund-timelines": 0 }, judged: ["card-freeze", "refund-timelines"], suggested: { "card-freeze": 3 } };
    const { case: c, issues } = line({ ...good, turns: [good.turns[0], graded] });
    expect(issues).toEqual([]);
    expect(c?.turns[1]).toEqual(graded);
    expect(isToLabel(c!.turns[1]!)).toBe(false);
    expect(isToLabel({ must_cite_one_of: undefined, relevant: undefined })).toBe(true);
  });

  it("keeps a turn's assistant context (shown to a labeller, never sent to a graph)", () => {
    const context = [{ role: "assistant", content: "did the light turn green?" }];
    const { case: c, issues } = line({ ...good, turns: [good.turns[0], { user: "no it stayed red", context }] });
    expect(issues).toEqual([]);
    expect(c?.turns[1]?.context).toEqual(context);
  });

  it("rejects malformed JSON (a truncated line) with the line number and the column where it ends", () => {
    const line = '{"id": "en-x", "locale": "en", "turns": [';
    const { issues } = parseCaseLine(line, "cases.jsonl", 12);
    // 41 characters: the input ends after column 41, so the error is at column 42.
    expect(issues).toEqual([{ file: "cases.jsonl", line: 12, column: 42, message: "malformed JSON (expected a JSON value, got the end of the input); expected one JSON object per line" }]);
  });
});

describe("loadCases", () => {
  let cleanup: (() => Promise<void>) | undefined;
  afterEach(async () => cleanup?.());

  async function issuesAfter(edit: (text: string) => string): Promise<DataIssue[]> {
    const tmp = await copyKb();
    cleanup = tmp.cleanup;
    const file = path.join(tmp.dir, "eval", "cases.jsonl");
    await editFile(file, edit);
    const kb = await loadKnowledgeBase(tmp.dir);
    const e = await loadCases(file, kb).then(() => null, (x: unknown) => x);
    expect(e).toBeInstanceOf(DataValidationError);
    return (e as DataValidationError).issues.map((i) => ({ ...i, file: path.basename(i.file) }));
  }

  it("names the field of a graded, judged or suggested id that is no card of the case's locale", async () => {
    const issues = await issuesAfter((text) => {
      const lines = text.split("\n");
      const first = JSON.parse(lines[0]!) as { turns: Array<Record<string, unknown>> };
      first.turns[0] = { ...first.turns[0], relevant: { "no-such-card": 1 }, judged: ["es-congelar-tarjeta"], suggested: { "card-frezee": 2 } };
      lines[0] = JSON.stringify(first);
      return lines.join("\n");
    });
    expect(issues).toEqual([
      { file: "cases.jsonl", line: 1, field: "turns[0].relevant.no-such-card", message: expect.stringContaining('graded id "no-such-card" names no card in the KB') },
      { file: "cases.jsonl", line: 1, field: "turns[0].judged[0]", message: expect.stringContaining('judged card "es-congelar-tarjeta" is in locale es-419') },
      { file: "cases.jsonl", line: 1, field: "turns[0].suggested.card-frezee", message: expect.stringContaining('did you mean "card-freeze"?') },
    ]);
  });

  it("loads the mini fixture, skipping blank lines, with 1-based line numbers", async () => {
    const kb = await loadKnowledgeBase(MINI_KB);
    const cases = await loadCases(path.join(MINI_KB, "eval", "cases.jsonl"), kb);
    expect(cases.map((c) => [c.id, c.line])).toEqual([["en-freeze-001", 1], ["en-nomatch-001", 2], ["en-adv-001", 4], ["es-congelar-001", 5], ["pt-pix-001", 6]]);
  });

  it("rejects a misspelt gold id, suggesting the right one", async () => {
    const issues = await issuesAfter((t) => t.replace('["refund-timelines", "card-freeze"]', '["refund-timeline", "card-freeze"]'));
    expect(issues).toEqual([{ file: "cases.jsonl", line: 1, field: "turns[1].must_cite_one_of[0]", message: expect.stringMatching(/names no card.*did you mean "refund-timelines"/) }]);
  });

  it("rejects a case whose gold cites a card of another locale", async () => {
    const issues = await issuesAfter((t) => t.replace('"id": "es-congelar-001", "locale": "es-419"', '"id": "es-congelar-001", "locale": "pt-BR"'));
    expect(issues).toEqual([{ file: "cases.jsonl", line: 5, field: "turns[0].must_cite_one_of[0]", message: expect.stringContaining("is in locale es-419 but the case is pt-BR") }]);
  });

  it("rejects a well-formed locale tag that is not one of the KB's locales (cross-field rule)", async () => {
    const issues = await issuesAfter((t) => t.replace('"id": "en-nomatch-001", "locale": "en"', '"id": "en-nomatch-001", "locale": "fr"'));
    expect(issues).toEqual([{ file: "cases.jsonl", line: 2, field: "locale", message: `expected one of the KB's locales (en, es-419, pt-BR), got "fr"` }]);
  });

  it("rejects duplicate case ids, naming the first line", async () => {
    const issues = await issuesAfter((t) => t.replace('"id": "pt-pix-001"', '"id": "en-freeze-001"'));
    expect(issues).toEqual([{ file: "cases.jsonl", line: 6, field: "id", message: 'duplicate case id "en-freeze-001", first used on line 1' }]);
  });

  it("rejects a truncated last line and still reports the other lines' issues", async () => {
    const issues = await issuesAfter((t) => {
      const lines = t.trimEnd().split("\n");
      lines[lines.length - 1] = lines[lines.length - 1]!.slice(0, 40);
      return lines.join("\n").replace('"kind": "golden"', '"kind": "goldn"');
    });
    expect(issues.map((i) => [i.line, i.field ?? null])).toEqual([[1, "kind"], [6, null]]);
  });

  it("rejects a missing file", async () => {
    const kb = await loadKnowledgeBase(MINI_KB);
    const e = (await loadCases("/nonexistent/cases.jsonl", kb).catch((x: unknown) => x)) as DataValidationError;
    expect(e.issues[0]?.message).toContain("cannot read the cases file (ENOENT)");
  });
});

describe("datasetHash", () => {
  it("ignores blank lines and line numbers but sees content", async () => {
    const kb = await loadKnowledgeBase(MINI_KB);
    const cases = await loadCases(path.join(MINI_KB, "eval", "cases.jsonl"), kb);
    const moved = cases.map((c) => ({ ...c, line: c.line + 10 }));
    expect(datasetHash(moved)).toBe(datasetHash(cases));
    const edited = cases.map((c, i) => (i === 0 ? { ...c, turns: [{ ...c.turns[0]!, expect: "refuse" as const }] } : c));
    expect(datasetHash(edited)).not.toBe(datasetHash(cases));
  });

  it("hashes graded judgments (they change nDCG) but not a judge's suggestions", async () => {
    const kb = await loadKnowledgeBase(MINI_KB);
    const cases = await loadCases(path.join(MINI_KB, "eval", "cases.jsonl"), kb);
    const withTurn = (extra: object) => cases.map((c, i) => (i === 0 ? { ...c, turns: c.turns.map((t, j) => (j === 0 ? { ...t, ...extra } : t)) } : c));
    expect(datasetHash(withTurn({ relevant: { "card-freeze": 2 } }))).not.toBe(datasetHash(cases));
    expect(datasetHash(withTurn({ relevant: { "card-freeze": 2 } }))).not.toBe(datasetHash(withTurn({ relevant: { "card-freeze": 1 } })));
    expect(datasetHash(withTurn({ judged: ["card-freeze"] }))).not.toBe(datasetHash(cases));
    expect(datasetHash(withTurn({ suggested: { "card-freeze": 2 } }))).toBe(datasetHash(cases));
  });

  it("leaves a turn's assistant context out: a dataset hashes the same with it and without it", async () => {
    const kb = await loadKnowledgeBase(MINI_KB);
    const cases = await loadCases(path.join(MINI_KB, "eval", "cases.jsonl"), kb);
    const withContext = cases.map((c) => ({ ...c, turns: c.turns.map((t) => ({ ...t, context: [{ role: "assistant" as const, content: "Open the app." }] })) }));
    expect(datasetHash(withContext)).toBe(datasetHash(cases));
  });

  it("sees a standalone question, and a dataset without any hashes as before standalone existed", async () => {
    const kb = await loadKnowledgeBase(MINI_KB);
    const cases = await loadCases(path.join(MINI_KB, "eval", "cases.jsonl"), kb);
    const withOracle = cases.map((c, i) => (i === 0 ? { ...c, turns: [{ ...c.turns[0]!, standalone: "a standalone question" }] } : c));
    expect(datasetHash(withOracle)).not.toBe(datasetHash(cases));
    // The pre-standalone formula, written out: a KB without `standalone` keeps its hash (and its baselines).
    const { createHash } = await import("node:crypto");
    const h = createHash("sha256");
    for (const c of cases) h.update(JSON.stringify([c.id, c.locale, c.kind, c.category ?? null, c.turns.map((t) => [t.user, t.must_cite_one_of, t.expect])])).update("\u0000");
    expect(datasetHash(cases)).toBe(h.digest("hex"));
  });
});
