import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { baselineFromReport } from "../../src/eval/gate/baseline.js";
import { compareRuns, readRunSide } from "../../src/eval/gate/compare.js";
import { DataValidationError } from "../../src/errors.js";
import { runCli } from "../helpers/cli.js";
import { fixtureReport, ROWS } from "./report-fixture.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "retrace-compare-"));
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

async function write(name: string, data: unknown): Promise<string> {
  const file = path.join(dir, name);
  await writeFile(file, JSON.stringify(data));
  return file;
}

describe("compareRuns", () => {
  it("pairs per-turn scores of two runs: identical runs differ by 0 with p = 1", async () => {
    const report = await fixtureReport();
    const a = await readRunSide(await write("a.json", report));
    const b = await readRunSide(await write("b.json", baselineFromReport(report)));
    const rows = compareRuns(a, b);
    const hit = rows.find((r) => r.key === "retrieval_hit_at_k")!;
    // The fixture scores hit@3 on 4 turns (2 empty-gold turns and the store-less turn have no key): 1, 1, 0, 1.
    // 4 turns in 3 cases (g1#0, g1#1, g2#1, adv1#0); every paired difference is 0 → interval [0, 0], p = 1.
    expect(hit).toMatchObject({
      n: 4,
      nCases: 3,
      meanA: 0.75,
      meanB: 0.75,
      diff: 0,
      ci95: [0, 0],
      pValue: 1,
      pAdjusted: 1,
      familySize: 1,
      significant: false,
      unit: "case",
    });
    expect(rows[0]!.key).toBe("retrieval_hit_at_k"); // registry order first
  });

  it("reports B − A over the shared turns", async () => {
    const before = await fixtureReport();
    // In B, the miss (g2#1: gold c, retrieved d,e,f) becomes a hit at rank 1.
    const after = await fixtureReport(
      {},
      ROWS.map((r) => (r.caseId === "g2" && r.turn === 1 ? { ...r, retrievedIds: ["c", "e", "f"] } : r)),
    );
    const rows = compareRuns(
      await readRunSide(await write("before.json", before)),
      await readRunSide(await write("after.json", after)),
    );
    const hit = rows.find((r) => r.key === "retrieval_hit_at_k")!;
    expect(hit.n).toBe(4);
    expect(hit.diff).toBeCloseTo(0.25, 12); // (1 − 0) / 4
    // Per case: g1 d = [0, 0], g2 d = [1], adv1 d = [0]. A case-level resample has mean 0 unless it draws g2,
    // which happens with probability 1 − (2/3)^3 = 19/27; so Q(p) = 0 up to p ≈ 8/27 and the interval's lower end is 0:
    // the interval includes 0 and the inverted p is 2·(8/27) ≈ 0.59 (Monte Carlo ±0.03): not significant, consistently.
    expect(hit.ci95?.[0]).toBe(0);
    expect(hit.ci95?.[1]).toBeGreaterThan(0.25);
    expect(hit.pValue).toBeGreaterThan(0.5);
    expect(hit.pValue).toBeLessThan(0.68);
    expect(hit.significant).toBe(false);
  });

  it("the verdict always agrees with the interval, at either resampling unit", async () => {
    // 12 cases of 2 turns; B improves hit on 9 cases (both turns) and regresses on none: a clear, consistent gain.
    const mk = (better: boolean) => ({
      perTurn: Object.fromEntries(
        Array.from({ length: 24 }, (_, i) => [
          `c${String(Math.floor(i / 2)).padStart(2, "0")}#${i % 2}`,
          { retrieval_hit_at_k: better && Math.floor(i / 2) < 9 ? 1 : 0 },
        ]),
      ),
    });
    const side = (file: string, better: boolean) => ({
      file,
      datasetHash: "d",
      k: 3,
      keys: ["retrieval_hit_at_k"],
      source: mk(better),
    });
    for (const resample of ["case", "turn"] as const) {
      const [row] = compareRuns(side("a", false), side("b", true), { resample });
      expect(row).toMatchObject({ n: 24, nCases: 12, diff: 0.75, unit: resample, significant: true });
      expect(row!.ci95![0]).toBeGreaterThan(0);
    }
  });

  it("refuses to pair runs of different datasets or k, naming the file and field", async () => {
    const a = await readRunSide(await write("x.json", await fixtureReport()));
    const other = await readRunSide(await write("y.json", await fixtureReport({ datasetHash: "ds-9999" })));
    const otherK = await readRunSide(await write("z.json", await fixtureReport({ k: 5 })));
    expect(() => compareRuns(a, other)).toThrow(DataValidationError);
    expect(() => compareRuns(a, other)).toThrow(/y\.json: field `datasetHash` cannot pair/);
    expect(() => compareRuns(a, otherK)).toThrow(/z\.json: field `k` cannot pair with .*x\.json: k=5 differs from k=3/);
  });

  it('reads a version 1 report (`"version": 1`) by migrating it, and passes unknown sections through', async () => {
    const { schemaVersion: _v, ...rest } = await fixtureReport();
    const v1 = await readRunSide(await write("v1.json", { version: 1, ...rest, customSection: { totalMs: 3 } }));
    const v2 = await readRunSide(await write("v2.json", await fixtureReport()));
    expect(v1.datasetHash).toBe(v2.datasetHash);
    expect(v1.keys).toEqual(v2.keys);
    expect((v1.source as unknown as Record<string, unknown>).schemaVersion).toBe(5);
    expect((v1.source as unknown as Record<string, unknown>).customSection).toEqual({ totalMs: 3 });
    expect(compareRuns(v1, v2).every((c) => c.diff === 0)).toBe(true);
  });

  it("rejects a file that is not a report or a baseline", async () => {
    await expect(readRunSide(await write("bad.json", { version: 7, turns: [] }))).rejects.toThrow(
      /bad\.json: field `schemaVersion` expected report schemaVersion 5 \(or 1, 2, 3 or 4, migrated on read\), got 7; it was written by a newer retrace/,
    );
    await expect(readRunSide(await write("nover.json", { turns: [] }))).rejects.toThrow(
      /nover\.json: field `schemaVersion` expected report schemaVersion 5 .*got none; is this a retrace report file\?/,
    );
    const { run: _run, ...noRun } = await fixtureReport();
    await expect(readRunSide(await write("norun.json", noRun))).rejects.toThrow(
      /norun\.json: field `run` missing required field; expected an object/,
    );
    const notJson = path.join(dir, "not.json");
    await writeFile(notJson, "{");
    // The line and column of the JSON error (src/kb/json.ts), then what the file should have been.
    await expect(readRunSide(notJson)).rejects.toThrow(
      /not\.json:1:2: malformed JSON \(expected a property name in double quotes, got the end of the input\); expected a retrace report or baseline JSON file/,
    );
  });
});

describe("retrace compare", () => {
  it("prints one row per metric with n, means, difference, CI and p; exit 2 on unpairable runs", async () => {
    const a = await write("cli-a.json", await fixtureReport());
    const b = await write("cli-b.json", await fixtureReport());
    const r = await runCli(["compare", a, b]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/^metric\s+n turns\s+n cases\s+A\s+B\s+B − A\s+95% CI \(cases\)\s+p\s+p adj \(m\)$/m);
    expect(r.stdout).toMatch(
      /^hit@3\s+4\s+3\s+0\.750\s+0\.750\s+\+0\.000\s+\[\+0\.000, \+0\.000\]\s+1\.000\s+1\.000 \(1\)\s+not significant$/m,
    );
    expect(r.stdout).toContain("resampling unit: case, 2000 resamples, seed 42");
    const turn = await runCli(["compare", a, b, "--config", '{"run":{"resample":"turn"}}', "--json"]);
    expect(turn.exitCode).toBe(0);
    expect(JSON.parse(turn.stdout).method).toMatchObject({ unit: "turn", seed: 42, samples: 2000 });
    const c = await write("cli-c.json", await fixtureReport({ datasetHash: "ds-other" }));
    const bad = await runCli(["compare", a, c]);
    expect(bad.exitCode).toBe(2);
    expect(bad.stdout).toBe("");
    expect(bad.stderr).toContain("field `datasetHash` cannot pair");
  }, 150_000); // three CLI processes: slow on a loaded 2-core machine

  it("an unknown --resample unit is a usage error on both commands that take it (exit 2, before anything runs)", async () => {
    for (const [args, message] of [
      [
        ["compare", "a.json", "b.json", "--config", '{"run":{"resample":"cluster"}}'],
        'field `run.resample` expected one of case, turn, got "cluster"',
      ],
      [
        ["eval", "--config", '{"run":{"resample":"cluster"}}'],
        'field `run.resample` expected one of case, turn, got "cluster"',
      ],
    ] as const) {
      const bad = await runCli([...args]);
      expect(bad.exitCode).toBe(2);
      expect(bad.stderr).toContain(message);
    }
  }, 120_000);
});
