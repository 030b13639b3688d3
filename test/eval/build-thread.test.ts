/**
 * The report of a large run built in a worker thread (src/eval/report/build-thread.ts;
 * issue 49 item 2): the same bytes as `buildReport` in this thread, and a
 * signal during the build ends the run at once (a child process told to stop
 * while building ends by the signal without ever finishing the build).
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../src/errors.js";
import { buildReport } from "../../src/eval/report/aggregate.js";
import { buildReportOffThread } from "../../src/eval/report/build-thread.js";
import { tempDir } from "../helpers/chroma.js";
import { ROOT } from "../helpers/cli.js";
import { reportTurn } from "../../src/eval/report/build-protocol.js";
import { largeInput, richInput } from "./build-thread-input.js";

describe("buildReportOffThread", () => {
  it("builds a large run's report in a worker, byte for byte the report built in this thread", async () => {
    const input = await largeInput(160); // 1,120 turns: above OFF_THREAD_MIN_TURNS
    const where: string[] = [];
    const off = await buildReportOffThread(input, { onBuilt: (w) => where.push(w) });
    expect(where).toEqual(["worker"]);
    const here = buildReport(input);
    expect(JSON.stringify(off)).toBe(JSON.stringify(here));
    // The caller's own objects, as a build in this thread returns them.
    expect(off.turns).toBe(input.turns);
    expect(off.run).toBe(input.run);
    // What the worker had to be told about the evaluators: groundedness vacuous, store-less turns' reasons, parts.
    expect(off.vacuous).toEqual(["groundedness"]);
    expect(Object.keys(off.splits)).toEqual(["kind", "locale", "part", "position"]);
  }, 60_000);

  it("gives the same bytes with another seed and turn resampling, and builds small runs here", async () => {
    const input = { ...(await largeInput(160)), seed: 12345, resample: "turn" as const, samples: 500 };
    expect(JSON.stringify(await buildReportOffThread(input, { minTurns: 0 }))).toBe(JSON.stringify(buildReport(input)));
    const where: string[] = [];
    await buildReportOffThread(await largeInput(10), { onBuilt: (w) => where.push(w) });
    expect(where).toEqual(["this thread"]);
  }, 60_000);

  it("sends the worker only what the build reads: the report of the projected turns is the report of the turns", async () => {
    const input = await richInput(40);
    const slim = input.turns.map(reportTurn);
    // What is left out: the texts, the comments, the captured documents and the trace's ranked heads.
    const captured = slim.find((t) => t.captured !== undefined);
    expect(captured?.captured?.documents).toBeUndefined();
    expect(captured?.captured?.stages.length).toBe(2);
    const traced = slim.find((t) => t.trace !== undefined);
    expect(traced?.trace?.stages).toBeUndefined();
    expect(traced?.trace?.stageSizes).toEqual({ bm25: 10, fused: 5 });
    expect(slim.every((t) => t.user === "" && t.answer === "" && t.results.every((r) => r.comment === undefined))).toBe(
      true,
    );
    expect(JSON.stringify(slim).length).toBeLessThan(JSON.stringify(input.turns).length * 0.6);
    // ... and every figure is the same: the build reads none of it (the report's turns are the caller's own either way).
    const full = buildReport(input);
    const projected = buildReport({ ...input, turns: slim });
    expect(JSON.stringify({ ...projected, turns: null })).toBe(JSON.stringify({ ...full, turns: null }));
    expect(full.funnel?.stages.map((s) => s.stage)).toEqual(expect.arrayContaining(["bm25", "final"]));
    // A run of captured turns only (its funnel from the captured lists).
    const capturedOnly = { ...input, turns: input.turns.filter((t) => t.captured !== undefined) };
    const fullCaptured = buildReport(capturedOnly);
    expect(fullCaptured.funnel?.stages.map((s) => s.stage)).toEqual(expect.arrayContaining(["child", "final"]));
    const slimCaptured = buildReport({ ...capturedOnly, turns: capturedOnly.turns.map(reportTurn) });
    expect(JSON.stringify({ ...slimCaptured, turns: null })).toBe(JSON.stringify({ ...fullCaptured, turns: null }));
    expect(full.queryAttribution).toBeDefined();
    // Off the thread, the same bytes.
    expect(JSON.stringify(await buildReportOffThread(input, { minTurns: 0 }))).toBe(JSON.stringify(full));
  }, 60_000);

  it("rethrows the worker's error as the same retrace error", async () => {
    const input = await largeInput(2);
    const bad = { ...input, samples: 0 };
    let here: unknown;
    try {
      buildReport(bad);
    } catch (e) {
      here = e;
    }
    const off = await buildReportOffThread(bad, { minTurns: 0 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(here).toBeInstanceOf(InvalidArgumentError);
    expect(off).toBeInstanceOf(InvalidArgumentError);
    expect((off as Error).message).toBe((here as Error).message);
  }, 60_000);
});

let tmp: { dir: string; cleanup: () => Promise<void> };
beforeAll(async () => {
  tmp = await tempDir("build-thread");
});
afterAll(async () => tmp.cleanup());

describe("a signal while a large report is built", () => {
  for (const [signal, code] of [
    ["SIGTERM", 143],
    ["SIGINT", 130],
    ["SIGHUP", 129],
  ] as const) {
    it(`${signal} ends the run during the build: by the signal (${code}), one line, no temporary file`, async () => {
      const staged = path.join(tmp.dir, `.out-${signal}.tmp`);
      const child = spawn(
        process.execPath,
        ["--import", "tsx", path.join(ROOT, "test/fixtures/faults/build-interrupt.ts"), staged, "3000"],
        { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] },
      );
      let stdout = "";
      let stderr = "";
      child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
      const exited = new Promise<NodeJS.Signals | null>((r) => child.on("close", (_c, sig) => r(sig)));
      // Told to stop once the build has begun (21,000 turns: seconds of bootstrap in a build that holds the thread).
      child.stdout.setEncoding("utf8").on("data", (d: string) => {
        stdout += d;
        if (stdout.includes("building\n")) setTimeout(() => child.kill(signal), 300);
      });
      const killer = setTimeout(() => child.kill("SIGKILL"), 60_000);
      const sig = await exited;
      clearTimeout(killer);
      expect(stdout).toBe("building\n"); // never "built": stopped in the middle of the build, not after it
      expect(sig).toBe(signal);
      const lines = stderr.split("\n").filter((l) => l !== "");
      expect(lines).toEqual([
        `retrace: interrupted by ${signal}; stopped with exit ${code} (1 temporary file of unfinished outputs removed)`,
      ]);
      expect(existsSync(staged)).toBe(false);
    }, 90_000);
  }
});
