/**
 * The `--graph` sweep at scale (docs/throughput.md, docs/reliability.md;
 * issue 21 items 3 and 9), over test/fixtures/graphs/misbehaving-agent.mjs:
 *
 * 1. Concurrency: `slowGraph`, whose search node waits 50 ms per turn as a
 *    node awaiting an LLM would (I/O-bound), loaded with `loadGraph` and run
 *    by `runGraphSweep` over RETRACE_BENCH_GRAPH_CASES (default 64) two-turn
 *    cases at --concurrency 1, 2, 4, 8, 16 (RETRACE_BENCH_GRAPH_CASES=0
 *    skips it; RETRACE_BENCH_GRAPH_WAIT_MS sets the wait). Printed: wall time, turns/s,
 *    speed-up over concurrency 1 and its efficiency (speed-up / concurrency),
 *    and whether the turn reports are identical to those at concurrency 1.
 *    Also printed: the cost of a turn outside the wait (the same sweep with
 *    no wait), which caps the speed-up on one core at (wait + cost) / cost.
 *    Target: near-linear speed-up up to 16, identical reports (printed,
 *    never asserted).
 * 2. Memory: `bigState`, whose state carries RETRACE_BENCH_STATE_MB MB
 *    (default 5) on every turn, through `retrace eval --graph` over
 *    RETRACE_BENCH_STATE_CASES (default 180) two-turn cases, each run its own
 *    process under /usr/bin/time for the peak RSS, at --concurrency 1 and 4
 *    (RETRACE_BENCH_STATE_CONCURRENCY, e.g. "1"; RETRACE_BENCH_STATE_CASES=0 skips it).
 *    Finished cases' threads are deleted, so memory is bounded by the cases
 *    in flight, not the cases run. Target: < 1 GB at --concurrency 1.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { retrievalEvaluator } from "../src/eval/measures/evaluators.js";
import { loadGraph, runGraphSweep } from "../src/eval/sweep/external-graph.js";
import type { EvalCase } from "../src/kb/types.js";
import { REPO_ROOT } from "./lib/eval-set.js";
import { print, printTable } from "./lib/report.js";

const GRAPH = path.join(REPO_ROOT, "test", "fixtures", "graphs", "misbehaving-agent.mjs");
const MINI_KB = path.join(REPO_ROOT, "test", "fixtures", "kb-mini");
/** The wait of the slow node per turn, ms (RETRACE_BENCH_GRAPH_WAIT_MS, default 50). */
const SLOW_MS = Number(process.env.RETRACE_BENCH_GRAPH_WAIT_MS ?? 50);

function envInt(name: string, fallback: number): number {
  const raw = process.env[name];
  const n = raw === undefined || raw === "" ? fallback : Number(raw);
  if (!Number.isInteger(n) || n < 0)
    throw new Error(`${name} must be a non-negative integer, got ${JSON.stringify(raw)}`);
  return n;
}

/** Two-turn cases over the kb-mini cards (the fixture's retriever finds each). */
function cases(n: number): EvalCase[] {
  const turns = [
    { user: "how do I lock my card?", must_cite_one_of: ["card-freeze"], expect: "answer" as const },
    { user: "and when does my refund arrive?", must_cite_one_of: ["refund-timelines"], expect: "answer" as const },
    { user: "can I freeze my card in the app?", must_cite_one_of: ["card-freeze"], expect: "answer" as const },
  ];
  return Array.from({ length: n }, (_, i) => ({
    id: `bench-${String(i).padStart(4, "0")}`,
    line: i + 1,
    locale: "en",
    kind: "golden" as const,
    turns: [turns[i % 3]!, turns[(i + 1) % 3]!],
  }));
}

async function concurrency(): Promise<void> {
  const n = envInt("RETRACE_BENCH_GRAPH_CASES", 64);
  if (n === 0) return;
  process.env.SLOW_MS = String(SLOW_MS); // read by the fixture when it loads
  const { graph } = await loadGraph(`${GRAPH}#slowGraph`);
  const all = cases(n);
  const knownIds = new Set(["card-freeze", "refund-timelines", "es-congelar-tarjeta", "pt-chaves-pix"]);
  const run = (c: number) =>
    runGraphSweep({
      graph,
      cases: all,
      evaluators: [retrievalEvaluator({ k: 3 })],
      knownIds,
      k: 3,
      concurrency: c,
      threadPrefix: "bench:",
    });
  const rows: string[][] = [];
  let baseMs = 0;
  let baseReports = "";
  for (const c of [1, 2, 4, 8, 16]) {
    const t0 = performance.now();
    const turns = await run(c);
    const ms = performance.now() - t0;
    const reports = JSON.stringify(turns.map((t) => t.report));
    if (c === 1) {
      baseMs = ms;
      baseReports = reports;
    }
    const speedup = baseMs / ms;
    rows.push([
      String(c),
      (ms / 1000).toFixed(2),
      (turns.length / (ms / 1000)).toFixed(1),
      speedup.toFixed(2),
      `${((100 * speedup) / c).toFixed(0)}%`,
      reports === baseReports ? "yes" : "NO",
    ]);
  }
  // The cost of a turn outside the wait (LangGraph, capture, scoring) caps the speed-up at (wait + cost) / cost.
  process.env.SLOW_MS = "0";
  const t0 = performance.now();
  const bare = await run(1);
  const costMs = (performance.now() - t0) / bare.length;
  process.env.SLOW_MS = String(SLOW_MS);
  print(
    `\ncost of a turn outside the ${SLOW_MS} ms wait (SLOW_MS=0, concurrency 1): ${costMs.toFixed(1)} ms (wall time, not all of it CPU: an upper bound of what a turn computes)`,
  );
  printTable(
    `Concurrency: ${n} two-turn cases (${2 * n} turns), a node waiting ${SLOW_MS} ms per turn (ideal at concurrency 1: ${((2 * n * SLOW_MS) / 1000).toFixed(1)} s)`,
    [
      { header: "concurrency", align: "right" },
      { header: "wall s", align: "right" },
      { header: "turns/s", align: "right" },
      { header: "speed-up", align: "right" },
      { header: "efficiency", align: "right" },
      { header: "same turns as at 1" },
    ],
    rows,
  );
}

/** Runs the compiled CLI in its own process under GNU time (peak RSS). */
function retrace(
  args: string[],
  env: Record<string, string>,
): { status: number | null; wallMs: number; maxRssMb: number | null; stderr: string } {
  const timeBin = existsSync("/usr/bin/time") ? "/usr/bin/time" : null;
  const cli = [process.execPath, path.join(REPO_ROOT, "bin", "retrace.mjs"), ...args];
  const cmd = timeBin !== null ? [timeBin, "-f", "retrace-bench-maxrss-kb=%M", ...cli] : cli;
  const t0 = performance.now();
  const r = spawnSync(cmd[0]!, cmd.slice(1), {
    cwd: REPO_ROOT,
    env: { ...process.env, NO_COLOR: "1", RETRACE_LOG: "warn", ...env },
    encoding: "utf8",
    maxBuffer: 1 << 28,
  });
  const rss = /retrace-bench-maxrss-kb=(\d+)/.exec(r.stderr);
  return {
    status: r.status,
    wallMs: performance.now() - t0,
    maxRssMb: rss ? Number(rss[1]) / 1024 : null,
    stderr: r.stderr,
  };
}

async function memory(): Promise<void> {
  const n = envInt("RETRACE_BENCH_STATE_CASES", 180);
  const mb = envInt("RETRACE_BENCH_STATE_MB", 5);
  if (n === 0) return;
  if (!existsSync(path.join(REPO_ROOT, "dist", "cli", "run.js"))) {
    print("\nMemory: skipped (dist/ is missing: run `npm run build` first)");
    return;
  }
  const dir = await mkdtemp(path.join(tmpdir(), "retrace-bench-graph-"));
  try {
    const file = path.join(dir, "cases.jsonl");
    // The case file's fields (`line` is the loader's, not the file's).
    await writeFile(
      file,
      `${cases(n)
        .map(({ line: _l, ...c }) => JSON.stringify(c))
        .join("\n")}\n`,
    );
    const rows: string[][] = [];
    for (const c of (process.env.RETRACE_BENCH_STATE_CONCURRENCY ?? "1,4").split(",").map(Number)) {
      const r = retrace(
        [
          "eval",
          "--graph",
          `${GRAPH}#bigState`,
          "--kb",
          MINI_KB,
          "--cases",
          file,
          "-k",
          "3",
          "--config",
          JSON.stringify({ run: { concurrency: String(c) } }),
          "--config",
          '{"run":{"maxStateMb":64}}',
        ],
        { BIG_STATE_MB: String(mb) },
      );
      if (r.status !== 0) throw new Error(`retrace eval exited ${r.status}: ${r.stderr.slice(-2000)}`);
      rows.push([
        String(c),
        (r.wallMs / 1000).toFixed(1),
        r.maxRssMb === null ? "n/a (no /usr/bin/time)" : `${r.maxRssMb.toFixed(0)} MB`,
      ]);
    }
    printTable(
      `Memory: ${n} two-turn cases, ${mb} MB of state per turn (retrace eval --graph, own process; target < 1 GB at concurrency 1)`,
      [{ header: "concurrency", align: "right" }, { header: "wall s", align: "right" }, { header: "peak RSS" }],
      rows,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export async function run(): Promise<void> {
  await concurrency();
  await memory();
}
