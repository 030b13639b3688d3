/**
 * `retrace score -q --graded` against trec_eval on the same 3,000,000-line run
 * (3,000 queries × 1,000 documents, graded qrels; metrics.bench.ts's seeded
 * generator), timed in one run with the pairs interleaved (the order flips at
 * each pair, so a change in the machine's load falls on both), the outputs
 * compared byte for byte. Prints each pair's wall, CPU (user + sys) and peak
 * memory (max RSS, from GNU time when /usr/bin/time exists) and the median
 * ratios retrace/trec_eval (docs/metrics.md, "Speed"; the target: wall ≤ 0.5×,
 * memory ≤ 1.5×).
 *
 * trec_eval: the binary at $TREC_EVAL, else the Linux x86-64 build of
 * trec_eval that Maven Central's uk.ac.gla.dcs.terrierteam:jtreceval:0.0.5
 * ships (trec_eval 9.0.4, whose recip_rank, P, recall, ndcg_cut and success
 * are trec_eval 10's), fetched with `mvn dependency:copy` on first use into
 * bench/.cache/. The measures: trec_eval -q -m recip_rank -m P.5,10
 * -m recall.5,10 -m ndcg_cut.5,10 -m success.5,10 (retrace score's default).
 * Runs `node bin/retrace.mjs`: build first (`npm run build`) or tsx's start-up
 * is timed too. Sizes: RETRACE_BENCH_QUERIES, RETRACE_BENCH_DOCS; pairs:
 * RETRACE_BENCH_PAIRS (default 5).
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, copyFile, mkdir, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { generate } from "./metrics.bench.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const CACHE = path.join(ROOT, "bench", ".cache");
const JTRECEVAL = "uk.ac.gla.dcs.terrierteam:jtreceval:0.0.5";
const MEASURES = ["-m", "recip_rank", "-m", "P.5,10", "-m", "recall.5,10", "-m", "ndcg_cut.5,10", "-m", "success.5,10"];

function envInt(name: string, fallback: number): number {
  const raw = process.env[name];
  const n = raw === undefined ? Number.NaN : Number(raw);
  return Number.isInteger(n) && n > 0 ? n : fallback;
}

/** A trec_eval binary: $TREC_EVAL, or jtreceval's Linux build from Maven Central (cached). */
async function trecEval(): Promise<string | null> {
  const fromEnv = process.env.TREC_EVAL;
  if (fromEnv !== undefined && fromEnv !== "") return fromEnv;
  const bin = path.join(CACHE, "trec_eval-linux-amd64");
  if (existsSync(bin)) return bin;
  if (process.platform !== "linux" || process.arch !== "x64") return null;
  await mkdir(CACHE, { recursive: true });
  const tmp = await mkdtemp(path.join(os.tmpdir(), "retrace-jtreceval-"));
  try {
    process.stderr.write(`fetching trec_eval (${JTRECEVAL}) from Maven Central into ${CACHE} ...\n`);
    const mvn = spawnSync("mvn", ["-q", "dependency:copy", `-Dartifact=${JTRECEVAL}`, `-DoutputDirectory=${tmp}`], {
      stdio: ["ignore", "inherit", "inherit"],
    });
    if (mvn.status !== 0) return null;
    const unzip = spawnSync("unzip", [
      "-o",
      "-q",
      path.join(tmp, "jtreceval-0.0.5.jar"),
      "trec_eval-linux-amd64",
      "-d",
      tmp,
    ]);
    if (unzip.status !== 0) return null;
    await copyFile(path.join(tmp, "trec_eval-linux-amd64"), bin);
    await chmod(bin, 0o755);
    return bin;
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

interface Timed {
  wall: number;
  cpu: number | null;
  maxRssMiB: number | null;
  stdout: string;
}

const GNU_TIME = existsSync("/usr/bin/time") ? "/usr/bin/time" : null;

/** Run a command, its stdout kept, timed (wall here; CPU and max RSS from GNU time's report on stderr). */
function timed(cmd: string, args: string[]): Promise<Timed> {
  return new Promise((resolve, reject) => {
    const [file, argv] = GNU_TIME === null ? [cmd, args] : [GNU_TIME, ["-f", "@@time %U %S %M", cmd, ...args]];
    const t0 = performance.now();
    const child = spawn(file, argv, { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, NO_COLOR: "1" } });
    const out: Buffer[] = [];
    let err = "";
    child.stdout.on("data", (d: Buffer) => out.push(d));
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => {
      const wall = (performance.now() - t0) / 1000;
      if (code !== 0) return reject(new Error(`${cmd} exited ${code}: ${err}`));
      const m = /@@time (\S+) (\S+) (\d+)/.exec(err);
      resolve({
        wall,
        cpu: m === null ? null : Number(m[1]) + Number(m[2]),
        maxRssMiB: m === null ? null : Number(m[3]) / 1024,
        stdout: Buffer.concat(out).toString("utf8"),
      });
    });
  });
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};
const f2 = (x: number | null) => (x === null ? "–" : x.toFixed(2));

export async function run(): Promise<void> {
  const queries = envInt("RETRACE_BENCH_QUERIES", 3_000);
  const docs = envInt("RETRACE_BENCH_DOCS", 1_000);
  const pairs = envInt("RETRACE_BENCH_PAIRS", 5);
  const te = await trecEval();
  if (te === null) {
    process.stdout.write(
      `no trec_eval: set TREC_EVAL=/path/to/trec_eval (Maven Central's ${JTRECEVAL} could not be fetched or has no build for this platform)\n`,
    );
    return;
  }
  if (!existsSync(path.join(ROOT, "dist", "cli", "run.js")))
    process.stdout.write(
      "note: dist/ is not built, so retrace runs through tsx and its start-up is timed (npm run build)\n",
    );
  const dir = await mkdtemp(path.join(os.tmpdir(), "retrace-bench-vs-trec-eval-"));
  try {
    const files = await generate(dir, queries, docs);
    process.stdout.write(
      `run: ${(queries * docs).toLocaleString("en-US")} lines (${queries.toLocaleString("en-US")} queries × ${docs.toLocaleString("en-US")} documents), graded qrels; ${pairs} interleaved pairs; load average ${os
        .loadavg()
        .map((x) => x.toFixed(1))
        .join(" ")}\n`,
    );
    const retraceArgs = [path.join(ROOT, "bin", "retrace.mjs"), "score", "-q", "--graded", files.qrels, files.run];
    const trecArgs = ["-q", ...MEASURES, files.qrels, files.run];
    const rows: Array<{ r: Timed; t: Timed }> = [];
    let identical = true;
    for (let i = 0; i < pairs; i++) {
      let r: Timed;
      let t: Timed;
      if (i % 2 === 0) {
        r = await timed(process.execPath, retraceArgs);
        t = await timed(te, trecArgs);
      } else {
        t = await timed(te, trecArgs);
        r = await timed(process.execPath, retraceArgs);
      }
      if (r.stdout !== t.stdout) identical = false;
      rows.push({ r, t });
      process.stdout.write(
        `  pair ${i + 1} (${i % 2 === 0 ? "retrace first" : "trec_eval first"}): wall ${f2(r.wall)} / ${f2(t.wall)} s = ${f2(r.wall / t.wall)}×; ` +
          `cpu ${f2(r.cpu)} / ${f2(t.cpu)} s; max RSS ${f2(r.maxRssMiB)} / ${f2(t.maxRssMiB)} MiB\n`,
      );
    }
    const ratio = (pick: (x: Timed) => number | null) => {
      const xs = rows.map(({ r, t }) => {
        const a = pick(r);
        const b = pick(t);
        return a === null || b === null ? Number.NaN : a / b;
      });
      return xs.some(Number.isNaN) ? null : median(xs);
    };
    const lines = rows[0]?.r.stdout.split("\n").length ?? 0;
    process.stdout.write(
      [
        `output: ${identical ? "identical bytes" : "DIFFERENT"} (${(lines - 1).toLocaleString("en-US")} rows, every pair)`,
        `median retrace/trec_eval: wall ${f2(ratio((x) => x.wall))}× (target ≤ 0.5), cpu ${f2(ratio((x) => x.cpu))}×, max RSS ${f2(ratio((x) => x.maxRssMiB))}× (target ≤ 1.5)`,
        `trec_eval: ${te}${process.env.TREC_EVAL === undefined ? ` (${JTRECEVAL}, trec_eval 9.0.4)` : ""}`,
        "",
      ].join("\n"),
    );
    if (!identical) process.exitCode = 1;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
