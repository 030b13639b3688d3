/**
 * Cost linear in turns for retrace's own graph (issue 53 item 4; docs/throughput.md#long-conversations):
 * `retrace eval` over RETRACE_BENCH_LONG_TURNS turns (default 10,000) of the kb-mini cards, once as
 * 100-turn conversations (RETRACE_BENCH_LONG_LENGTH) and once as 2-turn cases, each in its own process
 * under GNU time (peak RSS), store `memory`, the built-in embedder, concurrency 1, with
 * `run.replay` own (RETRACE_BENCH_LONG_REPLAY=recorded for the other mode). Printed per shape: the
 * graph phase's time per turn (the report's `timings.phases.graph` over its turns: the sweep's own
 * cost, not the process start or the report), the wall time and the peak RSS, and the ratio of the
 * long shape's time per turn to the 2-turn shape's. Target: within 1.2×, peak memory bounded (the
 * sweep deletes each finished case's thread: memory grows with the cases in flight, not the turns
 * run). Printed, never asserted; needs `npm run build`.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { REPO_ROOT } from "./lib/eval-set.js";
import { print, printTable } from "./lib/report.js";

const MINI_KB = path.join(REPO_ROOT, "test", "fixtures", "kb-mini");
const QUESTIONS: [string, string][] = [
  ["how do I lock my card?", "card-freeze"],
  ["and will my refund still arrive?", "refund-timelines"],
  ["how long do refunds take?", "refund-timelines"],
  ["and how do I unfreeze it?", "card-freeze"],
  ["can I still get refunds while it is frozen?", "card-freeze"],
];

function envInt(name: string, fallback: number): number {
  const raw = process.env[name];
  const n = raw === undefined || raw === "" ? fallback : Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a positive integer, got ${JSON.stringify(raw)}`);
  return n;
}

/** `total / length` cases of `length` gold-bearing turns, each turn with a recorded assistant reply before it. */
function casesText(total: number, length: number): string {
  const lines: string[] = [];
  for (let c = 0; c < total / length; c++)
    lines.push(
      JSON.stringify({
        id: `long-${length}-${String(c).padStart(5, "0")}`,
        locale: "en",
        kind: "golden",
        turns: Array.from({ length }, (_, i) => {
          const [user, gold] = QUESTIONS[(c + i) % QUESTIONS.length]!;
          return {
            user,
            must_cite_one_of: [gold],
            expect: "answer",
            ...(i > 0 ? { context: [{ role: "assistant", content: `reply ${i} of case ${c}` }] } : {}),
          };
        }),
      }),
    );
  return `${lines.join("\n")}\n`;
}

/** One `retrace eval` in its own process under GNU time: the report's graph time per turn, wall time, peak RSS. */
async function evalRun(dir: string, name: string, text: string, replay: string) {
  const cases = path.join(dir, `${name}.jsonl`);
  const report = path.join(dir, `${name}.json`);
  await writeFile(cases, text);
  const cli = [
    process.execPath,
    path.join(REPO_ROOT, "bin", "retrace.mjs"),
    "eval",
    "--kb",
    MINI_KB,
    "--cases",
    cases,
    "--store",
    "memory",
    "--config",
    JSON.stringify({ retrieval: { embedder: "builtin" }, run: { concurrency: 1, replay } }),
    "--out",
    `json:${report}`,
  ];
  const timeBin = existsSync("/usr/bin/time") ? "/usr/bin/time" : null;
  const cmd = timeBin !== null ? [timeBin, "-f", "retrace-bench-maxrss-kb=%M", ...cli] : cli;
  const t0 = performance.now();
  const r = spawnSync(cmd[0]!, cmd.slice(1), {
    cwd: REPO_ROOT,
    env: { ...process.env, NO_COLOR: "1", RETRACE_LOG: "warn" },
    encoding: "utf8",
    maxBuffer: 1 << 28,
  });
  const wallMs = performance.now() - t0;
  if (r.status !== 0 && r.status !== 1) throw new Error(`retrace eval exited ${r.status}: ${r.stderr.slice(-2000)}`);
  const json = JSON.parse(await readFile(report, "utf8")) as {
    turns: unknown[];
    timings: { phases: { graph: number } };
  };
  const rss = /retrace-bench-maxrss-kb=(\d+)/.exec(r.stderr);
  return {
    turns: json.turns.length,
    msPerTurn: json.timings.phases.graph / json.turns.length,
    wallMs,
    maxRssMb: rss ? Number(rss[1]) / 1024 : null,
  };
}

export async function run(): Promise<void> {
  if (!existsSync(path.join(REPO_ROOT, "dist", "cli", "run.js"))) {
    print("skipped: dist/ is missing (run `npm run build` first)");
    return;
  }
  const total = envInt("RETRACE_BENCH_LONG_TURNS", 10_000);
  const length = envInt("RETRACE_BENCH_LONG_LENGTH", 100);
  const replay = process.env.RETRACE_BENCH_LONG_REPLAY ?? "own";
  const dir = await mkdtemp(path.join(tmpdir(), "retrace-bench-long-"));
  try {
    const short = await evalRun(dir, "short", casesText(total, 2), replay);
    const long = await evalRun(dir, "long", casesText(total, length), replay);
    const rows = [
      [`${total / 2} × 2 turns`, ...cells(short)],
      [`${total / length} × ${length} turns`, ...cells(long)],
    ];
    printTable(
      `retrace's own graph, ${total} turns, run.replay ${replay}, concurrency 1 (store memory, built-in embedder; target: ${length}-turn ms/turn within 1.2× of 2-turn)`,
      [
        { header: "cases" },
        { header: "turns", align: "right" },
        { header: "graph ms/turn", align: "right" },
        { header: "wall s", align: "right" },
        { header: "peak RSS" },
      ],
      rows,
    );
    print(`ratio ${length}-turn / 2-turn ms per turn: ${(long.msPerTurn / short.msPerTurn).toFixed(2)}×`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function cells(r: { turns: number; msPerTurn: number; wallMs: number; maxRssMb: number | null }): string[] {
  return [
    String(r.turns),
    r.msPerTurn.toFixed(2),
    (r.wallMs / 1000).toFixed(1),
    r.maxRssMb === null ? "n/a (no /usr/bin/time)" : `${r.maxRssMb.toFixed(0)} MB`,
  ];
}
