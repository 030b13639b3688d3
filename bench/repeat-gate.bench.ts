/**
 * The baseline gate of a graph that is not deterministic (issue 26; docs/ci.md,
 * "Baseline gates with repeats"): test/fixtures/graphs/flaky-agent.mjs finds
 * the gold with probability 0.7 per call (20 cases, 40 turns over kb-mini).
 *
 * - interval-aware: a baseline written with `--repeat 10` (graph seed 1000),
 *   then 20 reruns with `--repeat 10` and graph seeds 1..20, each gated with
 *   `--gate max-drop=0.05` (the one-sided 95% repeat-bootstrap test);
 * - single run: a baseline from one run (seed 1000), 20 single reruns
 *   (seeds 1..20) gated with `--gate max-drop=0.05` (point means);
 * - power: 5 reruns of a worse graph (p = 0.55, a true drop of 0.15) with
 *   `--repeat 10` against the p = 0.7 baseline: the gate should fail them.
 *
 * Prints the pass counts. Takes several minutes (a --repeat 10 run is 400
 * graph turns). Run: `npm run bench -- repeat-gate`.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { GraphEvalOptions } from "../src/app/graph-eval.js";
import { runGraphEval } from "../src/app/sources/registry.js";
import { writeBaseline } from "../src/eval/gate/baseline.js";

const BASE: GraphEvalOptions = {
  graph: "test/fixtures/graphs/flaky-agent.mjs",
  kb: "test/fixtures/kb-mini",
  cases: "test/fixtures/graphs/flaky-cases.jsonl",
};
const HIT = "retrieval_hit_at_k";
const SEEDS = Array.from({ length: 20 }, (_, i) => i + 1);

export async function run(): Promise<void> {
  const dir = await mkdtemp(path.join(tmpdir(), "retrace-repeat-gate-"));
  try {
    const out = (s: string) => process.stdout.write(`${s}\n`);
    for (const repeat of [10, 1]) {
      const file = path.join(dir, `baseline-${repeat}.json`);
      const b = (await runGraphEval({ ...BASE, repeat, configurable: { seed: 1000 } })).report;
      await writeBaseline(file, b);
      out(`baseline (--repeat ${repeat}, seed 1000): hit@k ${b.aggregates[HIT]!.mean.toFixed(3)}`);
      let passed = 0;
      const lines: string[] = [];
      for (const seed of SEEDS) {
        const r = (await runGraphEval({ ...BASE, repeat, configurable: { seed }, baseline: file, maxDrop: 0.05 }))
          .report;
        const c = r.gate!.checks!.find((x) => x.kind === "drop" && x.key === HIT && x.scope === "all")!;
        if (r.gate!.passed) passed++;
        lines.push(
          `seed ${seed}: hit@k ${r.aggregates[HIT]!.mean.toFixed(3)} drop ${c.observed!.toFixed(3)}${c.bound !== undefined ? ` bound ${c.bound.toFixed(3)}` : ""} ${r.gate!.passed ? "pass" : "FAIL"}`,
        );
      }
      out(
        `  ${repeat === 1 ? "single-run gate (point means)" : "interval-aware gate (--repeat 10)"}, --gate max-drop=0.05: passed ${passed} of ${SEEDS.length}`,
      );
      for (const l of lines) out(`    ${l}`);
      if (repeat === 10) {
        let failed = 0;
        for (const seed of SEEDS.slice(0, 5)) {
          const r = (
            await runGraphEval({ ...BASE, repeat, configurable: { seed, p: 0.55 }, baseline: file, maxDrop: 0.05 })
          ).report;
          if (!r.gate!.passed) failed++;
        }
        out(`  power: a graph with p = 0.55 (true drop 0.15), --repeat 10: failed ${failed} of 5`);
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
