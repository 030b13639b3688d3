/**
 * `retrace score`'s trec_eval 10 measures against ir_measures (PyPI, pinned in
 * .ci/run), on seeded random qrels and runs: graded judgments 0–3 and negative
 * ones (pooled but unjudged, infAP's case), many tied scores, judged queries
 * without results (empty rankings), run queries without judgments and judged
 * queries without a relevant document. scripts/trec-ir-measures.py computes
 * the values in Python (ir_measures → pytrec_eval, which embeds trec_eval
 * 9.0.8's C code) for three settings: default, judged-only (-J) and relevance
 * level 2 (-l2). Every per-query value must agree to 1e-12.
 *
 * Where the two differ on purpose, trec_eval 10 wins:
 * - unj_k (new in trec_eval 10) is the unjudged share of the top k divided by
 *   k; ir_measures' Judged@k divides the judged share by min(k, retrieved).
 *   The test checks unj_k = (1 − Judged@k) · min(k, num_ret) / k.
 * - ir_measures' Judged@k counts a document with a negative qrels value as
 *   judged and breaks score ties by docno ascending; trec_eval counts it as
 *   unjudged and breaks ties by docno descending: the script gives Judged the
 *   qrels without negative values and the run in trec_eval's order.
 * - a judged query without results: ir_measures fills every measure with 0;
 *   trec_eval -c computes them over an empty ranking, so num_rel stays the
 *   number of relevant documents (out.test.aqc: `num_rel 302 77`).
 * - rbp and rbp_resid are not in trec_eval 9.0.8 (nor in pytrec_eval); they are
 *   checked against trec_eval 10's own outputs (trec-conformance.test.ts).
 */
import { spawnSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseQrels, parseRun, scoreTrec, type TrecOptions } from "../../src/eval/ir/trec.js";
import { mulberry32 } from "../../src/eval/stats/bootstrap.js";
import { ROOT } from "../helpers/cli.js";

const SCRIPT = path.join(ROOT, "scripts", "trec-ir-measures.py");
type Values = Record<string, Record<string, Record<string, number>>>;

/** Seeded qrels and run text. */
function generate(seed: number): { qrels: string; run: string } {
  const rng = mulberry32(seed);
  const int = (n: number) => Math.floor(rng() * n);
  const qrels: string[] = [];
  const run: string[] = [];
  for (let q = 0; q < 60; q++) {
    const qid = `q${q}`;
    const pool = 40 + int(40);
    const judgedShare = rng();
    const noRelevant = q % 11 === 3; // judged, nothing relevant
    for (let d = 0; d < pool; d++) {
      if (rng() > judgedShare) continue;
      const u = rng();
      const rel = noRelevant ? 0 : u < 0.08 ? -1 : u < 0.55 ? 0 : u < 0.8 ? 1 : u < 0.93 ? 2 : 3;
      qrels.push(`${qid} 0 d${d} ${rel}`);
    }
    if (q % 13 === 5) continue; // judged, no results: an empty ranking
    const depth = 1 + int(45);
    const seen = new Set<number>();
    for (let i = 0; i < depth; i++) {
      const d = int(pool + 20); // some documents the qrels do not list
      if (seen.has(d)) continue;
      seen.add(d);
      // Few distinct scores: many ties, broken by docno as trec_eval does.
      run.push(`${qid} Q0 d${d} ${i + 1} ${(int(6) / 2).toFixed(1)} rnd`);
    }
  }
  run.push("unjudged Q0 d1 1 1.0 rnd");
  if (!qrels.some((l) => l.startsWith("q0 "))) qrels.push("q0 0 d0 1");
  return { qrels: `${qrels.join("\n")}\n`, run: `${run.join("\n")}\n` };
}

const CUTS = [5, 10, 20];
const cut = (name: string) => `${name}.${CUTS.join(",")}`;
const VARIANTS: Record<string, { options: Partial<TrecOptions>; measures: string[] }> = {
  default: {
    options: {},
    measures: [
      "map",
      "Rprec",
      "bpref",
      "infAP",
      "recip_rank",
      "num_ret",
      "num_rel",
      "num_rel_ret",
      ...["map_cut", "P", "recall", "ndcg_cut", "success", "unj"].map(cut),
    ],
  },
  judged: {
    options: { judgedOnly: true },
    measures: ["map", "Rprec", "recip_rank", ...["P", "recall", "ndcg_cut", "success"].map(cut)],
  },
  level2: {
    options: { relevanceLevel: 2 },
    measures: ["map", "Rprec", "bpref", "infAP", "recip_rank", "num_rel_ret", ...["P", "success"].map(cut)],
  },
};

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "retrace-irm-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function irMeasures(qrelsFile: string, runFile: string): Values {
  const r = spawnSync("python3", [SCRIPT, qrelsFile, runFile], { encoding: "utf8", maxBuffer: 64 << 20 });
  if (r.error !== undefined || r.status !== 0)
    throw new Error(
      `python3 ${SCRIPT} failed (status ${r.status}): ${r.error?.message ?? r.stderr}\n` +
        "ir_measures is installed by .ci/run: pip install ir_measures==0.4.3",
    );
  return JSON.parse(r.stdout) as Values;
}

describe("retrace score against ir_measures on random qrels and runs (ties, empty rankings, unjudged documents)", () => {
  for (const seed of [1, 2, 3]) {
    it(`seed ${seed}: every per-query value of every variant agrees`, async () => {
      const { qrels, run } = generate(seed);
      const qf = path.join(dir, `s${seed}.qrels`);
      const rf = path.join(dir, `s${seed}.run`);
      await writeFile(qf, qrels);
      await writeFile(rf, run);
      const theirs = irMeasures(qf, rf);
      const judgments = parseQrels(qrels);
      let compared = 0;
      for (const [variant, { options, measures }] of Object.entries(VARIANTS)) {
        // ir_measures scores a judged query without results as 0 (as trec_eval -c does): compare with -c.
        const s = scoreTrec(parseQrels(qrels), parseRun(run), { measures, graded: true, complete: true, ...options });
        const expected = theirs[variant] as Record<string, Record<string, number>>;
        // The same queries: every judged one (run queries without judgments are ignored by both).
        expect(s.perQuery.map((q) => q.qid).sort()).toEqual(Object.keys(expected).sort());
        for (const { qid, values } of s.perQuery) {
          const want = expected[qid] as Record<string, number>;
          for (const [name, value] of Object.entries(want)) {
            const m = /^judged_(\d+)$/.exec(name);
            if (m !== null) {
              // trec_eval 10's unj_k divides by k; ir_measures' Judged@k by min(k, retrieved).
              const k = Number(m[1]);
              const n = values.num_ret as number;
              const unj = values[`unj_${k}`] as number;
              expect(unj, `${variant} ${qid} unj_${k}`).toBeCloseTo(((1 - value) * Math.min(k, n)) / k, 12);
            } else if (name === "num_rel" && values.num_ret === 0) {
              // A judged query without results: ir_measures fills every measure with 0; trec_eval -c
              // still counts its relevant documents (out.test.aqc: num_rel 302 77), and 10 wins.
              const rel = [...(judgments.get(qid) as Map<string, number>).values()].filter((r) => r >= 1).length;
              expect(values.num_rel, `${variant} ${qid} num_rel`).toBe(rel);
              expect(value).toBe(0);
            }
            compared++;
          }
        }
      }
      expect(compared).toBeGreaterThan(3000);
    });
  }

  it("the random data has what the comparison is for: ties, empty rankings, unjudged and pooled-unjudged documents", () => {
    const { qrels, run } = generate(1);
    const s = scoreTrec(parseQrels(qrels), parseRun(run), { measures: ["unj.5", "num_ret"] });
    expect(s.counts.withoutResults).toBeGreaterThan(0);
    expect(s.counts.unjudged).toBeGreaterThan(0);
    expect(s.counts.withoutRelevant).toBeGreaterThan(0);
    expect(s.all.unj_5).toBeGreaterThan(0);
    expect(qrels).toMatch(/ -1\n/);
    const scores = run
      .split("\n")
      .filter((l) => l.startsWith("q1 "))
      .map((l) => l.split(" ")[4]);
    expect(new Set(scores).size).toBeLessThan(scores.length);
  });
});
