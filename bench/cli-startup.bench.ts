/**
 * CLI start-up: wall time of `retrace --help` and `retrace <command> --help`
 * through the compiled bin (dist/), process spawn included, as a user's shell
 * sees it. Target (docs/decisions/0007-package-and-peer-dependencies.md):
 * `retrace --help` well under a second, because each command's heavy
 * dependencies (LangGraph, transformers.js, chromadb) load only when that
 * command runs (test/cli/lazy-imports.test.ts checks which modules load).
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const BIN = path.join(ROOT, "bin", "retrace.mjs");
const RUNS = 9;

function medianMs(args: string[]): number {
  const ms: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    const r = spawnSync(process.execPath, [BIN, ...args], { encoding: "utf8" });
    ms.push(performance.now() - t0);
    if (r.status !== 0) throw new Error(`retrace ${args.join(" ")} exited ${r.status}: ${r.stderr}`);
  }
  ms.sort((a, b) => a - b);
  return ms[Math.floor(ms.length / 2)]!;
}

export async function run(): Promise<void> {
  if (!existsSync(path.join(ROOT, "dist", "cli", "run.js"))) {
    process.stdout.write("dist/ is missing: run `npm run build` first\n");
    return;
  }
  const bare = medianMs(["--version"]);
  process.stdout.write(`| command | median wall time, ms (${RUNS} runs) |\n|---|---:|\n`);
  const nodeAlone = (() => {
    const ms: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const t0 = performance.now();
      spawnSync(process.execPath, ["-e", ""]);
      ms.push(performance.now() - t0);
    }
    ms.sort((a, b) => a - b);
    return ms[Math.floor(ms.length / 2)]!;
  })();
  process.stdout.write(`| node -e "" (process start, for reference) | ${nodeAlone.toFixed(0)} |\n`);
  process.stdout.write(`| retrace --version | ${bare.toFixed(0)} |\n`);
  for (const args of [["--help"], ["score", "--help"], ["check", "--help"], ["eval", "--help"]]) {
    process.stdout.write(`| retrace ${args.join(" ")} | ${medianMs(args).toFixed(0)} |\n`);
  }
}
