/**
 * The report of a large run built in steps, the event loop running between
 * them (src/eval/report/build-thread.ts; issue 49 item 2, issue 51): the same
 * bytes as `buildReport`, and a
 * signal during the build ends the run at once (a child process told to stop
 * while building ends by the signal without ever finishing the build).
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../src/errors.js";
import { buildReport } from "../../src/eval/report/aggregate.js";
import { buildReportYielding } from "../../src/eval/report/build-thread.js";
import { tempDir } from "../helpers/chroma.js";
import { ROOT } from "../helpers/cli.js";
import { largeInput, richInput } from "./build-thread-input.js";

describe("buildReportYielding", () => {
  it("builds a large run's report in steps, byte for byte the report of buildReport", async () => {
    for (const input of [
      await largeInput(160),
      { ...(await largeInput(160)), seed: 12345, resample: "turn" as const, samples: 500 },
      await richInput(40), // captured turns, stage heads, query attribution
    ]) {
      const stepped = await buildReportYielding(input);
      expect(JSON.stringify(stepped)).toBe(JSON.stringify(buildReport(input)));
      expect(stepped.turns).toBe(input.turns);
      expect(stepped.run).toBe(input.run);
    }
  }, 60_000);

  it("lets the event loop run during the build (a plain buildReport holds it throughout)", async () => {
    const input = await largeInput(600); // 4,200 turns: a build of a second or more
    let ticks = 0;
    const timer = setInterval(() => ticks++, 10);
    try {
      buildReport(input);
      const held = ticks;
      await buildReportYielding(input);
      expect(held).toBe(0);
      // Timers fire only where the build hands the loop back (its last step resolves the promise in a microtask,
      // before any timer): any tick happened during the build. How many depends on the machine's speed.
      expect(ticks).toBeGreaterThan(0);
    } finally {
      clearInterval(timer);
    }
  }, 60_000);

  it("rejects with the same retrace error as buildReport throws", async () => {
    const input = await largeInput(2);
    const bad = { ...input, samples: 0 };
    let here: unknown;
    try {
      buildReport(bad);
    } catch (e) {
      here = e;
    }
    const stepped = await buildReportYielding(bad).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(here).toBeInstanceOf(InvalidArgumentError);
    expect(stepped).toBeInstanceOf(InvalidArgumentError);
    expect((stepped as Error).message).toBe((here as Error).message);
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
