/**
 * The project file (src/cli/project.ts, docs/configuration.md "The project
 * file"): `retrace init` writes retrace.config.json from the flags of a run;
 * then, in that folder or below, `retrace eval`, `eval --update-baseline`,
 * `trace CASE` and `label` need no flags and run the user's graph; a flag
 * typed wins; package.json's "retrace" key works the same; a bad key is exit
 * 2 naming the file and the key. Through the real bin, on the user-style
 * graph test/fixtures/graphs/kb-agent.mjs over a copy of the mini KB.
 */
import { existsSync } from "node:fs";
import { cp, mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Report } from "../../src/eval/report/types.js";
import { tempDir } from "../helpers/chroma.js";
import { ROOT, runCli } from "../helpers/cli.js";
import { MINI_KB } from "../helpers/fixtures.js";

const GRAPH = path.join(ROOT, "test", "fixtures", "graphs", "kb-agent.mjs");
let dir: string;
let cleanup: () => Promise<void>;
let env: Record<string, string>;

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir("project-file"));
  await cp(MINI_KB, path.join(dir, "kb"), { recursive: true });
  env = { KB_AGENT_KB: path.join(dir, "kb") };
});
afterAll(async () => cleanup());

describe("a configured project", () => {
  it("init writes the file; eval, eval --update-baseline, trace and label then need no flags", async () => {
    const init = await runCli(["init", "--graph", GRAPH, "--kb", "kb", "--config", '{"run":{"concurrency":2}}'], {
      cwd: dir,
    });
    expect(init.exitCode, init.stderr).toBe(0);
    const written = JSON.parse(await readFile(path.join(dir, "retrace.config.json"), "utf8"));
    expect(written).toEqual({ version: 1, graph: GRAPH, kb: "kb", run: { concurrency: 2 } });
    const again = await runCli(["init", "--kb", "kb"], { cwd: dir });
    expect(again.exitCode).toBe(2); // kept unless --force

    const r = await runCli(["eval", "--json"], { cwd: dir, env });
    expect(r.exitCode, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as Report;
    expect(report.run.graph).toBeDefined(); // the user's graph ran, not retrace's own
    expect(report.turns.length).toBeGreaterThan(0);

    const u = await runCli(["eval", "--update-baseline"], { cwd: dir, env });
    expect(u.exitCode, u.stderr).toBe(0);
    expect(existsSync(path.join(dir, "kb", "eval", "baseline.json"))).toBe(true);

    // From a folder below: the file is found upward, its paths are relative to its own folder.
    await mkdir(path.join(dir, "sub"), { recursive: true });
    const t = await runCli(["trace", "en-freeze-001"], { cwd: path.join(dir, "sub"), env });
    expect(t.exitCode, t.stderr).toBe(0);
    expect(t.stdout).toContain("how do I lock my card?");

    const l = await runCli(["label"], { cwd: dir, env });
    expect(l.exitCode, l.stderr).toBe(0);
    expect(existsSync(path.join(dir, "label.html"))).toBe(true);
  }, 180_000);

  it("a flag typed wins over the file; package.json's retrace key is read the same way, gates included", async () => {
    const pkgDir = path.join(dir, "pkg");
    await mkdir(pkgDir, { recursive: true });
    await writeFile(
      path.join(pkgDir, "package.json"),
      JSON.stringify({ name: "bot", retrace: { graph: GRAPH, kb: "../kb", gates: ["min-hit=0.01"] } }),
    );
    const r = await runCli(["eval", "--json"], { cwd: pkgDir, env });
    expect(r.exitCode, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as Report;
    expect(report.gate!.checks!.map((c) => c.option)).toContain("--gate min-hit=0.010");
    // A gate typed replaces the file's.
    const typed = await runCli(["eval", "--json", "--gate", "min-hit=1"], { cwd: pkgDir, env });
    const checks = (JSON.parse(typed.stdout) as Report).gate!.checks!.map((c) => c.option);
    expect(checks).toContain("--gate min-hit=1.000");
    expect(checks).not.toContain("--gate min-hit=0.010");
  }, 120_000);

  it("an unknown key is exit 2 naming the file and the key, before anything runs", async () => {
    const bad = path.join(dir, "bad");
    await mkdir(bad, { recursive: true });
    await writeFile(path.join(bad, "retrace.config.json"), JSON.stringify({ version: 1, grpah: "./agent.ts" }));
    const r = await runCli(["eval"], { cwd: bad, env });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("retrace.config.json");
    expect(r.stderr).toContain("unknown key grpah");
    expect(r.stdout).toBe("");
  });
});
