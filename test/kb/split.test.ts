/**
 * The committed tune/holdout split of the shipped eval cases
 * (kb/eval/split.json, docs/holdout.md) and the loader's checks.
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import { DataValidationError, type DataIssue } from "../../src/errors.js";
import { loadKnowledgeBase } from "../../src/kb/cards.js";
import { loadCases } from "../../src/kb/cases.js";
import { defaultSplitFile, loadSplit, parseSplit } from "../../src/kb/split.js";
import type { EvalCase } from "../../src/kb/types.js";
import { MINI_KB, SHIPPED_KB } from "../helpers/fixtures.js";
import { readFile } from "node:fs/promises";

async function shipped() {
  const kb = await loadKnowledgeBase(SHIPPED_KB);
  const cases = await loadCases(path.join(SHIPPED_KB, "eval", "cases.jsonl"), kb);
  const file = defaultSplitFile(SHIPPED_KB);
  const raw = JSON.parse(await readFile(file, "utf8")) as { tune: string[]; holdout: string[]; note: string };
  return { cases, file, raw, split: await loadSplit(file, cases) };
}

describe("kb/eval/split.json", () => {
  it("puts every case of kb/eval/cases.jsonl in exactly one part", async () => {
    const { cases, raw, split } = await shipped();
    expect(split).not.toBeNull();
    const all = [...raw.tune, ...raw.holdout];
    expect(all.length).toBe(cases.length); // no id twice
    expect(new Set(all)).toEqual(new Set(cases.map((c) => c.id)));
    expect(raw.tune.filter((id) => raw.holdout.includes(id))).toEqual([]);
    for (const c of cases) expect(["tune", "holdout"]).toContain(split!.partOf.get(c.id));
    expect(raw.note).toMatch(/bench\/make-split\.ts/);
  });

  it("has tune and held-out cases in every locale and kind, and every case after the first 85 held out", async () => {
    const { cases, split } = await shipped();
    const original = cases.slice(0, 85);
    for (const locale of ["en", "es-419", "pt-BR"])
      for (const kind of ["golden", "adversarial"]) {
        const parts = new Set(original.filter((c) => c.locale === locale && c.kind === kind).map((c) => split!.partOf.get(c.id)));
        expect(parts, `${locale}/${kind}`).toEqual(new Set(["tune", "holdout"]));
      }
    for (const c of cases.slice(85)) expect(split!.partOf.get(c.id), c.id).toBe("holdout");
    // At least 60 fresh held-out turns per locale, 15 of them adversarial refusals.
    for (const locale of ["en", "es-419", "pt-BR"]) {
      const fresh = cases.slice(85).filter((c) => c.locale === locale);
      expect(fresh.flatMap((c) => c.turns).length, locale).toBeGreaterThanOrEqual(60);
      expect(fresh.filter((c) => c.kind === "adversarial").flatMap((c) => c.turns).filter((t) => t.expect === "refuse").length, locale).toBeGreaterThanOrEqual(15);
    }
  });

  it("is absent from the mini KB (loadSplit returns null)", async () => {
    const kb = await loadKnowledgeBase(MINI_KB);
    const cases = await loadCases(path.join(MINI_KB, "eval", "cases.jsonl"), kb);
    expect(await loadSplit(defaultSplitFile(MINI_KB), cases)).toBeNull();
  });
});

describe("parseSplit", () => {
  const cases = [
    { id: "a", locale: "en", kind: "golden", turns: [], line: 1 },
    { id: "b", locale: "en", kind: "golden", turns: [], line: 2 },
  ] as unknown as Parameters<typeof parseSplit>[2];
  const issues = (text: string) => {
    try {
      parseSplit(text, "split.json", cases);
    } catch (e) {
      return (e as DataValidationError).issues.map((i) => `${i.field ?? ""}: ${i.message}`);
    }
    return [];
  };

  it("accepts a split covering every case once", () => {
    expect(parseSplit('{"version": 1, "note": "n", "tune": ["a"], "holdout": ["b"]}', "split.json", cases).partOf).toEqual(new Map([["a", "tune"], ["b", "holdout"]]));
  });

  it("names an unknown id, a case in both parts and a case in none", () => {
    expect(issues('{"version": 1, "tune": ["a", "zz"], "holdout": ["b"]}')).toEqual(['tune[1]: unknown case id "zz"']);
    expect(issues('{"version": 1, "tune": ["a", "b"], "holdout": ["b"]}')).toEqual(['holdout[0]: case "b" is already in part "tune"']);
    expect(issues('{"version": 1, "tune": ["a"], "holdout": []}')).toEqual([': case "b" (line 2 of the cases file) is in no part; add it to "tune" or "holdout"']);
  });
});


const tinyCases = ["a-1", "b-2", "c-3"].map((id, i) => ({ id, locale: "en", kind: "golden", turns: [], line: i + 1 }) as EvalCase);

function issuesOf(obj: unknown): DataIssue[] {
  try {
    parseSplit(JSON.stringify(obj), "split.json", tinyCases);
  } catch (e) {
    expect(e).toBeInstanceOf(DataValidationError);
    return (e as DataValidationError).issues;
  }
  throw new Error("expected parseSplit to throw");
}

describe("parseSplit (schema-checked fields)", () => {
  it("assigns each case its part", () => {
    const s = parseSplit(JSON.stringify({ version: 1, note: "n", tune: ["a-1", "c-3"], holdout: ["b-2"] }), "split.json", tinyCases);
    expect([...s.partOf.entries()].sort()).toEqual([["a-1", "tune"], ["b-2", "holdout"], ["c-3", "tune"]]);
  });

  it("rejects the shape through the schema, naming the field", () => {
    expect(issuesOf({ version: 2, tune: "a-1", holdout: [], extra: 1 })).toEqual([
      { file: "split.json", field: "version", message: "expected 1, got 2" },
      { file: "split.json", field: "tune", message: 'expected an array of case ids, got "a-1"' },
      { file: "split.json", field: "extra", message: "unknown field; expected only `version`, `note`, `tune`, `holdout`" },
    ]);
  });

  it("keeps the cross-field rules: known ids, one part each, every case covered", () => {
    expect(issuesOf({ version: 1, tune: ["a-1", "zz"], holdout: ["a-1"] })).toEqual([
      { file: "split.json", field: "tune[1]", message: 'unknown case id "zz"' },
      { file: "split.json", field: "holdout[0]", message: 'case "a-1" is already in part "tune"' },
    ]);
    expect(issuesOf({ version: 1, tune: ["a-1"], holdout: ["b-2"] })).toEqual([
      { file: "split.json", message: 'case "c-3" (line 3 of the cases file) is in no part; add it to "tune" or "holdout"' },
    ]);
  });
});
