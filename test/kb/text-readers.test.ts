/**
 * Every reader of a user's input file goes through the one text loader
 * (src/kb/text.ts; docs/reliability.md "One text loader"): for each, a
 * latin-1 byte is exit 2 naming the file, the byte offset and the line, and a
 * directory given as the file is exit 2 naming the path (never EISDIR, exit 70).
 */
import { mkdir, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { mkdtemp } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readAggregates } from "../../src/app/baseline.js";
import { readReport } from "../../src/app/report.js";
import { readBaseline } from "../../src/eval/gate/baseline.js";
import { loadBeirDataset } from "../../src/research/beir.js";
import { readRunSide } from "../../src/eval/gate/compare.js";
import { readQrels, readRun } from "../../src/eval/ir/trec.js";
import { readConfigFile } from "../../src/research/tune-config.js";
import { loadCatalog } from "../../src/kb/catalog.js";
import { loadSplit } from "../../src/kb/split.js";
import { forEachTextLine } from "../../src/kb/text.js";
import { readAnalyzerConfigFile } from "../../src/retrieval/analyzer.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "retrace-readers-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A file whose line 2 holds "caf" + the latin-1 byte of "é" (0xe9) at byte offset `first.length + 3`. */
const latin1 = (first: string, second: string) => Buffer.concat([Buffer.from(`${first}\n${second}caf`), Buffer.from([0xe9]), Buffer.from("\n")]);

/** What every reader must throw: exit 2, the file, the line and the byte offset (or the directory named as such). */
async function expectIssue(p: Promise<unknown>, file: string, message: string | RegExp): Promise<void> {
  const e = (await p.then(
    () => null,
    (x: unknown) => x,
  )) as { exitCode?: number; message?: string } | null;
  expect(e, `${file} should be refused`).not.toBeNull();
  expect(e?.exitCode).toBe(2);
  if (typeof message === "string") expect(e?.message).toContain(`${file}${message}`);
  else expect(e?.message).toMatch(message);
}

const READERS: Array<{ name: string; first: string; second: string; read: (file: string) => Promise<unknown> }> = [
  { name: "split file (loadSplit)", first: "{", second: '"tune": ["', read: (f) => loadSplit(f, []) },
  { name: "catalog (loadCatalog)", first: "a\ten", second: "", read: (f) => loadCatalog(f) },
  { name: "TREC qrels (readQrels)", first: "q1 0 d1 1", second: "q1 0 ", read: (f) => readQrels(f) },
  { name: "TREC run (readRun)", first: "q1 Q0 d1 1 0.9 t", second: "q1 Q0 ", read: (f) => readRun(f) },
  { name: "baseline (readBaseline)", first: "{", second: '"x": "', read: (f) => readBaseline(f) },
  { name: "report (retrace report/export readReport)", first: "{", second: '"x": "', read: (f) => readReport(f) },
  { name: "report or baseline (retrace compare readRunSide)", first: "{", second: '"x": "', read: (f) => readRunSide(f) },
  { name: "baseline or report (retrace baseline floors)", first: "{", second: '"x": "', read: (f) => readAggregates(f) },
  { name: "config file (readConfigFile)", first: "{", second: '"x": "', read: (f) => readConfigFile(f) },
  { name: "analyzer config (readAnalyzerConfigFile)", first: "{", second: '"x": "', read: async (f) => readAnalyzerConfigFile(f) },
];

describe.each(READERS)("$name", ({ name, first, second, read }) => {
  it("a latin-1 byte → exit 2 with the file, line 2 and the byte offset", async () => {
    const file = path.join(dir, `${name.replace(/\W+/g, "-")}.latin1`);
    await writeFile(file, latin1(first, second));
    const offset = Buffer.byteLength(`${first}\n${second}caf`);
    await expectIssue(read(file), file, `:2: invalid UTF-8 at byte offset ${offset} (byte 0xe9)`);
  });

  it("a directory given as the file → exit 2 naming the path", async () => {
    const d = path.join(dir, `${name.replace(/\W+/g, "-")}.dir`);
    await mkdir(d, { recursive: true });
    await expectIssue(read(d), d, ": expected a regular text file, got a directory");
  });
});

describe("BEIR dataset (loadBeirDataset)", () => {
  const beir = async (name: string) => {
    const d = path.join(dir, name);
    await mkdir(path.join(d, "qrels"), { recursive: true });
    await writeFile(path.join(d, "corpus.jsonl"), '{"_id": "d1", "title": "", "text": "x"}\n');
    await writeFile(path.join(d, "queries.jsonl"), '{"_id": "q1", "text": "x"}\n');
    await writeFile(path.join(d, "qrels", "test.tsv"), "query-id\tcorpus-id\tscore\nq1\td1\t1\n");
    return d;
  };
  it("a latin-1 byte in queries.jsonl → exit 2 with the file, line and offset", async () => {
    const d = await beir("beir-latin1");
    const file = path.join(d, "queries.jsonl");
    await writeFile(file, latin1('{"_id": "q1", "text": "x"}', '{"_id": "q2", "text": "'));
    await expectIssue(loadBeirDataset(d), file, `:2: invalid UTF-8 at byte offset ${Buffer.byteLength('{"_id": "q1", "text": "x"}\n{"_id": "q2", "text": "caf')}`);
  });
  it("a directory as qrels/test.tsv → exit 2 naming the path", async () => {
    const d = await beir("beir-dir");
    const file = path.join(d, "qrels", "test.tsv");
    await rm(file);
    await mkdir(file);
    await expectIssue(loadBeirDataset(d), file, ": expected a regular text file, got a directory");
  });
});

describe("forEachTextLine (the streamed form, for TREC files larger than memory should hold)", () => {
  const CHUNK = 1 << 20; // the read size: sequences may straddle it
  it("a multi-byte character across the chunk boundary is fine; a bad byte past it has its true offset and line", async () => {
    const file = path.join(dir, "big.run");
    const line = "x".repeat(99) + "\n"; // 100 bytes
    const head = line.repeat(Math.floor((CHUNK - 1) / 100)); // ends 76 bytes before the boundary
    const pad = "y".repeat(CHUNK - 1 - head.length); // "€" (3 bytes) starts 1 byte before the boundary
    const good = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(`${head}${pad}€\nlast\n`)]);
    await writeFile(file, good);
    const lines: string[] = [];
    await forEachTextLine(file, (l) => lines.push(l));
    expect(lines.length).toBe(head.length / 100 + 2);
    expect(lines[0]).toBe("x".repeat(99)); // BOM removed
    expect(lines.at(-2)).toBe(`${pad}€`);
    expect(lines.at(-1)).toBe("last");

    const bad = Buffer.concat([good, Buffer.from("ok\nab"), Buffer.from([0xe9]), Buffer.from("\n")]);
    await writeFile(file, bad);
    const at = good.length + 5;
    const lineNo = head.length / 100 + 4; // the head's lines, the €-line, "last", "ok", then this one
    await expect(forEachTextLine(file, () => {})).rejects.toThrow(`${file}:${lineNo}: invalid UTF-8 at byte offset ${at} (byte 0xe9)`);
  });

  it("a line longer than several chunks, BOM first, is one line; a bad byte deep inside it has its file offset and line", async () => {
    const file = path.join(dir, "long.jsonl");
    const long = "é".repeat(CHUNK + 7) + "z"; // 2 bytes a character: 2 MiB and more, a character straddling every boundary
    const good = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(`${long}\nshort\n\n${long}`)]);
    await writeFile(file, good);
    const lines: string[] = [];
    await forEachTextLine(file, (l) => lines.push(l));
    expect(lines).toEqual([long, "short", "", long]); // the last line has no LF

    const at = 3 + Buffer.byteLength(`${long}\nshort\n\n`) + CHUNK; // a lead byte of the last line, past a chunk boundary
    const bad = Buffer.from(good);
    bad[at] = 0xff;
    await writeFile(file, bad);
    await expect(forEachTextLine(file, () => {})).rejects.toThrow(`${file}:4: invalid UTF-8 at byte offset ${at} (byte 0xff)`);
  });

  it("a sequence cut short by the end of the file is invalid", async () => {
    const file = path.join(dir, "cut.run");
    await writeFile(file, Buffer.concat([Buffer.from("a\nb"), Buffer.from([0xe2, 0x82])]));
    await expect(forEachTextLine(file, () => {})).rejects.toThrow(`${file}:2: invalid UTF-8 at byte offset 3`);
  });
});
