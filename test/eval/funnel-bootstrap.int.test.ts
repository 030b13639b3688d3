/**
 * An independent check of a real report's stage funnel (issue 23, "How we will
 * check"): the real bin runs `retrace eval` on the shipped KB (memory store,
 * the corpus-fit LSA embedder, counterfactual retrieval on), and this file —
 * with its own presence rule, grouping, PRNG, case resampling and quantiles,
 * importing nothing from src/ — recomputes, from the report's per-turn data
 * (`queries.attribution`, `trace.goldPositions`, the hit@k result), every
 * stage's share overall and in every group of every split:
 *
 * - n, present and the number of cases exactly, and the share to float
 *   rounding (1e-12);
 * - the 95% interval within Monte Carlo error. Bootstrap replicates of a
 *   share are discrete (k / n), so the check is made in probability space:
 *   the reported bound must lie between this file's bootstrap quantiles at
 *   2.5% ± δ (and 97.5% ± δ), δ = 4 standard errors of an empirical quantile's
 *   level with the report's and this file's numbers of resamples.
 *
 * To check another report: RETRACE_FUNNEL_REPORT=/path/report.json npx vitest run test/eval/funnel-bootstrap.int.test.ts
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/chroma.js";

interface Turn {
  caseId: string;
  turn: number;
  kind: string;
  locale: string;
  part?: string;
  gold: string[];
  results: { key: string; score: number }[];
  trace?: { goldPositions: Record<string, Record<string, number | null>> };
  queries?: { attribution: string };
}
interface Stage {
  stage: string;
  n: number;
  present: number;
  nCases: number;
  share: number;
  ci95?: [number, number];
}
interface FunnelReport {
  turns: Turn[];
  bootstrap: { seed: number; samples: number; unit?: string };
  funnel: { stages: Stage[]; splits: Record<string, Record<string, Stage[]>> };
}

const TRACE_STAGES = ["dense", "bm25", "fused", "reranked", "parents"];
const MY_SAMPLES = 10_000;

/** The presence rule of docs/metrics.md ("Stage funnel"), written again here: stage → 1/0 for a gold-bearing turn. */
function presence(t: Turn): Map<string, number> {
  const out = new Map<string, number>();
  if (t.queries !== undefined) out.set("query", t.queries.attribution === "rewrite_lost_it" ? 0 : 1);
  if (t.trace !== undefined) {
    const byGold = t.gold.map((g) => t.trace!.goldPositions[g]).filter((p) => p !== undefined);
    for (const s of TRACE_STAGES) {
      if (!byGold.some((p) => s in p)) continue;
      out.set(s, byGold.some((p) => p[s] !== null && p[s] !== undefined) ? 1 : 0);
    }
  }
  const hit = t.results.find((r) => r.key === "retrieval_hit_at_k");
  if (hit !== undefined) out.set("final", hit.score > 0 ? 1 : 0);
  return out;
}

/** The groups a turn falls in, by split: turn position 1, 2, 3, 4+ (turn is 0-based), kind, locale, part. */
function groupsOf(t: Turn): Record<string, string | undefined> {
  return { position: t.turn >= 3 ? "4+" : String(t.turn + 1), kind: t.kind, locale: t.locale, part: t.part };
}

/** splitmix32: this file's own generator. */
function splitmix(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return ((z ^ (z >>> 16)) >>> 0) / 4294967296;
  };
}

/** Sorted bootstrap replicates of Σ present / Σ turns, resampling whole cases with replacement. */
function caseBootstrap(cases: { sum: number; n: number }[], samples: number, seed: number): Float64Array {
  const rand = splitmix(seed);
  const reps = new Float64Array(samples);
  for (let b = 0; b < samples; b++) {
    let sum = 0;
    let n = 0;
    for (let i = 0; i < cases.length; i++) {
      const c = cases[Math.floor(rand() * cases.length)]!;
      sum += c.sum;
      n += c.n;
    }
    reps[b] = sum / n;
  }
  return reps.sort();
}

/** Linear-interpolation quantile (type 7) of sorted values, level clamped to [0, 1]. */
function quantile(sorted: Float64Array, p: number): number {
  const h = (sorted.length - 1) * Math.min(1, Math.max(0, p));
  const lo = Math.floor(h);
  return sorted[lo]! + (h - lo) * (sorted[Math.min(lo + 1, sorted.length - 1)]! - sorted[lo]!);
}

let report: FunnelReport;
let cleanup: (() => Promise<void>) | undefined;

beforeAll(async () => {
  const given = process.env.RETRACE_FUNNEL_REPORT;
  let file = given;
  if (given === undefined || given === "") {
    const t = await tempDir("funnel-bootstrap");
    cleanup = t.cleanup;
    file = path.join(t.dir, "report.json");
    const r = await runCli([
      "eval",
      "--store",
      "memory",
      "--config",
      '{"retrieval":{"embedder":"lsa"}}',
      "--out",
      `json:${file}`,
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
  }
  report = JSON.parse(await readFile(file!, "utf8")) as FunnelReport;
}, 300_000);

afterAll(async () => {
  await cleanup?.();
});

describe("the stage funnel of a real report, recomputed independently", () => {
  it("has a funnel with the query stage, case-level resampling and every split", () => {
    expect(report.funnel.stages.map((s) => s.stage)).toEqual(
      expect.arrayContaining(["query", "dense", "bm25", "fused", "parents", "final"]),
    );
    expect(report.bootstrap.unit ?? "case").toBe("case");
    expect(Object.keys(report.funnel.splits.position!)).toEqual(["1", "2", "3", "4+"]);
  });

  it("reproduces every stage's n, present, cases and share exactly, overall and in every group of every split", () => {
    const groups: [string, string, Stage[]][] = [
      ["all", "all", report.funnel.stages],
      ...Object.entries(report.funnel.splits).flatMap(([split, gs]) =>
        Object.entries(gs).map(([g, rows]) => [split, g, rows] as [string, string, Stage[]]),
      ),
    ];
    let checked = 0;
    for (const [split, group, rows] of groups) {
      const turns = report.turns.filter((t) => t.gold.length > 0 && (split === "all" || groupsOf(t)[split] === group));
      const mine = new Map<string, { n: number; present: number; cases: Set<string> }>();
      for (const t of turns)
        for (const [stage, v] of presence(t)) {
          const m = mine.get(stage) ?? { n: 0, present: 0, cases: new Set<string>() };
          m.n += 1;
          m.present += v;
          m.cases.add(t.caseId);
          mine.set(stage, m);
        }
      expect(rows.map((r) => r.stage).sort(), `${split}=${group}`).toEqual([...mine.keys()].sort());
      for (const r of rows) {
        const m = mine.get(r.stage)!;
        expect({ where: `${split}=${group} ${r.stage}`, n: r.n, present: r.present, nCases: r.nCases }).toEqual({
          where: `${split}=${group} ${r.stage}`,
          n: m.n,
          present: m.present,
          nCases: m.cases.size,
        });
        expect(Math.abs(r.share - m.present / m.n)).toBeLessThan(1e-12);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(50);
  });

  it("reproduces every stage's 95% interval within Monte Carlo error (case resampling), overall and per turn position", () => {
    const level = (p: number) => 4 * Math.sqrt(p * (1 - p) * (1 / report.bootstrap.samples + 1 / MY_SAMPLES));
    const groups: [string, Stage[]][] = [
      ["all", report.funnel.stages],
      ...Object.entries(report.funnel.splits.position!),
    ];
    let checked = 0;
    for (const [group, rows] of groups) {
      const turns = report.turns.filter(
        (t) => t.gold.length > 0 && (group === "all" || groupsOf(t).position === group),
      );
      for (const r of rows) {
        expect(r.ci95, `${group} ${r.stage}`).toBeDefined();
        const byCase = new Map<string, { sum: number; n: number }>();
        for (const t of turns) {
          const v = presence(t).get(r.stage);
          if (v === undefined) continue;
          const c = byCase.get(t.caseId) ?? { sum: 0, n: 0 };
          c.sum += v;
          c.n += 1;
          byCase.set(t.caseId, c);
        }
        const reps = caseBootstrap([...byCase.values()], MY_SAMPLES, 20_231 + checked);
        const [lo, hi] = r.ci95!;
        const where = `position ${group}, stage ${r.stage}: reported [${lo}, ${hi}]`;
        expect(lo, where).toBeGreaterThanOrEqual(quantile(reps, 0.025 - level(0.025)) - 1e-12);
        expect(lo, where).toBeLessThanOrEqual(quantile(reps, 0.025 + level(0.025)) + 1e-12);
        expect(hi, where).toBeGreaterThanOrEqual(quantile(reps, 0.975 - level(0.975)) - 1e-12);
        expect(hi, where).toBeLessThanOrEqual(quantile(reps, 0.975 + level(0.975)) + 1e-12);
        checked++;
      }
    }
    expect(checked).toBe(
      report.funnel.stages.length +
        Object.values(report.funnel.splits.position!).reduce((s, rows) => s + rows.length, 0),
    );
  });
});
