import { describe, expect, it } from "vitest";
import { DataValidationError, type DataIssue } from "../../src/errors.js";
import { parseSplit } from "../../src/kb/split.js";
import type { EvalCase } from "../../src/kb/types.js";

const cases = ["a-1", "b-2", "c-3"].map((id, i) => ({ id, locale: "en", kind: "golden", turns: [], line: i + 1 }) as EvalCase);

function issuesOf(obj: unknown): DataIssue[] {
  try {
    parseSplit(JSON.stringify(obj), "split.json", cases);
  } catch (e) {
    expect(e).toBeInstanceOf(DataValidationError);
    return (e as DataValidationError).issues;
  }
  throw new Error("expected parseSplit to throw");
}

describe("parseSplit", () => {
  it("assigns each case its part", () => {
    const s = parseSplit(JSON.stringify({ version: 1, note: "n", tune: ["a-1", "c-3"], holdout: ["b-2"] }), "split.json", cases);
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
