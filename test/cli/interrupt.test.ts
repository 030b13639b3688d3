/**
 * Interrupted runs leave nothing behind (docs/reliability.md, "Interrupted
 * runs"), through the real bin: `retrace eval --out FIFO` whose reader never
 * opens the FIFO stages its other outputs as `.NAME.PID.hex.tmp` beside
 * their targets and waits on the FIFO; SIGHUP, SIGINT or SIGTERM then removes
 * every temporary file, publishes nothing, prints one line saying it was
 * interrupted, and ends by the signal (a shell's exit status 129 / 130 / 143).
 * retrace's own sweeps (`eval` without --graph, `--repeat`, `label`) stop in
 * the middle of the work, not after it (issue 49 item 2): each run is told
 * to stop once it is sweeping and must end within STOP_MS, else it is
 * killed and the test fails on the SIGKILL, not on a timed assertion.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir, waitFor } from "../helpers/chroma.js";
import { BIN, ROOT } from "../helpers/cli.js";
import { MINI_KB } from "../helpers/fixtures.js";
import { syntheticKb } from "../helpers/synthetic-kb.js";

let tmp: { dir: string; cleanup: () => Promise<void> };
beforeAll(async () => {
  tmp = await tempDir("interrupt");
});
// A run a failed test left waiting on its FIFO is killed, not left behind.
const children: ChildProcess[] = [];
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  await tmp.cleanup();
});

/** How long a run told to stop may take before it is killed (the test then fails on SIGKILL): far above the 2 s target. */
const STOP_MS = 20_000;

/** `child` told to stop by `signal`; killed with SIGKILL when it has not ended within STOP_MS. */
async function stopWith(
  run: ReturnType<typeof spawnRetrace>,
  signal: NodeJS.Signals,
): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  run.child.kill(signal);
  const timer = setTimeout(() => run.child.kill("SIGKILL"), STOP_MS);
  try {
    return await run.exited;
  } finally {
    clearTimeout(timer);
  }
}

/** The `retrace:` lines of a run's stderr. */
const retraceLines = (stderr: string) => stderr.split("\n").filter((l) => l.startsWith("retrace:"));

/** The real bin with `args`, its stderr collected, and how it ended. */
function spawnRetrace(args: string[]) {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: ROOT,
    env: {
      ...process.env,
      NO_COLOR: "1",
      RETRACE_LOG: "info",
      GITHUB_ACTIONS: undefined,
      GITHUB_STEP_SUMMARY: undefined,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  child.stdout.resume();
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
    child.on("close", (c, sig) => r({ code: c, signal: sig })),
  );
  return { child, exited, stderr: () => stderr };
}

describe("an interrupt while the outputs are written", () => {
  for (const [signal, code] of [
    ["SIGHUP", 129],
    ["SIGINT", 130],
    ["SIGTERM", 143],
  ] as const) {
    it(`${signal} while --out is a FIFO nobody reads: every temporary file removed, nothing published, one line, ended by ${signal} (exit ${code})`, async () => {
      const dir = path.join(tmp.dir, signal);
      spawnSync("mkdir", ["-p", dir]);
      expect(spawnSync("mkfifo", [path.join(dir, "out.md")]).status).toBe(0);
      const { child, exited, stderr } = spawnRetrace([
        "eval",
        "--kb",
        MINI_KB,
        "--store",
        "memory",
        "--config",
        '{"retrieval":{"embedder":"builtin"}}',
        "--out",
        `json:${path.join(dir, "r.json")}`,
        "--out",
        `html:${path.join(dir, "r.html")}`,
        "--out",
        `junit:${path.join(dir, "r.xml")}`,
        "--out",
        path.join(dir, "out.md"),
      ]);
      try {
        const tmpFiles = async () => (await readdir(dir)).filter((f) => f.endsWith(".tmp"));
        // The sweep is over and the three files are staged: the run now waits for the FIFO's reader.
        expect(await waitFor(async () => (await tmpFiles()).length === 3, 60_000), stderr()).toBe(true);
        child.kill(signal);
        const end = await exited;
        expect(end, stderr()).toEqual({ code: null, signal }); // a shell reports 128 + the signal's number
        expect((await readdir(dir)).sort()).toEqual(["out.md"]); // the FIFO only: no temporary file, no output published
        const lines = stderr()
          .split("\n")
          .filter((l) => l.startsWith("retrace:"));
        expect(lines).toEqual([
          `retrace: interrupted by ${signal}; stopped with exit ${code} (3 temporary files of unfinished outputs removed)`,
        ]);
      } finally {
        if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      }
    });
  }

  it("SIGINT during the sweep (a graph that never answers, a timer keeping it alive): one line, ended by SIGINT (exit 130)", async () => {
    const graph = path.join(tmp.dir, "hang-graph.mjs");
    const started = path.join(tmp.dir, "hang-graph.started");
    // Its first turn marks that the sweep has started, then never answers (a timer keeps the process alive).
    await writeFile(
      graph,
      `import { writeFileSync } from "node:fs";
export const graph = { channels: { messages: {} }, nodes: {}, checkpointer: false, async *stream() {},
  invoke: () => new Promise(() => { writeFileSync(${JSON.stringify(started)}, ""); setInterval(() => {}, 1000); }) };
`,
    );
    const { child, exited, stderr } = spawnRetrace(["eval", "--graph", graph, "--kb", MINI_KB]);
    try {
      expect(await waitFor(() => existsSync(started), 30_000), stderr()).toBe(true);
      child.kill("SIGINT");
      expect(await exited, stderr()).toEqual({ code: null, signal: "SIGINT" });
      expect(
        stderr()
          .split("\n")
          .filter((l) => l.startsWith("retrace:")),
      ).toEqual(["retrace: interrupted by SIGINT; stopped with exit 130"]);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    }
  });
});

describe("retrace's own sweeps stop when asked, in the middle of the work", () => {
  const OWN = ["--kb", MINI_KB, "--store", "memory", "--config", '{"retrieval":{"embedder":"builtin"}}'];

  for (const [signal, code] of [
    ["SIGTERM", 143],
    ["SIGHUP", 129],
  ] as const) {
    it(`eval --repeat 1000 with retrace's own graph: ${signal} mid-sweep ends it by ${signal} (exit ${code}) with one line`, async () => {
      const run = spawnRetrace(["eval", ...OWN, "--repeat", "1000", "--json"]);
      try {
        // The embedder line comes once the store is open: the sweep starts (1000 repeats: minutes of work).
        expect(await waitFor(() => run.stderr().includes("embedder:"), 60_000), run.stderr()).toBe(true);
        await new Promise((r) => setTimeout(r, 1000));
        expect(await stopWith(run, signal), run.stderr()).toEqual({ code: null, signal });
        expect(retraceLines(run.stderr())).toEqual([`retrace: interrupted by ${signal}; stopped with exit ${code}`]);
      } finally {
        if (run.child.exitCode === null && run.child.signalCode === null) run.child.kill("SIGKILL");
      }
    });
  }

  it("--repeat above its bound is refused before anything runs (exit 2)", async () => {
    const run = spawnRetrace(["eval", ...OWN, "--repeat", "100000000"]);
    expect(await run.exited).toEqual({ code: 2, signal: null });
    expect(retraceLines(run.stderr())).toEqual([
      "retrace: Expected `--repeat` to be a positive integer, at most 1000, got 100000000",
    ]);
  });

  it("label with retrace's own systems: SIGINT while it pools ends it by SIGINT (exit 130), one line, no page", async () => {
    const dir = path.join(tmp.dir, "label");
    spawnSync("mkdir", ["-p", dir]);
    const cases = path.join(dir, "to-label.jsonl");
    // Enough turns to label that pooling them takes minutes.
    const conversation = (i: number) =>
      JSON.stringify({
        id: `conv-${i}`,
        locale: "en",
        kind: "golden",
        turns: [{ user: `how do I lock my card? ${i}` }, { user: "and my refund?" }],
      });
    await writeFile(cases, Array.from({ length: 1500 }, (_, i) => conversation(i)).join("\n") + "\n");
    const page = path.join(dir, "page.html");
    const run = spawnRetrace([
      "label",
      cases,
      ...OWN.slice(0, 4),
      "--config",
      JSON.stringify({ retrieval: { embedder: "builtin" } }),
      "--out",
      `html:${page}`,
    ]);
    try {
      // The embedder line comes once the systems are open: pooling starts.
      expect(await waitFor(() => run.stderr().includes("embedder:"), 60_000), run.stderr()).toBe(true);
      await new Promise((r) => setTimeout(r, 1000));
      expect(await stopWith(run, "SIGINT"), run.stderr()).toEqual({ code: null, signal: "SIGINT" });
      expect(retraceLines(run.stderr())).toEqual(["retrace: interrupted by SIGINT; stopped with exit 130"]);
      expect((await readdir(dir)).sort()).toEqual(["to-label.jsonl"]);
    } finally {
      if (run.child.exitCode === null && run.child.signalCode === null) run.child.kill("SIGKILL");
    }
  });

  it("label --merge of a large export: SIGTERM during the merge ends it by SIGTERM (exit 143), one line, the cases file untouched", async () => {
    const dir = path.join(tmp.dir, "merge");
    spawnSync("mkdir", ["-p", dir]);
    const into = path.join(dir, "cases.jsonl");
    const exported = path.join(dir, "export.jsonl");
    // 50,000 labelled conversations: a merge of minutes.
    const conversation = (i: number, labelled: boolean) =>
      JSON.stringify({
        id: `conv-${i}`,
        locale: "en",
        kind: "golden",
        turns: [
          labelled
            ? {
                user: `how do I lock my card? ${i}`,
                must_cite_one_of: ["card-freeze"],
                expect: "answer",
                relevant: { "card-freeze": 2 },
                judged: ["card-freeze", "refund-timelines"],
              }
            : { user: `how do I lock my card? ${i}` },
          { user: "and my refund?" },
        ],
      });
    const text = (labelled: boolean) =>
      Array.from({ length: 50_000 }, (_, i) => conversation(i, labelled)).join("\n") + "\n";
    const before = text(false);
    await writeFile(into, before);
    await writeFile(exported, text(true));
    const run = spawnRetrace(["label", "--merge", exported, "--into", into, "--kb", MINI_KB]);
    try {
      await new Promise((r) => setTimeout(r, 5000));
      expect(await stopWith(run, "SIGTERM"), run.stderr()).toEqual({ code: null, signal: "SIGTERM" });
      expect(retraceLines(run.stderr())).toEqual(["retrace: interrupted by SIGTERM; stopped with exit 143"]);
      expect((await readdir(dir)).sort()).toEqual(["cases.jsonl", "export.jsonl"]);
      expect(await readFile(into, "utf8")).toBe(before);
    } finally {
      if (run.child.exitCode === null && run.child.signalCode === null) run.child.kill("SIGKILL");
    }
  });
});

describe("retrace's own synchronous phases stop when asked (issue 49 item 3)", () => {
  it("SIGTERM while the LSA embedder is fitted on a large KB ends it by SIGTERM (exit 143), one line", async () => {
    // 2,500 synthetic cards (about 3.5 MB of text): the LSA fit is half a minute of arithmetic on a 2-core machine
    // (18 s for 1,500 cards). Fitted in retrace's own thread it held off the signal until it was done; in a thread of
    // its own (fitLsaOffThread) the signal ends the run at once. Killed at 10 s: a signal held off fails the test.
    const kb = await syntheticKb(2500);
    try {
      const run = spawnRetrace(["eval", "--kb", kb.dir, "--store", "memory", "--json"]);
      try {
        // The embedder line comes as the system opens; the fit starts then.
        expect(await waitFor(() => run.stderr().includes("embedder:"), 60_000), run.stderr()).toBe(true);
        await new Promise((r) => setTimeout(r, 1500));
        run.child.kill("SIGTERM");
        const timer = setTimeout(() => run.child.kill("SIGKILL"), 10_000);
        const ended = await run.exited.finally(() => clearTimeout(timer));
        expect(ended, run.stderr()).toEqual({ code: null, signal: "SIGTERM" });
        expect(retraceLines(run.stderr())).toEqual(["retrace: interrupted by SIGTERM; stopped with exit 143"]);
      } finally {
        if (run.child.exitCode === null && run.child.signalCode === null) run.child.kill("SIGKILL");
      }
    } finally {
      await kb.cleanup();
    }
  });
});
