/**
 * Tune/holdout parts in the aggregates and the renderings (docs/holdout.md),
 * on the hand-checked fixture of ./report-fixture.ts with its cases put in
 * parts: g1 and adv1 in holdout, g2 and g3 in tune. Expected values are
 * re-derived by hand from the fixture's per-turn comments:
 *
 *   turn    part     refusal  coverage  correctness  hit@3
 *   g1#0    holdout  1        1         1            1
 *   g1#1    holdout  1        1         0            1
 *   g2#0    tune     1        —         —            —
 *   g2#1    tune     1        0         1            0
 *   adv1#0  holdout  0        —         1            1
 *   adv1#1  holdout  1        —         —            —
 *   g3#0    tune     1        1         —            —
 *
 * Headline answer-side figures use holdout turns only: refusal 3/4,
 * coverage 2/2, correctness 2/3; retrieval uses every turn: hit 3/4.
 */
import { describe, expect, it } from "vitest";
import { buildReport } from "../../src/eval/report/aggregate.js";
import { allEvaluators } from "../../src/eval/measures/evaluators.js";
import {
  answerSideOf,
  headlineTurns,
  isAnswerSideKey,
  NO_HOLDOUT_TURN,
  RULE_BASED_ANSWERER,
} from "../../src/eval/report/parts.js";
import { renderMarkdown, renderTable } from "../../src/eval/report/render.js";
import type { TurnReport } from "../../src/eval/report/types.js";
import type { SplitPart } from "../../src/kb/split.js";
import { K, ROWS, runInfo, turnReports } from "./report-fixture.js";

const evaluators = allEvaluators({ k: K });
const PARTS: Record<string, SplitPart> = { g1: "holdout", adv1: "holdout", g2: "tune", g3: "tune" };

async function parted(parts: Record<string, SplitPart> = PARTS): Promise<TurnReport[]> {
  return (await turnReports(ROWS, evaluators)).map((t) => ({ ...t, part: parts[t.caseId]! }));
}

describe("answer-side keys", () => {
  it("are every key outside the retrieval metric registry", () => {
    expect(isAnswerSideKey("retrieval_hit_at_k")).toBe(false);
    expect(isAnswerSideKey("retrieval_mrr_at_k")).toBe(false);
    expect(
      ["citation_coverage", "citation_correctness", "refusal_correctness", "groundedness", "my_custom_key"].every(
        isAnswerSideKey,
      ),
    ).toBe(true);
  });

  it("headlineTurns drops answer-side results of tune turns only, without mutating its input", async () => {
    const turns = await parted();
    const before = JSON.stringify(turns);
    const view = headlineTurns(turns);
    expect(JSON.stringify(turns)).toBe(before);
    const keys = (id: string) => view.find((t) => `${t.caseId}#${t.turn}` === id)!.results.map((r) => r.key);
    expect(keys("g2#1")).toEqual(expect.arrayContaining(["retrieval_hit_at_k"]));
    expect(keys("g2#1").filter(isAnswerSideKey)).toEqual([]);
    expect(keys("g1#1")).toEqual(
      expect.arrayContaining(["refusal_correctness", "citation_coverage", "citation_correctness"]),
    );
    // Without parts the turns are returned as they are.
    const plain = await turnReports(ROWS, evaluators);
    expect(headlineTurns(plain)).toBe(plain);
  });
});

describe("buildReport with parts", () => {
  it("computes headline answer-side figures on held-out turns and retrieval on every turn", async () => {
    const r = buildReport({
      run: runInfo({ answerer: RULE_BASED_ANSWERER, split: "kb/eval/split.json" }),
      turns: await parted(),
      evaluators,
    });
    expect(r.aggregates.refusal_correctness).toMatchObject({ mean: 3 / 4, n: 4 });
    expect(r.aggregates.citation_coverage).toMatchObject({ mean: 1, n: 2 });
    expect(r.aggregates.citation_correctness!.mean).toBeCloseTo(2 / 3, 12);
    expect(r.aggregates.citation_correctness!.n).toBe(3);
    expect(r.aggregates.retrieval_hit_at_k).toMatchObject({ mean: 3 / 4, n: 4 });
    // Kind and locale splits follow the same rule.
    expect(r.splits.kind.golden!.refusal_correctness).toMatchObject({ mean: 1, n: 2 });
    expect(r.splits.kind.adversarial!.refusal_correctness).toMatchObject({ mean: 1 / 2, n: 2 });
    expect(r.splits.locale["es-419"]!.refusal_correctness).toBeUndefined(); // both es-419 turns are tune
    expect(r.splits.locale["es-419"]!.retrieval_hit_at_k).toMatchObject({ mean: 0, n: 1 });
    // Per part: every key.
    expect(r.splits.part!.tune!.refusal_correctness).toMatchObject({ mean: 1, n: 3 });
    expect(r.splits.part!.tune!.citation_coverage).toMatchObject({ mean: 1 / 2, n: 2 });
    expect(r.splits.part!.tune!.retrieval_hit_at_k).toMatchObject({ mean: 0, n: 1 });
    expect(r.splits.part!.holdout!.retrieval_hit_at_k).toMatchObject({ mean: 1, n: 3 });
    expect(r.answerSide).toEqual({
      scope: "holdout",
      keys: ["citation_coverage", "citation_correctness", "refusal_correctness", "groundedness"],
      turns: { tune: 3, holdout: 4 },
    });
  });

  it("reports an answer-side key with no held-out turn as not measured, keeping its tune figure in the part split", async () => {
    const r = buildReport({
      run: runInfo(),
      turns: await parted({ g1: "tune", adv1: "tune", g2: "tune", g3: "tune" }),
      evaluators,
    });
    expect(r.aggregates.refusal_correctness).toBeUndefined();
    expect(r.vacuous).toContain("refusal_correctness");
    expect(r.vacuousReasons.refusal_correctness).toBe(NO_HOLDOUT_TURN);
    expect(r.splits.part!.tune!.refusal_correctness).toMatchObject({ mean: 6 / 7, n: 7 });
    expect(r.aggregates.retrieval_hit_at_k).toMatchObject({ mean: 3 / 4, n: 4 });
    // The table says why the headline is missing and still shows the tune figure in the part table.
    const table = renderTable(r, { color: false });
    expect(table).toMatch(/^refusal_correctness \(held-out\)\s+not measured \(no held-out turn in this run/m);
    expect(table).toMatch(/^refusal_correctness\s+0\.857 .* n=7( \(\d+ cases?\))?\s+not measured \(no held-out turn/m);
  });

  it("without parts reports every key on every turn, as before, and says no held-out part exists", async () => {
    const turns = await turnReports(ROWS, evaluators);
    const r = buildReport({ run: runInfo({ answerer: RULE_BASED_ANSWERER, split: null }), turns, evaluators });
    expect(r.aggregates.refusal_correctness).toMatchObject({ mean: 6 / 7, n: 7 });
    expect(r.splits.part).toBeUndefined();
    expect(answerSideOf(turns, ["retrieval_hit_at_k", "refusal_correctness"])).toEqual({
      scope: "all",
      keys: ["refusal_correctness"],
      turns: { tune: 0, holdout: 0 },
    });
    const table = renderTable(r, { color: false });
    expect(table).toContain("note: no held-out part");
    expect(table).not.toContain("(held-out)");
    expect(table).toContain(`answerer: ${RULE_BASED_ANSWERER}`);
    expect(renderMarkdown(r)).not.toContain("## By part");
  });
});

describe("renderings with parts", () => {
  it("mark held-out rows, name the answerer and add the part table", async () => {
    const r = buildReport({
      run: runInfo({ answerer: RULE_BASED_ANSWERER, split: "kb/eval/split.json" }),
      turns: await parted(),
      evaluators,
    });
    const table = renderTable(r, { color: false });
    expect(table).toMatch(/^answerer: rule-based, offline$/m);
    expect(table).toMatch(
      /^refusal_correctness \(held-out\)\s+0\.750 .* n=4( \(\d+ cases?\))?\s+1\.000 .* n=2( \(\d+ cases?\))?\s+0\.500 .* n=2( \(\d+ cases?\))?$/m,
    );
    expect(table).toMatch(/^metric\s+tune \(fitted on\)\s+holdout$/m);
    expect(table).toMatch(/^refusal_correctness\s+1\.000 .* n=3( \(\d+ cases?\))?\s+0\.750 .* n=4( \(\d+ cases?\))?$/m); // the part table: tune, holdout
    expect(table).toContain("on the holdout part only (4 of 7 turns)");
    const md = renderMarkdown(r);
    expect(md).toContain("| answerer | rule-based, offline |");
    expect(md).toContain("## By part (tune / holdout)");
    expect(md).toMatch(/\| refusal_correctness \(held-out\) \| 0\.750 \|/);
  });
});
