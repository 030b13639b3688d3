/**
 * `retrace eval` / `start` / `trace` end to end: the real bin, a real local
 * Chroma started by the command itself (one data dir shared by the file, so
 * the KB is ingested once), the real graph.
 *
 * Counts are those of the shipped data as `retrace check` prints them: 365
 * gold-bearing turns of 417 (the held-out cases of docs/holdout.md included).
 */
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reportToJSON } from "../../src/eval/report/render.js";
import { withoutTimings } from "../../src/eval/report/timings.js";
import type { Report } from "../../src/eval/report/types.js";
import { runCli } from "../helpers/cli.js";
import { chromaPids, closedPort, tempDir } from "../helpers/chroma.js";

let dir: string;
let cleanup: () => Promise<void>;
const store = () => ["--data-dir", path.join(dir, "chroma"), "--config", '{"retrieval":{"embedder":"builtin"}}'];

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir("eval-cli"));
});
afterAll(async () => {
  expect(chromaPids(dir)).toEqual([]); // every server the commands started is gone
  await cleanup();
});

describe("retrace eval, store-less", () => {
  it("reports retrieval and every answer-side key as not measured and exits 0", async () => {
    const r = await runCli(["eval", "--store", "none"]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/^hit@5\s+not measured \(no store\)/m);
    // the answerer refused every turn because nothing was retrieved: a side effect, not a measurement
    expect(r.stdout).toMatch(
      /^refusal_correctness( \(held-out\)| †)?\s+not measured \(no store: answered without retrieved context\)/m,
    );
    expect(r.stdout).toMatch(
      /^citation_coverage( \(held-out\)| †)?\s+not measured \(no store: answered without retrieved context\)/m,
    );
    expect(r.stdout).toContain("gate: PASS (no floor or baseline check was set)");
    expect(r.stderr).toContain("Store-less run");
  }, 300_000);

  it("refuses a retrieval floor it cannot check: exit 2, naming the metric", async () => {
    const r = await runCli(["eval", "--store", "none", "--gate", "min-recall=0.5"]);
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/`retrieval_recall_at_k` was not measured \(no store.*--gate min-recall/);
  }, 120_000);
});

describe("retrace eval, store-backed", () => {
  it("runs the sweep on a self-started Chroma and prints the splits with n", async () => {
    // --verbose: every table (the first screen without it: test/cli/first-screen.int.test.ts).
    const r = await runCli([
      "eval",
      "--verbose",
      ...store(),
      "--out",
      path.join(dir, "report.md"),
      "--out",
      `junit:${path.join(dir, "junit.xml")}`,
    ]);
    expect(r.stderr).toMatch(/Chroma local server ready at http:\/\/127\.0\.0\.1:\d+/);
    expect(r.exitCode).toBe(0);
    for (const header of [/^metric\s+all\s+golden\s+adversarial$/m, /^metric\s+en\s+es-419\s+pt-BR$/m])
      expect(r.stdout).toMatch(header);
    expect(r.stdout).toMatch(/^hit@5\s+\d\.\d{3} \[\d\.\d{3}, \d\.\d{3}\] n=365\s/m);
    expect(r.stdout).toMatch(/^recall@5 \(lower bound\)\s+\d\.\d{3} .* n=365/m);
    expect(r.stdout).toContain(
      "builtin-hashed-ngrams-384-v1 — built-in hashed character n-grams (lexical-fuzzy, not semantic",
    );
    // The tune/holdout split (docs/holdout.md): answer-side rows held out, a part table, the answerer named.
    expect(r.stdout).toMatch(/^answerer: rule-based, offline$/m);
    expect(r.stdout).toMatch(/^refusal_correctness \(held-out\)\s+\d\.\d{3} .* n=259\s/m); // 259 held-out turns (`retrace check`)
    expect(r.stdout).toMatch(/^metric\s+tune \(fitted on\)\s+holdout$/m);
    const md = await readFile(path.join(dir, "report.md"), "utf8");
    expect(md).toContain("# retrace report");
    const junit = await readFile(path.join(dir, "junit.xml"), "utf8");
    expect(junit.match(/<testcase /g)?.length).toBe(365); // no floor or baseline: no gate check, one testcase per gold-bearing turn
    expect(junit).not.toContain("<failure"); // the gate passed, so nothing is red; misses are in <system-out>
  }, 300_000);

  it("exits 1 naming the failed floors", async () => {
    const r = await runCli(["eval", ...store(), "--gate", "min-hit=1", "--gate", "min-recall=1"]);
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toMatch(/gate: FAIL/);
    expect(r.stdout).toMatch(/\[floor\] retrieval_hit_at_k 0\.\d{3} \(n=365\) is below the floor 1\.000/);
    expect(r.stdout).toMatch(/\[floor\] retrieval_recall_at_k 0\.\d{3} \(n=365\) is below the floor 1\.000/);
  }, 300_000);

  it("writes a baseline on request, passes against it, and exits 1 on a regression beyond the tolerance", async () => {
    const file = path.join(dir, "baseline.json");
    const made = await runCli(["eval", ...store(), "--baseline", file, "--update-baseline"]);
    expect(made.exitCode).toBe(0);
    const same = await runCli(["eval", ...store(), "--baseline", file, "--gate", "max-drop=auto"]);
    expect(same.exitCode).toBe(0);
    expect(same.stdout).toContain("gate: PASS");

    const baseline = JSON.parse(await readFile(file, "utf8"));
    const ndcg = baseline.aggregates.retrieval_ndcg_at_k.mean as number;
    expect(ndcg).toBeLessThan(0.9);
    baseline.aggregates.retrieval_ndcg_at_k.mean = ndcg + 0.1; // the baseline claims more than this run gives
    await writeFile(file, JSON.stringify(baseline));
    const worse = await runCli(["eval", ...store(), "--baseline", file, "--gate", "max-drop=0.02"]);
    expect(worse.exitCode).toBe(1);
    expect(worse.stdout).toMatch(/\[regression\] retrieval_ndcg_at_k/);
    expect(worse.stdout).not.toMatch(/\[regression\] retrieval_hit_at_k/);

    // A filtered run measured another dataset: comparing it with the full-set baseline is refused.
    const filtered = await runCli([
      "eval",
      ...store(),
      "--baseline",
      file,
      "--gate",
      "max-drop=auto",
      "--locale",
      "pt-BR",
    ]);
    expect(filtered.exitCode).toBe(2);
    expect(filtered.stderr).toMatch(/Cannot compare with the baseline: its `datasetHash`/);

    baseline.datasetHash = "0".repeat(64);
    await writeFile(file, JSON.stringify(baseline));
    const other = await runCli(["eval", ...store(), "--baseline", file, "--gate", "max-drop=auto"]);
    expect(other.exitCode).toBe(2);
    expect(other.stderr).toMatch(/Cannot compare with the baseline: its `datasetHash`/);
  }, 600_000);

  it("gives identical results at --concurrency 1 and 8", async () => {
    // Byte-identical apart from the one wall-clock section (docs/determinism.md).
    const strip = (json: string) => reportToJSON(withoutTimings(JSON.parse(json) as Report));
    const one = await runCli(["eval", ...store(), "--json", "--config", '{"run":{"concurrency":1}}']);
    const eight = await runCli(["eval", ...store(), "--json", "--config", '{"run":{"concurrency":8}}']);
    expect(one.exitCode).toBe(0);
    expect(eight.exitCode).toBe(0);
    const timings = JSON.parse(one.stdout).timings as Report["timings"];
    expect(timings!.durationMs).toBeGreaterThan(0);
    // At concurrency 1 the phases are sequential parts of the sweep's wall time.
    const { graph, evaluate, report } = timings!.phases!;
    expect(graph).toBeGreaterThan(0);
    expect(evaluate).toBeGreaterThan(0);
    expect(graph + evaluate + report).toBeLessThanOrEqual(timings!.durationMs + 1);
    expect(strip(eight.stdout)).toBe(strip(one.stdout));
  }, 600_000);

  it("gives the same report on 2 threads with the default (LSA) embedder, whose fitted state the worker reads back", async () => {
    const strip = (json: string) => reportToJSON(withoutTimings(JSON.parse(json) as Report));
    const lsa = ["--data-dir", path.join(dir, "chroma-lsa")];
    const one = await runCli(["eval", ...lsa, "--json", "--config", '{"run":{"workers":1}}']);
    const two = await runCli(["eval", ...lsa, "--json", "--config", '{"run":{"workers":2}}']);
    expect(one.exitCode, one.stderr).toBe(0);
    expect(two.exitCode, two.stderr).toBe(0);
    expect(JSON.parse(one.stdout).run.embedder).toMatch(/^lsa-/);
    expect(two.stderr).toMatch(/sweep: \d+ cases? on the main thread, \d+ cases? on worker 1/);
    expect(strip(two.stdout)).toBe(strip(one.stdout));
  }, 600_000);

  it("exits 3 with a clear message when CHROMA_URL points where nothing listens, and claims no result", async () => {
    const port = await closedPort();
    const r = await runCli(["eval", "--config", '{"retrieval":{"embedder":"builtin"}}'], {
      env: { CHROMA_URL: `http://127.0.0.1:${port}` },
    });
    expect(r.exitCode).toBe(3);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(`http://127.0.0.1:${port}`);
    expect(r.stderr).not.toContain("PASS");
  }, 60_000);
});

describe("retrace trace", () => {
  it("shows every stage of every turn of a multi-turn case, with the gold positions", async () => {
    const r = await runCli(["trace", "en-refund-009", ...store(), "--top", "3"]);
    expect(r.exitCode).toBe(0);
    const turns = r.stdout.split(/^=== /m).filter((s) => s.trim() !== "");
    expect(turns.length).toBe(3);
    for (const t of turns) {
      for (const stage of ["dense", "bm25", "fused", "parents"])
        expect(t).toMatch(new RegExp(`^  ${stage} \\(\\d+ listed`, "m"));
      expect(t).toMatch(
        /^ {2}(HIT |MISS) refund-timelines: .*(in dense|absent in dense).*(after fusion).*(retrieved at rank \d|cut at k=5|not retrieved by any branch)/m,
      );
      expect(t).toMatch(/^final top-5: \[/m);
      expect(t).toMatch(/^answer/m);
    }
    expect(turns[1]).toContain("(contextualized)");
  }, 60_000);

  it("exits 2 on an unknown case", async () => {
    const r = await runCli(["trace", "no-such-case", "--store", "none"]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('Expected `CASE_ID` to be the id of a case in kb/eval/cases.jsonl, got "no-such-case"');
  });
});
