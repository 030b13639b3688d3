/**
 * Recorded traces from any input, end to end with the real bin
 * (docs/recorded-traces.md, "Files and formats", "Bad recordings"):
 * - `--traces -` reads standard input: the real client's runs as a gzipped,
 *   pretty-printed JSON array score each turn as the JSON Lines file does;
 * - a parent cycle is exit 2 naming the runs, for `eval --traces` and
 *   `cases import` alike (it used to hang, ignoring SIGTERM);
 * - SIGTERM while a recording is being read ends the process (143);
 * - runs exported without any parent link: their turns are unattached,
 *   listed and counted in the report and on stderr, never scored as misses.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { gzipSync } from "node:zlib";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, ROOT, runCli, type CliResult } from "../helpers/cli.js";

const DIR = path.join(ROOT, "test", "fixtures", "traces");
const LANGSMITH = path.join(DIR, "langsmith.runs.jsonl");
const base = ["--catalog", path.join(DIR, "catalog.tsv"), "--cases", path.join(DIR, "cases.jsonl"), "-k", "3"];
const runs = () =>
  readFileSync(LANGSMITH, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), "retrace-traces-input-"));
});
afterAll(() => rm(tmp, { recursive: true, force: true }));

/** The bin with `input` on its standard input (or, with `input` null, a stdin left open); `signal` sent once stderr shows `when`. */
function runWithStdin(
  args: string[],
  input: Buffer | null,
  kill?: { signal: NodeJS.Signals; afterMs: number },
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: ROOT,
      env: { ...process.env, NO_COLOR: "1", RETRACE_LOG: "info", RETRACE_WIDTH: "0", GITHUB_ACTIONS: undefined },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.stdin.on("error", () => {}); // the child may end before reading it all
    if (input !== null) child.stdin.end(input);
    else child.stdin.write("[\n"); // a document begun, never ended
    const timer = setTimeout(() => child.kill("SIGKILL"), 120_000);
    if (kill !== undefined) setTimeout(() => child.kill(kill.signal), kill.afterMs);
    child.on("error", reject);
    child.on("close", (exitCode, signal) => {
      clearTimeout(timer);
      resolve({ exitCode, signal, stdout, stderr });
    });
  });
}

type Turn = { caseId: string; turn: number; retrievedIds: string[] | null; results: { key: string; score: number }[] };
const perTurn = (stdout: string) =>
  (JSON.parse(stdout) as { turns: Turn[] }).turns.map((t) => [t.caseId, t.turn, t.retrievedIds, t.results]);

describe("--traces - reads standard input", () => {
  it("a gzipped, pretty-printed JSON array of the runs scores each turn as the JSON Lines file does", async () => {
    const file = await runCli(["eval", "--traces", LANGSMITH, ...base, "--json"]);
    expect(file.exitCode, file.stderr).toBe(1); // the errored retriever turn fails the default gate
    const stdin = await runWithStdin(
      ["eval", "--traces", "-", ...base, "--json"],
      gzipSync(JSON.stringify(runs(), null, 2)),
    );
    expect(stdin.exitCode, stdin.stderr).toBe(1);
    expect(perTurn(stdin.stdout)).toEqual(perTurn(file.stdout));
    expect(perTurn(stdin.stdout).length).toBeGreaterThan(4);
  });

  it("SIGTERM while the recording is being read ends the process with 143", async () => {
    const r = await runWithStdin(["eval", "--traces", "-", ...base], null, { signal: "SIGTERM", afterMs: 3000 });
    expect(r.exitCode === 143 || r.signal === "SIGTERM", `${r.exitCode} ${r.signal} ${r.stderr}`).toBe(true);
  });
});

describe("a parent cycle is exit 2 naming the runs", () => {
  it("for eval --traces and cases import alike", async () => {
    const all = runs();
    const [a, b] = all.filter((r) => typeof r.parent_run_id === "string");
    a!.parent_run_id = b!.id;
    b!.parent_run_id = a!.id;
    const file = path.join(tmp, "cycle.jsonl");
    await writeFile(file, all.map((r) => JSON.stringify(r)).join("\n"));
    const evalRun = await runCli(["eval", "--traces", file, ...base], { timeoutMs: 60_000 });
    expect(evalRun.exitCode, evalRun.stderr).toBe(2);
    expect(evalRun.stderr).toMatch(/parent cycle/);
    expect(evalRun.stderr).toContain(String(a!.id));
    const out = path.join(tmp, "cases.jsonl");
    const imp = await runCli(["cases", "import", file, "--locale", "en", "--out", out], { timeoutMs: 60_000 });
    expect(imp.exitCode, imp.stderr).toBe(2);
    expect(imp.stderr).toMatch(/parent cycle/);
    expect(imp.stderr).toContain(String(b!.id));
  });
});

describe("runs exported without their parent links", () => {
  /** The fixture's runs, the runs of `conversations` stripped of every parent link (parent_run_id, dotted_order). */
  const stripped = (conversations: (thread: unknown) => boolean) => {
    const all = runs();
    const byTrace = new Map<unknown, unknown>();
    for (const r of all)
      if (r.parent_run_id === null || r.parent_run_id === undefined)
        byTrace.set(r.trace_id, (r.extra as { metadata: { thread_id?: unknown } }).metadata.thread_id);
    return all.map((r) => {
      if (!conversations(byTrace.get(r.trace_id))) return r;
      const { parent_run_id: _, dotted_order: __, ...rest } = r;
      return rest;
    });
  };
  const threads = [...new Set(runs().map((r) => (r.extra as { metadata: { thread_id?: unknown } }).metadata.thread_id))]
    .filter((t) => typeof t === "string")
    .sort() as string[];

  it("turns of one conversation: listed and counted in run.graph.traces and on stderr, not scored; the others score as before", async () => {
    const cut = threads[0]!;
    const file = path.join(tmp, "some-unlinked.jsonl");
    await writeFile(
      file,
      stripped((t) => t === cut)
        .map((r) => JSON.stringify(r))
        .join("\n"),
    );
    const whole = await runCli(["eval", "--traces", LANGSMITH, ...base, "--json"]);
    const r = await runCli(["eval", "--traces", file, ...base, "--json"]);
    expect([0, 1], r.stderr).toContain(r.exitCode);
    const report = JSON.parse(r.stdout) as {
      run: { graph: { traces: { unattachedTurns?: number; unattachedCalls?: number; unattachedExamples?: string[] } } };
      turns: Turn[];
    };
    const cutTurns = perTurn(whole.stdout).filter(([caseId]) => caseId === cut);
    expect(cutTurns.length).toBeGreaterThan(0);
    const traces = report.run.graph.traces;
    expect(traces.unattachedTurns).toBeGreaterThan(0);
    expect(traces.unattachedTurns).toBeLessThanOrEqual(cutTurns.length);
    expect(traces.unattachedExamples!.length).toBe(traces.unattachedTurns! + traces.unattachedCalls!);
    expect(r.stderr).toMatch(/recorded turns have retriever calls with no parent link in the export/);
    // Not one turn of the cut conversation is scored (as a miss or otherwise) unless it has no retriever call to lose; the others score exactly as before.
    const got = perTurn(r.stdout);
    expect(got.filter(([caseId]) => caseId === cut).length).toBe(cutTurns.length - traces.unattachedTurns!);
    expect(got.filter(([caseId]) => caseId !== cut)).toEqual(
      perTurn(whole.stdout).filter(([caseId]) => caseId !== cut),
    );
  });

  it("every turn unlinked: exit 2 saying the parent links are missing, nothing scored", async () => {
    const file = path.join(tmp, "all-unlinked.jsonl");
    await writeFile(
      file,
      stripped(() => true)
        .map((r) => JSON.stringify(r))
        .join("\n"),
    );
    const r = await runCli(["eval", "--traces", file, ...base]);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/turns have retriever calls with no parent link, not scored/);
    expect(r.stderr).toMatch(/Export the runs with their parent links/);
  });
});
