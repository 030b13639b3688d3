/**
 * `retrace score`'s byte-level run reader and scorer (src/eval/ir/trec/compact.ts)
 * against the reference string path (readRun + scoreTrec): the same values,
 * counts, warnings, run id and error messages, on runs with what the fast path
 * must not get wrong: tied scores broken by docno bytes (non-ASCII too),
 * duplicates, queries split over the file, comments and blank lines, CRLF,
 * a BOM, tabs and extra fields, scores that are not plain decimals (1e-3, .5,
 * +2, 0x10), negative judgments, -J, -M, -l and -c.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DataValidationError } from "../../src/errors.js";
import {
  parseQrels,
  readRun,
  readRunCompact,
  scoreCompact,
  scoreTrec,
  type TrecOptions,
} from "../../src/eval/ir/trec.js";
import { mulberry32 } from "../../src/eval/stats/bootstrap.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "retrace-compact-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const DOCS = ["a", "b", "B", "é", "ü1", "z", "a1", "日本", "😀", "\uE000", "d10", "d9", "d100"];

function randomFiles(seed: number): { qrels: string; run: string } {
  const rng = mulberry32(seed);
  const int = (n: number) => Math.floor(rng() * n);
  const q: string[] = [];
  const r: string[] = ["# a comment", ""];
  for (let i = 0; i < 30; i++) {
    for (const d of DOCS) if (rng() < 0.5) q.push(`q${i} 0 ${d} ${int(5) - 1}`);
  }
  const scores = ["1", "2.5", "2.50", "1e0", ".5", "+2", "0x10", "-1.25", "3", "3.0"];
  for (let pass = 0; pass < 2; pass++) {
    for (let i = 0; i < 30; i++) {
      const n = int(12);
      for (let j = 0; j < n; j++) {
        const sep = rng() < 0.2 ? "\t" : " ";
        const tail = rng() < 0.1 ? " extra fields" : "";
        const eol = rng() < 0.2 ? "\r" : "";
        r.push(
          `q${i}${sep}Q0${sep}${DOCS[int(DOCS.length)]}${sep}${j}${sep}${scores[int(scores.length)]}${sep}tag${pass}${tail}${eol}`,
        );
      }
    }
  }
  return { qrels: `${q.join("\n")}\n`, run: `\uFEFF${r.join("\n")}` };
}

const OPTIONS: Array<Partial<TrecOptions>> = [
  {},
  { complete: true },
  { judgedOnly: true, depth: 5 },
  { relevanceLevel: 2, graded: true },
  { skipEmpty: true },
];

describe("the byte-level run reader and scorer equal the reference string path", () => {
  for (const seed of [1, 2, 3, 4]) {
    it(`seed ${seed}: every value, count, warning and the run id`, async () => {
      const { qrels, run } = randomFiles(seed);
      const file = path.join(dir, `r${seed}.run`);
      await writeFile(file, run);
      const judgments = parseQrels(qrels);
      const slow = await readRun(file);
      const fast = await readRunCompact(file);
      expect(fast.runId).toBe(slow.runId);
      for (const o of OPTIONS) {
        const options = { measures: ["all_trec"], ...o };
        const a = scoreTrec(judgments, slow, options);
        const b = scoreCompact(judgments, fast, options);
        expect(b).toEqual(a);
        expect(a.counts.duplicates).toBeGreaterThan(0);
      }
    });
  }

  it("bad lines: the same issues, with the same file, line and field", async () => {
    const text = "q1 Q0 a 1 1.5 t\nq1 Q0 b 2\nq1 Q0 c 3 abc t\n# fine\nq1 Q0 d 4 Infinity t\nq2 Q0 a 1 1e400 t\n";
    const file = path.join(dir, "bad.run");
    await writeFile(file, text);
    const issues = async (f: () => Promise<unknown>) => {
      try {
        await f();
      } catch (e) {
        expect(e).toBeInstanceOf(DataValidationError);
        return (e as DataValidationError).issues;
      }
      throw new Error("expected a DataValidationError");
    };
    const slow = await issues(() => readRun(file));
    expect(slow.map((i) => i.line)).toEqual([2, 3, 5, 6]);
    expect(await issues(() => readRunCompact(file))).toEqual(slow);
  });

  it("an empty run and a run of comments read as no lines, with no run id", async () => {
    const file = path.join(dir, "empty.run");
    await writeFile(file, "# nothing\n\n");
    const r = await readRunCompact(file);
    expect(r.lines).toBe(0);
    expect(r.runId).toBeNull();
  });

  it("two threads (a worker reads the second half): the same run, and issues numbered as one file's", async () => {
    const { run } = randomFiles(5);
    const file = path.join(dir, "two.run");
    await writeFile(file, run);
    const one = await readRunCompact(file, Number.MAX_SAFE_INTEGER);
    const two = await readRunCompact(file, 1);
    expect(two.lines).toBe(one.lines);
    expect(two).toEqual(one);
    const lines = Array.from({ length: 400 }, (_, i) => `q${i % 7} Q0 d${i} 1 ${i % 3} t`);
    lines[10] = "q1 Q0 bad";
    lines[390] = "q2 Q0 d 1 x t";
    const bad = path.join(dir, "two-bad.run");
    await writeFile(bad, `${lines.join("\n")}\n`);
    const err = await readRunCompact(bad, 1).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DataValidationError);
    expect((err as DataValidationError).issues.map((i) => [i.line, i.field])).toEqual([
      [11, undefined],
      [391, "score"],
    ]);
  });
});
