/**
 * Same data, configuration and seed → byte-identical report JSON apart from
 * the `timings` section (docs/determinism.md), at a scale where Chroma's
 * approximate HNSW search used to change results: the shipped KB plus 2,000
 * synthetic cards (8,000+ chunks). Two runs of the real CLI, kept lean:
 *   A: data dir A (fresh ingest), --concurrency 1
 *   B: data dir B (a second, independent ingest of the same chunks), --concurrency 8,
 *      --workers 2 (this thread and a worker thread over the shared vectors)
 * Two HNSW graphs built from the same chunks answer differently (see the
 * dense-recall bench), and concurrency and worker threads must change nothing either.
 */
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reportToJSON } from "../../src/eval/report/render.js";
import { withoutTimings } from "../../src/eval/report/timings.js";
import type { Report } from "../../src/eval/report/types.js";
import { chromaPids, tempDir } from "../helpers/chroma.js";
import { runCli } from "../helpers/cli.js";
import { SECTIONS_PER_SYNTHETIC_CARD, syntheticKb } from "../helpers/synthetic-kb.js";

const CARDS = 2_000;

describe("eval at 8,000+ chunks", () => {
  let kb: { dir: string; cleanup: () => Promise<void> };
  let tmp: { dir: string; cleanup: () => Promise<void> };
  beforeAll(async () => {
    kb = await syntheticKb(CARDS);
    tmp = await tempDir("determinism");
  });
  afterAll(async () => {
    expect(chromaPids(tmp.dir)).toEqual([]);
    await kb?.cleanup();
    await tmp?.cleanup();
  });

  it("gives byte-identical reports across runs, ingests, concurrency and worker threads", async () => {
    const run = (dataDir: string, concurrency: number, workers: number) =>
      runCli(
        [
          "eval",
          "--kb",
          kb.dir,
          "--config",
          '{"retrieval":{"embedder":"builtin"}}',
          "--data-dir",
          path.join(tmp.dir, dataDir),
          "--json",
          "--config",
          JSON.stringify({ run: { concurrency: String(concurrency) } }),
          "--config",
          JSON.stringify({ run: { workers: String(workers) } }),
        ],
        { timeoutMs: 400_000 },
      );
    const a1 = await run("A", 1, 1);
    expect(a1.exitCode, a1.stderr).toBe(0);
    const b8 = await run("B", 8, 2);
    expect(b8.exitCode, b8.stderr).toBe(0);

    const chunks = Number(/collection \S+: (\d+) chunks/.exec(a1.stderr)?.[1]);
    expect(chunks).toBeGreaterThanOrEqual(8_000);
    expect(chunks).toBeGreaterThanOrEqual(CARDS * SECTIONS_PER_SYNTHETIC_CARD);
    expect(b8.stderr).toMatch(/ingested \d+ chunks/);

    const strip = (json: string) => reportToJSON(withoutTimings(JSON.parse(json) as Report));
    const reference = strip(a1.stdout);
    expect(JSON.parse(reference).turns.length).toBeGreaterThan(200);
    expect(reference).not.toMatch(/"(started|durationMs|timingsMs)"/);
    expect(strip(b8.stdout)).toBe(reference);
  }, 1_200_000);
});
