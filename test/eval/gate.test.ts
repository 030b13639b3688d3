import { describe, expect, it } from "vitest";
import { BaselineMismatchError, InvalidArgumentError } from "../../src/errors.js";
import { baselineFromReport, type Baseline } from "../../src/eval/gate/baseline.js";
import { DEFAULT_MAX_DROP, defaultMaxDrop, gate } from "../../src/eval/gate/gate.js";
import type { Report } from "../../src/eval/report/types.js";
import { fixtureReport, storelessReport } from "./report-fixture.js";

// The fixture report (report-fixture.ts): hit@3 0.75 (n=4), recall@3 0.625 (n=4), nDCG@3 ≈ 0.504 (n=4).
// Per turn (hit, MRR): g1#0 en golden (1, 1/2), g1#1 en golden (1, 1), g2#1 es-419 golden (0, 0),
// adv1#0 pt-BR adversarial (1, 1/2); g3#0 has no retrieval keys. So hit: en 2/2, es-419 0/1, pt-BR 1/1,
// golden 2/3, adversarial 1/1; MRR: all (0.5+1+0+0.5)/4 = 0.5, en 0.75.

/** A baseline of the fixture with the triad means (and per-turn hit scores) replaced. */
function baselineWith(
  report: Report,
  means: Partial<Record<string, number>>,
  perTurnHit?: Record<string, number>,
): Baseline {
  const b = baselineFromReport(report, new Date("2025-01-01T00:00:00Z"));
  for (const [key, m] of Object.entries(means)) {
    const agg = b.aggregates[key];
    if (agg !== undefined && m !== undefined) b.aggregates[key] = { ...agg, mean: m };
  }
  if (perTurnHit !== undefined) {
    for (const [id, s] of Object.entries(perTurnHit))
      b.perTurn[id] = { ...(b.perTurn[id] ?? {}), retrieval_hit_at_k: s };
  }
  return b;
}

describe("gate: floors", () => {
  it("passes with every floor unset, even for a store-less run", async () => {
    expect(gate(await fixtureReport(), {})).toEqual({ passed: true, failures: [], checks: [] });
    expect(gate(await storelessReport(), {})).toEqual({ passed: true, failures: [], checks: [] });
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
    expect(r.failures[0]?.reason).toBe(
      "retrieval_hit_at_k was not measured (no store); the floor 0.000 (minHit) cannot pass",
    );
  });

  it("rejects out-of-range thresholds with a typed error", async () => {
    const report = await fixtureReport();
    expect(() => gate(report, { minHit: 1.5 })).toThrow(InvalidArgumentError);
    expect(() => gate(report, { minRecall: -0.1 })).toThrow(
      "Expected `minRecall` to be a number between 0 and 1, got -0.1",
    );
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
  it("passes against its own baseline, with tolerance 0 (same dataset, KB, configuration and store kind)", async () => {
    const report = await fixtureReport();
    const r = gate(report, {}, baselineFromReport(report));
    expect(r.passed).toBe(true);
    expect(r.failures).toEqual([]);
    expect(r.tolerance?.maxDrop).toBe(0);
    expect(r.tolerance?.source).toMatch(/^default 0: same dataset, KB/);
    // triad + MRR, each overall and per locale (en, es-419, pt-BR): 4 × 4 checks, all recorded with their verdict
    expect(r.checks).toHaveLength(16);
    expect(r.checks?.every((c) => c.kind === "drop" && c.verdict === "pass")).toBe(true);
    expect(r.checks?.map((c) => c.scope).slice(0, 4)).toEqual(["all", "en", "es-419", "pt-BR"]);
    expect(r.flips).toEqual([]);
  });

  it("fails a drop beyond the tolerance, overall and per locale, naming key, both means, n and the paired p-value", async () => {
    const report = await fixtureReport();
    // Baseline hit 0.90 vs current 0.75: drop 0.15 > 0. Per-turn baseline hits: all 1, so the shared
    // turns g1#0, g1#1, g2#1, adv1#0 give d = [0,0,−1,0] in 3 cases (g1, g2, adv1); the case-level bootstrap
    // draws g2 in most replicates, yet a replicate without it gives 0, so the interval reaches 0 and p is large.
    // es-419 has one scored turn, g2#1: baseline 1, now 0 → drop 1.
    const baseline = baselineWith(report, { retrieval_hit_at_k: 0.9 }, { "g2#1": 1 });
    const r = gate(report, {}, baseline);
    expect(r.passed).toBe(false);
    expect(r.failures).toHaveLength(2);
    expect(r.failures[0]).toMatchObject({ kind: "regression", key: "retrieval_hit_at_k" });
    expect(r.failures[0]!.reason).toMatch(
      /^retrieval_hit_at_k 0\.750 \(n=4\) dropped from the baseline's 0\.900 \(n=4\) by 0\.150, more than the tolerance 0\.000 \(paired case-level bootstrap p=0\.\d{3} over 4 shared turns in 3 cases\)$/,
    );
    expect(Number(/p=([\d.]+)/.exec(r.failures[0]!.reason)![1])).toBeGreaterThan(0.05); // one flipped turn is no evidence
    expect(r.failures[1]).toEqual({
      kind: "regression",
      key: "retrieval_hit_at_k",
      scope: "es-419",
      // One case: no resampling possible, so no interval and p = 1.
      reason:
        "retrieval_hit_at_k[es-419] 0.000 (n=1) dropped from the baseline's 1.000 (n=1) by 1.000, more than the tolerance 0.000 (paired case-level bootstrap p=1.000 over 1 shared turns in 1 cases)",
    });
  });

  it("a per-locale collapse fails even when the overall mean did not move", async () => {
    const report = await fixtureReport();
    // Baseline: g2#1 (es-419) hit 1 and adv1#0 (pt-BR) hit 0 — overall still 3/4 = 0.75, as now.
    const baseline = baselineWith(report, {}, { "g2#1": 1, "adv1#0": 0 });
    const r = gate(report, { maxDrop: 0.02 }, baseline);
    expect(r.failures.map((f) => `${f.kind}:${f.key}:${f.scope ?? "all"}`)).toEqual([
      "regression:retrieval_hit_at_k:es-419",
    ]);
    expect(r.tolerance).toEqual({ maxDrop: 0.02, source: "set with --gate max-drop" });
  });

  it("default tolerance: 0 against the same KB, 0.02 (and says why) against another KB version or store kind", async () => {
    const report = await fixtureReport();
    const down = baselineWith(report, { retrieval_hit_at_k: 0.76 }); // drop 0.01
    expect(gate(report, {}, down).passed).toBe(false);
    const otherKb = { ...down, kbHash: "kb-old" };
    const r = gate(report, {}, otherKb);
    expect(r.passed).toBe(true);
    expect(r.tolerance).toEqual({
      maxDrop: DEFAULT_MAX_DROP,
      source: "default 0.02: the baseline was made with another KB version",
    });
    expect(defaultMaxDrop({ ...down, storeKind: "remote" }, report).source).toBe(
      "default 0.02: the baseline was made with another store kind (remote, now local)",
    );
    // A baseline written before store kinds were recorded counts as the same kind.
    const { storeKind: _omit, ...old } = down;
    expect(defaultMaxDrop(old, report).maxDrop).toBe(0);
  });

  it("passes a drop within an explicit tolerance, and exactly at it", async () => {
    const report = await fixtureReport();
    expect(gate(report, { maxDrop: 0.02 }, baselineWith(report, { retrieval_hit_at_k: 0.76 })).passed).toBe(true); // drop 0.01
    expect(gate(report, { maxDrop: 0.05 }, baselineWith(report, { retrieval_recall_at_k: 0.675 })).passed).toBe(true); // drop = 0.05
    expect(
      gate(report, { maxDrop: 0.04 }, baselineWith(report, { retrieval_recall_at_k: 0.675 })).failures[0]?.key,
    ).toBe("retrieval_recall_at_k");
    expect(DEFAULT_MAX_DROP).toBe(0.02);
  });

  it("an improvement never fails", async () => {
    const report = await fixtureReport();
    expect(
      gate(report, { maxDrop: 0 }, baselineWith(report, { retrieval_hit_at_k: 0.5, retrieval_ndcg_at_k: 0.1 })).passed,
    ).toBe(true);
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
    expect(r.failures[0]?.reason).toBe(
      "retrieval_hit_at_k was not measured (no store); the baseline comparison cannot pass",
    );
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

describe("gate: scoped floors", () => {
  it("checks each scope's mean over its own turns and fails only the scope below its floor", async () => {
    const report = await fixtureReport();
    const r = gate(report, { minHit: { en: 0.95, "es-419": 0.5, adversarial: 0.8 } });
    expect(r.passed).toBe(false);
    expect(r.failures).toEqual([
      {
        kind: "floor",
        key: "retrieval_hit_at_k",
        scope: "es-419",
        reason: "retrieval_hit_at_k[es-419] 0.000 (n=1) is below the floor 0.500",
      },
    ]);
    expect(r.checks?.map((c) => [c.scope, c.observed, c.n, c.verdict, c.option])).toEqual([
      ["en", 1, 2, "pass", "--gate min-hit=en=0.950"],
      ["es-419", 0, 1, "fail", "--gate min-hit=es-419=0.500"],
      ["adversarial", 1, 1, "pass", "--gate min-hit=adversarial=0.800"],
    ]);
  });

  it("gates nDCG and MRR too (MRR overall 0.5, en 0.75)", async () => {
    const report = await fixtureReport();
    const r = gate(report, { minMrr: { all: 0.6, en: 0.75 }, minNdcg: 0.5 });
    expect(r.failures.map((f) => f.reason)).toEqual(["retrieval_mrr_at_k 0.500 (n=4) is below the floor 0.600"]);
    expect(r.checks?.map((c) => `${c.key}[${c.scope}]=${c.verdict}`)).toEqual([
      "retrieval_ndcg_at_k[all]=pass",
      "retrieval_mrr_at_k[all]=fail",
      "retrieval_mrr_at_k[en]=pass",
    ]);
  });

  it("rejects a scope that is neither fixed nor a locale of the run, naming the valid ones", async () => {
    const report = await fixtureReport();
    expect(() => gate(report, { minHit: { fr: 0.5 } })).toThrow(InvalidArgumentError);
    expect(() => gate(report, { minHit: { fr: 0.5 } })).toThrow(
      /all, golden, adversarial, synthetic, tune, holdout, en, es-419, pt-BR, got "fr"/,
    );
  });

  it("a tune/holdout floor needs the report's part information; with it, each part is its own scope", async () => {
    const report = await fixtureReport();
    expect(() => gate(report, { minHit: { holdout: 0.5 } })).toThrow(/tune\/holdout part/);
    // g1 is tune (hits 1, 1), the rest holdout (g2#1 0, adv1#0 1 → 0.5).
    for (const t of report.turns) (t as typeof t & { part: string }).part = t.caseId === "g1" ? "tune" : "holdout";
    const r = gate(report, { minHit: { tune: 1, holdout: 0.6 } });
    expect(r.checks?.map((c) => [c.scope, c.observed, c.n, c.verdict])).toEqual([
      ["tune", 1, 2, "pass"],
      ["holdout", 0.5, 2, "fail"],
    ]);
  });
});

describe("gate: flips against the baseline", () => {
  it("lists every turn whose hit went 1 → 0 with locale and where the gold is now, and fails beyond maxFlips", async () => {
    const report = await fixtureReport();
    const baseline = baselineWith(report, {}, { "g2#1": 1, "adv1#0": 0 }); // means unchanged, one flip each way
    const ok = gate(report, { maxDrop: 1, maxFlips: 1 }, baseline);
    expect(ok.passed).toBe(true);
    expect(ok.flips?.map((f) => `${f.caseId}#${f.turn}:${f.locale}`)).toEqual(["g2#1:es-419"]);
    const r = gate(report, { maxDrop: 1, maxFlips: 0 }, baseline);
    expect(r.passed).toBe(false);
    expect(r.failures).toEqual([
      {
        kind: "flips",
        key: "retrieval_hit_at_k",
        reason:
          "1 turn went from hit 1 to 0 against the baseline (at most 0 allowed): g2#1 (es-419, golden) gold=[c] top=[d, e, f] now c: bm25 —, fused —",
      },
    ]);
    expect(r.checks?.at(-1)).toMatchObject({ kind: "flips", observed: 1, threshold: 0, verdict: "fail", n: 4 });
  });

  it("maxFlips without a baseline is a usage error", async () => {
    const report = await fixtureReport();
    expect(() => gate(report, { maxFlips: 0 })).toThrow(/`--gate max-flips` to be used with a baseline/);
  });
});
