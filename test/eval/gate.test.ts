import { describe, expect, it } from "vitest";
import { BaselineMismatchError, InvalidArgumentError } from "../../src/errors.js";
import { baselineFromReport, type Baseline } from "../../src/eval/baseline.js";
import { DEFAULT_MAX_DROP, gate } from "../../src/eval/gate.js";
import type { Report } from "../../src/eval/types.js";
import { fixtureReport, storelessReport } from "./report-fixture.js";

// The fixture report (report-fixture.ts): hit@3 0.75 (n=4), recall@3 0.625 (n=4), nDCG@3 ≈ 0.504 (n=4).

/** A baseline of the fixture with the triad means (and per-turn hit scores) replaced. */
function baselineWith(report: Report, means: Partial<Record<string, number>>, perTurnHit?: Record<string, number>): Baseline {
  const b = baselineFromReport(report, new Date("2025-01-01T00:00:00Z"));
  for (const [key, m] of Object.entries(means)) {
    const agg = b.aggregates[key];
    if (agg !== undefined && m !== undefined) b.aggregates[key] = { ...agg, mean: m };
  }
  if (perTurnHit !== undefined) {
    for (const [id, s] of Object.entries(perTurnHit)) b.perTurn[id] = { ...(b.perTurn[id] ?? {}), retrieval_hit_at_k: s };
  }
  return b;
}

describe("gate: floors", () => {
  it("passes with every floor unset, even for a store-less run", async () => {
    expect(gate(await fixtureReport(), {})).toEqual({ passed: true, failures: [] });
    expect(gate(await storelessReport(), {})).toEqual({ passed: true, failures: [] });
  });

  it("fails a floor above the mean with a human reason naming key, mean, n and floor", async () => {
    const r = gate(await fixtureReport(), { minHit: 0.9 });
    expect(r.passed).toBe(false);
    expect(r.failures).toEqual([
      { kind: "floor", key: "retrieval_hit_at_k", reason: "retrieval_hit_at_k 0.750 (n=4) is below the floor 0.900" },
    ]);
    const rec = gate(await fixtureReport(), { minRecall: 0.7 });
    expect(rec.failures[0]?.reason).toBe("retrieval_recall_at_k 0.625 (n=4) is below the floor 0.700");
  });

  it("passes a floor at or below the mean (a floor equal to the mean passes)", async () => {
    const report = await fixtureReport();
    expect(gate(report, { minHit: 0.75, minRecall: 0.625 }).passed).toBe(true);
    expect(gate(report, { minHit: 0, minRecall: 0.5 }).passed).toBe(true);
  });

  it("a floor on a metric that was not measured is a not_measured failure, never a pass", async () => {
    const r = gate(await storelessReport(), { minHit: 0, minRecall: 0 });
    expect(r.passed).toBe(false);
    expect(r.failures.map((f) => [f.kind, f.key])).toEqual([
      ["not_measured", "retrieval_hit_at_k"],
      ["not_measured", "retrieval_recall_at_k"],
    ]);
    expect(r.failures[0]?.reason).toBe("retrieval_hit_at_k was not measured (no store); the floor 0.000 (minHit) cannot pass");
  });

  it("rejects out-of-range thresholds with a typed error", async () => {
    const report = await fixtureReport();
    expect(() => gate(report, { minHit: 1.5 })).toThrow(InvalidArgumentError);
    expect(() => gate(report, { minRecall: -0.1 })).toThrow("Expected `minRecall` to be a number between 0 and 1, got -0.1");
    expect(() => gate(report, { maxDrop: Number.NaN })).toThrow(InvalidArgumentError);
  });

  it("is pure: the report is not mutated", async () => {
    const report = await fixtureReport();
    const copy = structuredClone(report);
    gate(report, { minHit: 0.99 }, baselineWith(report, { retrieval_hit_at_k: 1 }));
    expect(report).toEqual(copy);
  });
});

describe("gate: regression against a baseline", () => {
  it("passes against its own baseline", async () => {
    const report = await fixtureReport();
    expect(gate(report, {}, baselineFromReport(report))).toEqual({ passed: true, failures: [] });
  });

  it("fails a drop beyond the tolerance, naming key, both means, n and the paired p-value", async () => {
    const report = await fixtureReport();
    // Baseline hit 0.90 vs current 0.75: drop 0.15 > 0.02. Per-turn baseline hits: all 1, so the shared
    // turns g1#0, g1#1, g2#1, adv1#0 give d = [0,0,−1,0] → exact sign-flip p = 1 (a single flip is not evidence).
    const baseline = baselineWith(report, { retrieval_hit_at_k: 0.9 }, { "g2#1": 1 });
    const r = gate(report, {}, baseline);
    expect(r.passed).toBe(false);
    expect(r.failures).toEqual([
      {
        kind: "regression",
        key: "retrieval_hit_at_k",
        reason:
          "retrieval_hit_at_k 0.750 (n=4) dropped from the baseline's 0.900 (n=4) by 0.150, more than the tolerance 0.020 (paired sign-flip p=1.000 over 4 shared turns)",
      },
    ]);
  });

  it("passes a drop within the tolerance, and exactly at it", async () => {
    const report = await fixtureReport();
    expect(gate(report, {}, baselineWith(report, { retrieval_hit_at_k: 0.76 })).passed).toBe(true); // drop 0.01
    expect(gate(report, { maxDrop: 0.05 }, baselineWith(report, { retrieval_recall_at_k: 0.675 })).passed).toBe(true); // drop = 0.05
    expect(gate(report, { maxDrop: 0.04 }, baselineWith(report, { retrieval_recall_at_k: 0.675 })).failures[0]?.key).toBe(
      "retrieval_recall_at_k",
    );
    expect(DEFAULT_MAX_DROP).toBe(0.02);
  });

  it("an improvement never fails", async () => {
    const report = await fixtureReport();
    expect(gate(report, { maxDrop: 0 }, baselineWith(report, { retrieval_hit_at_k: 0.5, retrieval_ndcg_at_k: 0.1 })).passed).toBe(true);
  });

  it("throws BaselineMismatchError for a baseline of another dataset, k or retrieval config", async () => {
    const report = await fixtureReport();
    const other = { ...baselineFromReport(report), datasetHash: "ds-9999" };
    expect(() => gate(report, {}, other)).toThrow(BaselineMismatchError);
    expect(() => gate(report, {}, other)).toThrow(/`datasetHash` is "ds-9999" but this run's is "ds-1111"/);
    expect(() => gate(report, {}, { ...baselineFromReport(report), k: 10 })).toThrow(/`k` is 10 but this run's is 3/);
    const reranked = baselineFromReport(report);
    reranked.config = { ...reranked.config, rerank: "ms-marco-MiniLM" };
    expect(() => gate(report, {}, reranked)).toThrow(/`config.rerank`/);
  });

  it("a store-less run compared with a baseline fails not_measured on each triad key", async () => {
    const report = await storelessReport();
    const baseline = baselineFromReport(await fixtureReport({ embedder: null, store: "none", mode: undefined }));
    const r = gate(report, {}, baseline);
    expect(r.failures.map((f) => `${f.kind}:${f.key}`)).toEqual([
      "not_measured:retrieval_hit_at_k",
      "not_measured:retrieval_recall_at_k",
      "not_measured:retrieval_ndcg_at_k",
    ]);
    expect(r.failures[0]?.reason).toBe("retrieval_hit_at_k was not measured (no store); the baseline comparison cannot pass");
  });

  it("a baseline without a triad key the run measured is a baseline_mismatch failure", async () => {
    const report = await fixtureReport();
    const baseline = baselineFromReport(report);
    delete baseline.aggregates.retrieval_ndcg_at_k;
    const r = gate(report, {}, baseline);
    expect(r.failures).toEqual([
      {
        kind: "baseline_mismatch",
        key: "retrieval_ndcg_at_k",
        reason: "the baseline has no retrieval_ndcg_at_k (nDCG@k) to compare with; re-create it with --update-baseline",
      },
    ]);
  });
});
