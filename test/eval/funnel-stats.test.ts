/**
 * The stage funnel as statistics (src/eval/report/funnel-stats.ts) checked by
 * an independent bootstrap written here (its own PRNG, its own resampling and
 * quantiles, none of src/eval/stats): shares exactly, 95% intervals within
 * Monte Carlo error. Also the stage gates (src/eval/gate/stage-gate.ts).
 */
import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../src/errors.js";
import { baselineFromReport } from "../../src/eval/gate/baseline.js";
import { gate } from "../../src/eval/gate/gate.js";
import { buildReport } from "../../src/eval/report/aggregate.js";
import { funnelDiff, funnelOf, perTurnStages } from "../../src/eval/report/funnel-stats.js";
import type { TurnReport } from "../../src/eval/report/types.js";
import { allEvaluators } from "../../src/eval/measures/evaluators.js";

/** xorshift32, seeded: the test's own generator. */
function xorshift(seed: number) {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 4294967296;
  };
}

/** 60 cases of 1–4 gold-bearing turns; gold lost at dense with p≈0.05, at fused ≈0.1, at final ≈0.2 (a fixed pattern, no randomness in the data). */
function turns(lossShift = 0): TurnReport[] {
  const out: TurnReport[] = [];
  const rand = xorshift(7);
  for (let c = 0; c < 60; c++) {
    const n = 1 + (c % 4);
    for (let turn = 0; turn < n; turn++) {
      const u = rand();
      const dense = u > 0.05 ? 1 : null;
      const fused = u > 0.1 + lossShift ? 2 : null;
      const final = u > 0.2 + lossShift;
      const ranks = { dense, bm25: 3, fused, parents: fused };
      out.push({
        caseId: `c${String(c).padStart(2, "0")}`,
        turn,
        locale: "en",
        kind: "golden",
        user: "q",
        gold: ["g"],
        expect: "answer",
        retrievedIds: final ? ["g"] : ["x"],
        citedIds: [],
        refused: false,
        answer: "",
        results: [{ key: "retrieval_hit_at_k", score: final ? 1 : 0 }],
        trace: { query: "q", k: 5, retrievedIds: final ? ["g"] : ["x"], goldPositions: { g: ranks } },
      });
    }
  }
  return out;
}

/** The independent case bootstrap of a stage's share: draw cases with replacement, Σ present / Σ turns, type-7 quantiles. */
function independentInterval(
  ts: TurnReport[],
  stage: string,
  samples: number,
  seed: number,
): { share: number; lo: number; hi: number } {
  const byCase = new Map<string, number[]>();
  for (const t of ts) {
    const p =
      stage === "final"
        ? t.results[0]!.score
        : (t.trace!.goldPositions.g as Record<string, number | null>)[stage] !== null
          ? 1
          : 0;
    byCase.set(t.caseId, [...(byCase.get(t.caseId) ?? []), p]);
  }
  const cases = [...byCase.values()];
  const share = cases.flat().reduce((s, x) => s + x, 0) / cases.flat().length;
  const rand = xorshift(seed);
  const reps: number[] = [];
  for (let s = 0; s < samples; s++) {
    let sum = 0;
    let n = 0;
    for (let i = 0; i < cases.length; i++) {
      const c = cases[Math.floor(rand() * cases.length)]!;
      sum += c.reduce((a, b) => a + b, 0);
      n += c.length;
    }
    reps.push(sum / n);
  }
  reps.sort((a, b) => a - b);
  const q = (p: number) => {
    const h = (reps.length - 1) * p;
    const lo = Math.floor(h);
    return reps[lo]! + (h - lo) * (reps[Math.min(lo + 1, reps.length - 1)]! - reps[lo]!);
  };
  return { share, lo: q(0.025), hi: q(0.975) };
}

describe("funnelOf", () => {
  const ts = turns();
  const funnel = funnelOf(ts, { seed: 42, samples: 4000 })!;

  it("reports every measured stage in pipeline order with n and cases", () => {
    expect(funnel.stages.map((s) => s.stage)).toEqual(["dense", "bm25", "fused", "parents", "final"]);
    for (const s of funnel.stages) {
      expect(s.n).toBe(ts.length);
      expect(s.nCases).toBe(60);
    }
    expect(Object.keys(funnel.splits.position!)).toEqual(["1", "2", "3", "4+"]);
    expect(funnel.splits.position!["4+"]![0]!.n).toBe(15); // the 15 cases with 4 turns
  });

  it.each(["dense", "fused", "final"])(
    "reproduces the share and 95 percent interval of stage %s with an independent case bootstrap",
    (stage) => {
      const row = funnel.stages.find((s) => s.stage === stage)!;
      const ind = independentInterval(ts, stage, 20_000, 12345);
      expect(row.share).toBe(ind.share);
      // Monte Carlo error of a 2.5% quantile with 4,000 and 20,000 draws is well under 0.015 here (share SE ≈ 0.03).
      expect(Math.abs(row.ci95![0] - ind.lo)).toBeLessThan(0.015);
      expect(Math.abs(row.ci95![1] - ind.hi)).toBeLessThan(0.015);
    },
  );

  it("pairs two runs' funnels per stage (B − A) with an interval that sees a real loss", () => {
    const worse = turns(0.15);
    const d = funnelDiff(perTurnStages(ts), perTurnStages(worse), { seed: 1, samples: 1000 });
    const fused = d.find((x) => x.stage === "fused")!;
    expect(fused.diff).toBeLessThan(-0.1);
    expect(fused.ci95![1]).toBeLessThan(0);
    const dense = d.find((x) => x.stage === "dense")!;
    expect(dense.diff).toBe(0);
  });
});

describe("stage gates", () => {
  const report = buildReport({
    run: { datasetHash: "d", kbHash: "k", source: "own", embedder: "e", k: 5, store: "memory" },
    turns: turns(),
    evaluators: allEvaluators({ k: 5 }),
    samples: 200,
  });
  const share = (stage: string) => report.funnel!.stages.find((s) => s.stage === stage)!.share;

  it("passes and fails --min-stage on the share", () => {
    expect(gate(report, { minStage: { fused: share("fused") } }).passed).toBe(true);
    const g = gate(report, { minStage: { fused: share("fused") + 0.01 } });
    expect(g.passed).toBe(false);
    expect(g.failures[0]).toMatchObject({ kind: "floor", key: "stage_fused" });
  });

  it("refuses an unknown stage, listing the stages this run has (exit 2)", () => {
    let err: unknown;
    try {
      gate(report, { minStage: { reranked: 0.5 } });
    } catch (e) {
      err = e;
    }
    expect(InvalidArgumentError.isInstance(err)).toBe(true);
    expect((err as Error).message).toContain("dense, bm25, fused, parents, final");
  });

  it("checks --max-stage-drop against the baseline, and needs one", () => {
    const baseline = baselineFromReport(report);
    const worse = buildReport({
      run: report.run,
      turns: turns(0.15),
      evaluators: allEvaluators({ k: 5 }),
      samples: 200,
    });
    const stageFailures = (g: ReturnType<typeof gate>) => g.failures.filter((f) => f.key.startsWith("stage_"));
    // (hit@k dropped too: the triad's own drop checks fail; only the stage checks are looked at here)
    expect(stageFailures(gate(worse, { maxStageDrop: { dense: 0 } }, baseline))).toEqual([]);
    const g = gate(worse, { maxStageDrop: { fused: 0.05 } }, baseline);
    expect(g.failures.map((f) => f.key)).toContain("stage_fused");
    expect(() => gate(worse, { maxStageDrop: { fused: 0.05 } })).toThrow(/baseline/);
  });
});
