/**
 * `retrace trace` of a captured turn names each retriever call the same way in
 * its gold explanation and in its listing (issue 50): by the call's number
 * within its retrieval step. A stage key's own `#N` suffix counts calls over
 * the whole turn (step 2's calls are `Merge#2` and `Merge#3` after a step-1
 * call `Merge`), so printing keys in one place and step numbers in the other
 * named the same call `#3` in one line and `#2` in the next.
 */
import { describe, expect, it } from "vitest";
import { callLabels, explainCapturedGold, renderCapturedTurn } from "../../src/eval/report/captured-turn.js";
import type { TurnReport } from "../../src/eval/report/types.js";
import { fixtureReport } from "./report-fixture.js";

// Step 1: one call (not scored: --retrieval-call last). Step 2: two parallel calls with a child run each (scored).
const unscored = [{ key: "Merge", role: "final" as const, ids: ["g", "x"], error: null, step: 1 }];
const stages = [
  { key: "Keyword#2", role: "child" as const, ids: ["x"], error: null, step: 2 },
  { key: "Merge#2", role: "final" as const, ids: ["x"], error: null, step: 2 },
  { key: "Keyword#3", role: "child" as const, ids: ["g", "y"], error: null, step: 2 },
  { key: "Merge#3", role: "final" as const, ids: ["y", "g"], error: null, step: 2 },
];

describe("captured turn: one name per call in the listing and the explanation", () => {
  it("numbers calls within their step, a child run under its call's number", () => {
    expect([...callLabels({ stages, unscored })]).toEqual([
      ["Keyword#2", "#1 child Keyword"],
      ["Merge#2", "#1 Merge"],
      ["Keyword#3", "#2 child Keyword"],
      ["Merge#3", "#2 Merge"],
      ["Merge", "#1 Merge"],
    ]);
    expect(explainCapturedGold(stages, [], ["x", "y"], "g", 2, unscored)).toBe(
      "g: step 2, 2 parallel calls: absent from #1 child Keyword (1 listed), absent from #1 Merge (1 listed), 1st in #2 child Keyword, 2nd from #2 Merge; cut at k=2",
    );
  });

  it("every call the gold explanation names is a line of the listing, in the step it says", async () => {
    const base = (await fixtureReport()).turns[0]!;
    const t: TurnReport = {
      ...base,
      gold: ["g"],
      retrievedIds: ["x", "y"],
      captured: {
        source: "callbacks",
        retrievers: ["Merge", "Merge"],
        topLevelRuns: 3,
        steps: 2,
        stages,
        unscored,
        noChildRuns: [],
      },
    };
    const out = renderCapturedTurn(t, 1, 2, 10);
    const lines = out.split("\n");
    const explanation = lines.find((l) => l.startsWith("  MISS g: "))!;
    expect(explanation).toBeDefined();
    const named = [...explanation.matchAll(/#\d (?:child )?[A-Za-z]+/g)].map((m) => m[0]);
    expect(named).toEqual(["#1 child Keyword", "#1 Merge", "#2 child Keyword", "#2 Merge"]);
    const step2 = lines.indexOf("  step 2 of 2, scored (2 calls overlapping in time):");
    expect(step2).toBeGreaterThan(lines.indexOf("  step 1 of 2, not scored (1 call):"));
    const listed = lines
      .slice(step2 + 1)
      .filter((l) => /^ {4}#\d/.test(l))
      .map((l) => l.trim().replace(/ \(.*$/u, ""));
    expect(listed).toEqual(named);
    // The header's scored calls are named as listed too (not by their keys Merge#2, Merge#3).
    expect(out).toContain("scored: step 2: #1 Merge, #2 Merge (2 calls in parallel)");
    expect(out).not.toMatch(/Merge#\d|Keyword#\d/);
  });
});
