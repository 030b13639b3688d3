/**
 * Sharded sweeps end to end (docs/reliability.md, "Sharded sweeps"): the
 * real bin, one real Chroma server for the whole file (started once, the
 * shipped KB ingested once by the first run, every later run reading the
 * same collection), the real graph.
 *
 * `retrace merge` of `eval --shard 1/2` and `2/2` (run in parallel, as CI
 * jobs would), and of `1/3`, `2/3`, `3/3`, gives the report JSON of the
 * unsharded run byte for byte apart from `timings`, the same table apart
 * from the duration, and the same exit code and gate text.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { reportToJSON } from "../../src/eval/report/render.js";
import { withoutTimings } from "../../src/eval/report/timings.js";
import type { Report } from "../../src/eval/report/types.js";
import { useLocalChroma } from "../helpers/chroma.js";
import { runCli, type CliResult } from "../helpers/cli.js";

const local = useLocalChroma("shard");
const store = () => ["--store", local.server.url, "--config", '{"retrieval":{"embedder":"builtin"}}'];
// One floor that passes and one that cannot (nDCG@5 of 1 on every en turn): exit 1 with a mixed gate.
const GATE = ["--gate", "min-hit=0.5", "--gate", "min-ndcg=en=0.999"];
const file = (name: string) => path.join(local.dir, name);

const json = async (name: string) =>
  reportToJSON(withoutTimings(JSON.parse(await readFile(file(name), "utf8")) as Report));
/** The table with its one wall-clock figure (the sweep's duration, first line) blanked. */
// The table without its wall-clock lines: the header's duration, and the setup line (each shard prepared its own embedder and store; a merge has none).
const table = (r: CliResult) => r.stdout.replace(/^(retrace .*?)\s+\d+\.\d s$/m, "$1").replace(/^setup: .*\n/m, "");
const gateText = (r: CliResult) => r.stdout.slice(r.stdout.indexOf("\ngate: "));

async function runShards(n: number): Promise<CliResult[]> {
  const runs = Array.from({ length: n }, (_, i) =>
    runCli(["eval", ...store(), "--shard", `${i + 1}/${n}`, "--out", `json:${file(`shard-${i + 1}-of-${n}.json`)}`], {
      timeoutMs: 400_000,
    }),
  );
  return Promise.all(runs);
}

describe("retrace eval --shard + retrace merge", () => {
  it("merge(shards) equals the unsharded run: report JSON, table, gate and exit code", async () => {
    const full = await runCli(["eval", ...store(), ...GATE, "--out", `json:${file("full.json")}`], {
      timeoutMs: 400_000,
    });
    expect(full.exitCode, full.stderr).toBe(1);
    expect(full.stdout).toMatch(/gate: FAIL \(1 failure\)/);
    const reference = await json("full.json");
    const fullReport = JSON.parse(reference) as Report;
    expect(fullReport.turns.length).toBe(417); // the shipped dataset (`retrace check`)
    expect(fullReport.shard).toBeUndefined();

    for (const n of [2, 3]) {
      const shards = await runShards(n);
      const parts: Report[] = [];
      for (const [i, r] of shards.entries()) {
        expect(r.exitCode, r.stderr).toBe(0); // a shard is not gated
        expect(r.stdout).toContain(`PARTIAL REPORT: shard ${i + 1}/${n}`);
        expect(r.stdout).toContain(
          `gate: not evaluated (partial report of shard ${i + 1}/${n}; the merged report gates)`,
        );
        const part = JSON.parse(await readFile(file(`shard-${i + 1}-of-${n}.json`), "utf8")) as Report;
        expect(part.gate).toBeNull();
        expect(part.shard?.dataset.datasetHash).toBe(fullReport.run.datasetHash);
        expect(part.run.datasetHash).not.toBe(fullReport.run.datasetHash); // a partial report never claims the whole dataset
        parts.push(part);
      }
      // whole cases, each in one shard, turn counts balanced within one case (≤ 4 turns)
      const ids = parts.flatMap((p) => p.shard!.caseIds);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids.length).toBe(new Set(fullReport.turns.map((t) => t.caseId)).size);
      const loads = parts.map((p) => p.turns.length);
      expect(loads.reduce((a, b) => a + b, 0)).toBe(417);
      expect(Math.max(...loads) - Math.min(...loads)).toBeLessThanOrEqual(4);

      const files = Array.from({ length: n }, (_, i) => file(`shard-${n - i}-of-${n}.json`)); // any order
      const merged = await runCli(["merge", ...files, ...GATE, "--out", `json:${file(`merged-${n}.json`)}`]);
      expect(merged.exitCode, merged.stderr).toBe(full.exitCode);
      expect(merged.stderr).toContain(`merged ${n} shards: ${ids.length} cases, 417 turns`);
      expect(await json(`merged-${n}.json`)).toBe(reference);
      expect(gateText(merged)).toBe(gateText(full));
      expect(table(merged)).toBe(table(full));
    }
  }, 1_200_000);

  it("merge refuses shards of different runs and missing shards (exit 2, naming the file and the field)", async () => {
    // Uses the shard reports of the previous test (same file: tests run in order).
    const mixed = await runCli(["merge", file("shard-1-of-2.json"), file("shard-2-of-3.json")]);
    expect(mixed.exitCode).toBe(2);
    expect(mixed.stdout).toBe("");
    expect(mixed.stderr).toContain(
      `${file("shard-2-of-3.json")}: field \`shard.count\` differs from ${file("shard-1-of-2.json")}: 3 here, 2 there`,
    );
    const missing = await runCli(["merge", file("shard-1-of-3.json"), file("shard-3-of-3.json")]);
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toMatch(/missing shard 2\/3/);
    const notShard = await runCli(["merge", file("full.json"), file("shard-1-of-2.json")]);
    expect(notShard.exitCode).toBe(2);
    expect(notShard.stderr).toContain(`${file("full.json")}: field \`shard\` not a shard report`);
  }, 120_000);
});
