/**
 * `retrace score` at trec_eval scale: a seeded synthetic run of 10,000 queries
 * × 1,000 documents (10 M lines) and its qrels are written to a temp dir, then
 * scored (k = 5,10) twice:
 *   1. in process: streaming parse of both files (readQrels / readRun), then
 *      scoreTrec and the text rendering, each timed;
 *   2. end to end: `node bin/retrace.mjs score --qrels … --run …` in a child
 *      process (tsx loader start-up included).
 * Prints wall times, queries per second and documents per second. Sizes can be
 * lowered with RETRACE_BENCH_QUERIES / RETRACE_BENCH_DOCS for a quick look.
 *
 * Synthetic data (mulberry32, seed 7): query q retrieves docs
 * `doc{(q·7919 + i·104729) mod 5,000,000}` for i < 1000 (distinct within a
 * query), score `1000 − i` plus noise rounded to 0.01 (so scores tie now and
 * then); the rank column is i+1. Qrels: 10 relevant documents per query drawn
 * from the first 2,000 of the same sequence, skewed to the top (position
 * ⌊2000·u³⌋, u uniform: about 80% of them retrieved),
 * graded 1–3, plus 10 judged non-relevant.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createWriteStream } from "node:fs";
import { mkdtemp, rm, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { mulberry32 } from "../src/eval/stats/bootstrap.js";
import { formatTrecText, readQrels, readRun, scoreTrec } from "../src/eval/ir/trec.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const BIN = path.join(ROOT, "bin", "retrace.mjs");
const SEED = 7;
const KS = [5, 10];

function envInt(name: string, fallback: number): number {
  const raw = process.env[name];
  const n = raw === undefined ? Number.NaN : Number(raw);
  return Number.isInteger(n) && n > 0 ? n : fallback;
}

const docOf = (q: number, i: number) => `doc${(q * 7919 + i * 104729) % 5_000_000}`;

/** Write through a stream, honouring back-pressure, in ~1 MB blocks. */
async function writeLines(
  file: string,
  produce: (emit: (block: string) => Promise<void>) => Promise<void>,
): Promise<void> {
  const out = createWriteStream(file);
  await produce(async (block) => {
    if (!out.write(block)) await once(out, "drain");
  });
  out.end();
  await once(out, "finish");
}

export async function generate(dir: string, queries: number, docs: number): Promise<{ qrels: string; run: string }> {
  const rng = mulberry32(SEED);
  const qrels = path.join(dir, "bench.qrels");
  const run = path.join(dir, "bench.run");
  await writeLines(run, async (emit) => {
    let block = "";
    for (let q = 0; q < queries; q++) {
      for (let i = 0; i < docs; i++) {
        const score = (docs - i + Math.round(rng() * 100) / 100).toFixed(2);
        block += `Q${q} Q0 ${docOf(q, i)} ${i + 1} ${score} bench\n`;
      }
      if (block.length > 1 << 20) {
        await emit(block);
        block = "";
      }
    }
    await emit(block);
  });
  await writeLines(qrels, async (emit) => {
    let block = "";
    for (let q = 0; q < queries; q++) {
      const picked = new Set<number>();
      while (picked.size < 20) picked.add(Math.floor(rng() ** 3 * 2 * docs)); // skewed to the top
      let n = 0;
      for (const i of picked) block += `Q${q} 0 ${docOf(q, i)} ${n++ < 10 ? 1 + Math.floor(rng() * 3) : 0}\n`;
      if (block.length > 1 << 20) {
        await emit(block);
        block = "";
      }
    }
    await emit(block);
  });
  return { qrels, run };
}

function runCli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, NO_COLOR: "1" },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

const secs = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const rate = (n: number, ms: number) => Math.round(n / (ms / 1000)).toLocaleString("en-US");

export async function run(): Promise<void> {
  const queries = envInt("RETRACE_BENCH_QUERIES", 10_000);
  const docs = envInt("RETRACE_BENCH_DOCS", 1_000);
  const dir = await mkdtemp(path.join(os.tmpdir(), "retrace-bench-trec-"));
  try {
    process.stderr.write(
      `generating ${queries.toLocaleString("en-US")} queries × ${docs.toLocaleString("en-US")} docs in ${dir} ...\n`,
    );
    let t = performance.now();
    const files = await generate(dir, queries, docs);
    const genMs = performance.now() - t;
    const runBytes = (await stat(files.run)).size;
    process.stdout.write(
      `synthetic run: ${(queries * docs).toLocaleString("en-US")} lines, ${(runBytes / 2 ** 20).toFixed(0)} MiB (generated in ${secs(genMs)}); qrels: ${(queries * 20).toLocaleString("en-US")} judgments\n`,
    );

    // 1. In process.
    const heap0 = process.memoryUsage().heapUsed;
    t = performance.now();
    const qrels = await readQrels(files.qrels);
    const tQrels = performance.now() - t;
    t = performance.now();
    const runData = await readRun(files.run);
    const tRun = performance.now() - t;
    const heapParsed = process.memoryUsage().heapUsed;
    t = performance.now();
    const scores = scoreTrec(qrels, runData, { ks: KS });
    const tScore = performance.now() - t;
    t = performance.now();
    const text = formatTrecText(scores, { perQuery: true });
    const tFormat = performance.now() - t;
    const total = tQrels + tRun + tScore + tFormat;
    process.stdout.write(
      [
        "in process (readQrels + readRun streaming, scoreTrec, formatTrecText -q):",
        `  read qrels ${secs(tQrels)}, read run ${secs(tRun)} (${rate(queries * docs, tRun)} lines/s), score ${secs(tScore)}, format ${secs(tFormat)} (${text.length.toLocaleString("en-US")} chars)`,
        `  total ${secs(total)}: ${rate(queries, total)} queries/s, ${rate(queries * docs, total)} docs/s; scoring alone ${rate(queries, tScore)} queries/s`,
        `  heap after parsing ≈ ${((heapParsed - heap0) / 2 ** 20).toFixed(0)} MiB more than before (no forced GC); ${scores.numQueries} queries evaluated, all ndcg_cut_10 = ${scores.all.ndcg_cut_10?.toFixed(4)}`,
        "",
      ].join("\n"),
    );

    // 2. End to end through the CLI.
    t = performance.now();
    const r = await runCli(["score", "--qrels", files.qrels, "--run", files.run, "-k", KS.join(",")]);
    const tCli = performance.now() - t;
    if (r.code !== 0) throw new Error(`retrace score exited ${r.code}: ${r.stderr}`);
    const cliAll = r.stdout.trimEnd().split("\n");
    const inProcAll = formatTrecText(scores).trimEnd().split("\n");
    const same = cliAll.length === inProcAll.length && cliAll.every((l, i) => l === inProcAll[i]);
    process.stdout.write(
      [
        "end to end (`node bin/retrace.mjs score`, a child process, tsx start-up included):",
        `  wall ${secs(tCli)}: ${rate(queries, tCli)} queries/s; output ${same ? "identical to" : "DIFFERENT from"} the in-process result`,
        ...cliAll.map((l) => `  ${l}`),
        "",
      ].join("\n"),
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
