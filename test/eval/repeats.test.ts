/**
 * `retrace eval --graph --repeat N` (issue 26 items 1 and 2): the statistics
 * of repeats (src/eval/stats/repeats.ts), combining the repeats' turns
 * (src/eval/sweep/repeats.ts), and real graph runs through runGraphEval —
 * a deterministic graph (test/fixtures/graphs/kb-agent.mjs: repeats
 * identical, aggregates a single run's exactly) and one whose retriever
 * returns the gold with probability 0.7 per call
 * (test/fixtures/graphs/flaky-agent.mjs, seeded through --configurable).
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { mergeShardReports } from "../../src/app/merge.js";
import { writeBaseline } from "../../src/eval/gate/baseline.js";
import { reportToJSON } from "../../src/eval/report/render/json.js";
import { runEval, runGraphEval } from "../../src/app/sources/registry.js";
import { InvalidArgumentError } from "../../src/errors.js";
import { renderMarkdown, renderTable } from "../../src/eval/report/render.js";
import { parseReport } from "../../src/eval/report/schemas.js";
import type { Report, TurnReport } from "../../src/eval/report/types.js";
import { clusterMean } from "../../src/eval/stats/bootstrap.js";
import { twoStageMean, varianceShares } from "../../src/eval/stats/repeats.js";
import { combineRepeats } from "../../src/eval/sweep/repeats.js";

const KB = "test/fixtures/kb-mini";
const AGENT = "test/fixtures/graphs/kb-agent.mjs";
const FLAKY = "test/fixtures/graphs/flaky-agent.mjs";
const FLAKY_CASES = "test/fixtures/graphs/flaky-cases.jsonl";
const HIT = "retrieval_hit_at_k";
const width = (ci: [number, number] | undefined) => (ci === undefined ? NaN : ci[1] - ci[0]);

describe("repeat statistics", () => {
  it("splits the variance by the law of total variance (hand-checked)", () => {
    // Turn A: [1, 0] (mean 0.5), turn B: [1, 1] (mean 1); grand mean 0.75.
    // within = ((0.25 + 0.25) + 0) / 4 = 0.125; between = (0.0625 + 0.0625) / 2 = 0.0625; total = 0.1875 = 0.75 × 0.25.
    const v = varianceShares([
      { cluster: "a", values: [1, 0] },
      { cluster: "b", values: [1, 1] },
    ])!;
    expect(v.within).toBeCloseTo(0.125, 12);
    expect(v.between).toBeCloseTo(0.0625, 12);
    expect(v.total).toBeCloseTo(0.1875, 12);
    expect(v.withinShare).toBeCloseTo(2 / 3, 12);
    expect(v.betweenShare).toBeCloseTo(1 / 3, 12);
  });

  it("two-stage bootstrap: the mean of repeat means, seeded and independent of case order; repeats resampled widen the interval", () => {
    const values = Array.from({ length: 30 }, (_, i) => ({
      cluster: `c${i % 15}`,
      values: Array.from({ length: 8 }, (_, r): number => ((i * 7 + r * 3) % 10 < 7 ? 1 : 0)),
    }));
    const a = twoStageMean(values, { seed: 3 })!;
    const b = twoStageMean([...values].reverse(), { seed: 3 })!;
    const total = values.flatMap((v) => v.values).reduce((s, x) => s + x, 0);
    expect(a.mean).toBeCloseTo(total / (30 * 8), 12);
    expect(a.ci95).toEqual(b.ci95);
    expect(a.nCases).toBe(15);
    // Resampling only cases (over each turn's mean) ignores the repeats' own variation: narrower.
    const caseOnly = clusterMean(
      values.map((v) => ({ cluster: v.cluster, value: v.values.reduce((s, x) => s + x, 0) / 8 })),
      { seed: 3 },
    )!;
    expect(width(a.ci95!)).toBeGreaterThan(width(caseOnly.ci95!));
    expect(() =>
      twoStageMean([
        { cluster: "a", values: [1] },
        { cluster: "b", values: [1, 0] },
      ]),
    ).toThrow(InvalidArgumentError);
  });
});

const turn = (caseId: string, t: number, hit: number, extra: Partial<TurnReport> = {}): TurnReport =>
  ({
    caseId,
    turn: t,
    locale: "en",
    kind: "golden",
    user: "q",
    gold: ["x"],
    expect: "answer",
    retrievedIds: [],
    citedIds: [],
    refused: false,
    answer: "",
    results: [{ key: HIT, score: hit, comment: `hit=${hit}` }],
    ...extra,
  }) as TurnReport;

describe("combineRepeats", () => {
  it("means per turn, flaky turns with their rate, an error in any repeat makes an error turn", () => {
    const runs = [
      [turn("a", 0, 1), turn("a", 1, 1), turn("b", 0, 0)],
      [turn("a", 0, 0), turn("a", 1, 1), turn("b", 0, 0, { error: "boom" })],
      [turn("a", 0, 1), turn("a", 1, 1), turn("b", 0, 0)],
    ];
    const c = combineRepeats(runs, { seed: 1 });
    expect(c.section.identical).toBe(false);
    expect(c.section.flaky).toEqual([{ caseId: "a", turn: 0, hits: 2, n: 3, rate: 2 / 3 }]);
    expect(c.section.errorTurns).toBe(1);
    expect(c.turns[0]!.results[0]!.score).toBeCloseTo(2 / 3, 12);
    expect(c.turns[0]!.results[0]!.comment).toMatch(/^mean over 3 repeats 0\.667 \(1\.000, 0\.000, 1\.000\)/);
    // The same in every repeat: its results unchanged; in a run whose repeats differed it carries its scores per repeat too.
    expect(c.turns[1]).toEqual({ ...runs[0]![1], repeatScores: { [HIT]: [1, 1, 1] } });
    expect(c.turns[0]!.repeatScores).toEqual({ [HIT]: [1, 0, 1] });
    expect(c.turns[2]!.repeatScores).toBeUndefined();
    expect(c.turns[2]!.error).toBe("boom");
    expect(c.section.metrics[HIT]!.n).toBe(2); // the errored turn is not in the two-stage statistics
  });

  it("identical repeats: the first repeat's turns unchanged, no metrics, no flaky turns", () => {
    const runs = [0, 1].map(() => [turn("a", 0, 1), turn("b", 0, 0)]);
    const c = combineRepeats(runs, { seed: 1 });
    expect(c.section).toEqual({ n: 2, identical: true, flaky: [], errorTurns: 0, metrics: {} });
    expect(c.turns).toEqual(runs[0]);
  });
});

const strip = (r: Report) => {
  const { timings: _t, repeats: _r, ...rest } = r;
  return rest;
};

describe("eval --graph --repeat (real LangGraph runs)", () => {
  it("a deterministic graph: the repeats were identical, the aggregates and turns are a single run's exactly", async () => {
    const one = (await runGraphEval({ graph: AGENT, kb: KB })).report;
    const three = (await runGraphEval({ graph: AGENT, kb: KB, repeat: 3 })).report;
    expect(three.repeats).toEqual({ n: 3, identical: true, flaky: [], errorTurns: 0, metrics: {} });
    expect(strip(three)).toEqual(strip(one));
    expect(renderTable(three, { color: false }).match(/the 3 repeats were identical/g)).toHaveLength(1);
    expect(renderMarkdown(three)).toContain("the 3 repeats were identical");
    expect(() => parseReport(JSON.parse(JSON.stringify(three)), "r.json")).not.toThrow();
  }, 60_000);

  it("a retriever that finds the gold with p = 0.7: flaky turns near 0.7, a two-stage interval containing 0.7 and wider than resampling cases alone; --max-flaky gates", async () => {
    const run = (seed: number, extra: Record<string, unknown> = {}) =>
      runGraphEval({ graph: FLAKY, kb: KB, cases: FLAKY_CASES, repeat: 10, configurable: { seed }, ...extra });
    const r = (await run(7)).report;
    const s = r.repeats!;
    expect(s.identical).toBe(false);
    expect(s.flaky.length).toBeGreaterThan(20); // of 40 turns; P(10/10 or 0/10) ≈ 0.03 per turn
    const meanRate = s.flaky.reduce((a, f) => a + f.rate, 0) / s.flaky.length;
    expect(meanRate).toBeGreaterThan(0.55);
    expect(meanRate).toBeLessThan(0.85);
    const hit = r.aggregates[HIT]!;
    expect(hit.ci95).toEqual(s.metrics[HIT]!.ci95);
    expect(hit.mean).toBeCloseTo(s.metrics[HIT]!.mean, 12);
    expect(hit.ci95![0]).toBeLessThan(0.7);
    expect(hit.ci95![1]).toBeGreaterThan(0.7);
    // The interval of the same per-turn means with cases resampled only: narrower (it ignores the repeats' variation).
    const caseOnly = clusterMean(
      r.turns.map((t) => ({ cluster: t.caseId, value: t.results.find((x) => x.key === HIT)!.score })),
      { seed: r.bootstrap!.seed },
    )!;
    expect(width(hit.ci95)).toBeGreaterThan(width(caseOnly.ci95!));
    // Nearly all of the variance is the graph's own randomness (every turn has the same p).
    expect(s.metrics[HIT]!.withinShare).toBeGreaterThan(0.8);
    expect(renderTable(r, { color: false })).toMatch(
      /flaky turns:\n {4}flaky-\d{3}#[01] hit in \d+\/10 repeats \(rate 0\.\d\d\)/,
    );
    // Same seed, same report; another seed, another run.
    expect(strip((await run(7)).report)).toEqual(strip(r));
    expect((await run(8)).report.repeats!.flaky).not.toEqual(s.flaky);
    // --max-flaky: a gate check of kind "flaky".
    const gated = (await run(7, { maxFlaky: 0 })).report.gate!;
    expect(gated.passed).toBe(false);
    expect(gated.failures.map((f) => f.kind)).toEqual(["flaky"]);
    const check = gated.checks!.find((c) => c.kind === "flaky")!;
    expect(check).toMatchObject({ option: "--gate max-flaky=0", observed: s.flaky.length, verdict: "fail" });
    expect((await run(7, { maxFlaky: 40 })).report.gate!.passed).toBe(true);
  }, 240_000);

  it("retrace's own graph (in-process store): --repeat 3 runs it three times, says once that the repeats were identical, and reports a single run's numbers; --max-flaky gates", async () => {
    const o = { kb: KB, store: "memory", embedder: "builtin", counterfactual: false };
    const one = (await runEval(o)).report;
    const updates: [string, number, number][] = [];
    const progress = (phase: string) => ({
      update: (d: number, t: number) => void updates.push([phase, d, t]),
      stop: () => undefined,
    });
    const three = (await runEval({ ...o, repeat: 3, maxFlaky: 0 }, { progress })).report;
    // It ran: every case three times (the progress counts 3 × the cases).
    const cases = new Set(one.turns.map((t) => t.caseId)).size;
    expect(updates.filter(([p]) => p === "eval").at(-1)).toEqual(["eval", 3 * cases, 3 * cases]);
    expect(three.repeats).toEqual({ n: 3, identical: true, flaky: [], errorTurns: 0, metrics: {} });
    const { gate: gate3, ...rest3 } = strip(three);
    const { gate: _g1, ...rest1 } = strip(one);
    expect(rest3).toEqual(rest1);
    expect(gate3!.checks!.map((c) => [c.kind, c.verdict, c.observed])).toEqual([["flaky", "pass", 0]]);
    expect(renderTable(three, { color: false }).match(/the 3 repeats were identical/g)).toHaveLength(1);
    await expect(runEval({ ...o, maxFlaky: 0 })).rejects.toThrow(/--gate max-flaky.*--repeat N, N ≥ 2/s);
  }, 120_000);

  it("refuses --max-flaky without repeats and --repeat 0 (exit 2 errors, before the graph loads)", async () => {
    await expect(runGraphEval({ graph: AGENT, kb: KB, maxFlaky: 1 })).rejects.toThrow(
      /--gate max-flaky.*--repeat N, N ≥ 2/s,
    );
    await expect(runGraphEval({ graph: AGENT, kb: KB, repeat: 0 })).rejects.toThrow(InvalidArgumentError);
  });

  it("--repeat with --shard, then retrace merge: the unsharded run's report byte for byte outside timings, its gate included", async () => {
    // Graph seed 2, p 0.97, 2 repeats: shard 1/2's repeats are all identical (its turns carry no per-repeat scores), shard 2/2's are not.
    const dir = await mkdtemp(path.join(tmpdir(), "retrace-repeat-shards-"));
    try {
      const o = { graph: FLAKY, kb: KB, cases: FLAKY_CASES, repeat: 2, configurable: { seed: 2, p: 0.97 } };
      const baselineFile = path.join(dir, "baseline.json");
      await writeBaseline(baselineFile, (await runGraphEval({ ...o, configurable: { seed: 5, p: 0.97 } })).report);
      const gateOptions = { baseline: baselineFile, maxDrop: 0.05, maxFlaky: 3 };
      const whole = (await runGraphEval({ ...o, ...gateOptions })).report;
      const files: string[] = [];
      const shards: Report[] = [];
      for (const index of [1, 2]) {
        const r = (await runGraphEval({ ...o, shard: { index, count: 2 } })).report;
        shards.push(r);
        files.push(path.join(dir, `shard-${index}.json`));
        await writeFile(files[index - 1]!, reportToJSON(r));
      }
      expect(shards.map((r) => r.repeats!.identical)).toEqual([true, false]);
      expect(whole.repeats!.identical).toBe(false);
      expect(whole.gate!.dropTest!.method).toBe("repeat-bootstrap");
      const merged = (await mergeShardReports(files, { kb: KB, cases: FLAKY_CASES, ...gateOptions })).report;
      const noTimings = (r: Report) => reportToJSON({ ...r, timings: undefined } as Report);
      expect(noTimings(merged)).toBe(noTimings(whole));
      // Shards of another repeat count do not merge (exit 2 naming the field).
      const other = (await runGraphEval({ ...o, repeat: 3, shard: { index: 2, count: 2 } })).report;
      await writeFile(files[1]!, reportToJSON(other));
      await expect(mergeShardReports(files, { kb: KB, cases: FLAKY_CASES })).rejects.toThrow(
        /number of repeats \(--repeat\) differs/,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 240_000);
});
