/**
 * Seeded simulation: do 95% bootstrap intervals of a turn-weighted mean cover
 * the true mean when turns are clustered in cases? (docs/statistics.md)
 *
 * The set-up is fixed here, before any result was looked at:
 * - 1,000 replications; in each, 80 cases, each with 1–5 turns (uniform);
 * - binary outcomes with true mean μ = 0.7 and within-case correlation 0.5:
 *   each case draws Z ~ Bernoulli(μ); each of its turns copies Z with
 *   probability s = √0.5 and is otherwise an independent Bernoulli(μ) draw,
 *   so every turn is Bernoulli(μ) and two turns of one case have
 *   correlation s² = 0.5;
 * - the interval of each replication is the percentile bootstrap of the
 *   library (clusterMean) with 500 resamples (seed = replication index),
 *   once resampling cases and once resampling turns.
 *
 * Why 500 resamples, not the reports' 2,000: the Monte Carlo error of the
 * 2.5% / 97.5% quantiles with B = 500 shifts each endpoint by a small
 * fraction of the interval's width, which moves coverage by well under one
 * percentage point, while the coverage estimate itself has a binomial
 * standard error of √(0.95·0.05/1000) ≈ 0.7 points; 4× fewer resamples keep
 * the test at a few seconds on a shared machine.
 *
 * Expected (and asserted): case-level coverage within [93%, 97%]; turn-level
 * coverage below 93% (the design effect 1 + ρ(E[m²]/E[m] − 1) = 1 + 0.5·(11/3 − 1)
 * ≈ 2.33 makes the turn-level interval about 1/√2.33 ≈ 0.65 of the width it needs).
 */
import { describe, expect, it } from "vitest";
import { clusterMean, mulberry32, type ClusteredValue } from "../../src/eval/stats/bootstrap.js";

const REPLICATIONS = 1000;
const CASES = 80;
const MU = 0.7;
const COPY = Math.sqrt(0.5);
const RESAMPLES = 500;

function simulate(rand: () => number): ClusteredValue[] {
  const out: ClusteredValue[] = [];
  for (let c = 0; c < CASES; c++) {
    const turns = 1 + Math.floor(rand() * 5);
    const z = rand() < MU ? 1 : 0;
    const cluster = `case-${String(c).padStart(3, "0")}`;
    for (let t = 0; t < turns; t++) {
      const value = rand() < COPY ? z : rand() < MU ? 1 : 0;
      out.push({ cluster, value });
    }
  }
  return out;
}

describe("coverage of 95% bootstrap intervals under within-case correlation 0.5 (seeded simulation)", () => {
  it("case-level intervals cover the true mean 93–97% of the time; turn-level ones fall below 93%", () => {
    const data = mulberry32(20261130);
    let coveredCase = 0;
    let coveredTurn = 0;
    for (let r = 0; r < REPLICATIONS; r++) {
      const values = simulate(data);
      const byCase = clusterMean(values, { unit: "case", seed: r + 1, samples: RESAMPLES })!;
      const byTurn = clusterMean(values, { unit: "turn", seed: r + 1, samples: RESAMPLES })!;
      // Same estimate whatever the unit; only the interval differs.
      expect(byTurn.mean).toBe(byCase.mean);
      const [cl, ch] = byCase.ci95!;
      const [tl, th] = byTurn.ci95!;
      if (cl <= MU && MU <= ch) coveredCase++;
      if (tl <= MU && MU <= th) coveredTurn++;
    }
    const caseCoverage = coveredCase / REPLICATIONS;
    const turnCoverage = coveredTurn / REPLICATIONS;
    expect(caseCoverage).toBeGreaterThanOrEqual(0.93);
    expect(caseCoverage).toBeLessThanOrEqual(0.97);
    expect(turnCoverage).toBeLessThan(0.93);
  });
});
