/**
 * Interrupted runs leave nothing behind (docs/reliability.md, "Interrupted
 * runs"), through the real bin: `retrace eval --out FIFO` whose reader never
 * opens the FIFO stages its other outputs as `.NAME.PID.hex.tmp` beside
 * their targets and waits on the FIFO; SIGINT (or SIGTERM) then removes
 * every temporary file, publishes nothing, prints one line saying it was
 * interrupted, and ends by the signal (a shell's exit status 130 / 143).
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir, waitFor } from "../helpers/chroma.js";
import { BIN, ROOT } from "../helpers/cli.js";
import { MINI_KB } from "../helpers/fixtures.js";

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
