/**
 * A graph has one identity wherever the command runs from
 * (docs/evaluate-your-graph.md, "One identity wherever you run from"): the
 * module relative to its project (the nearest package.json above it), so a
 * baseline written from the project root gates a run started in the graph's
 * own folder or from anywhere with its absolute path; each package of a
 * monorepo is its own project; and a baseline that named the module relative
 * to the folder it was written from is still read (migrated, with a note).
 * Through the real bin, on a copy of a user-style graph
 * (test/fixtures/graphs/kb-agent.mjs) laid out in a project of its own.
 */
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, runCli } from "../helpers/cli.js";
import { MINI_KB } from "../helpers/fixtures.js";

const GRAPH = path.join(ROOT, "test", "fixtures", "graphs", "kb-agent.mjs");
const env = { KB_AGENT_KB: MINI_KB };
let dir: string;
let project: string;
let baseline: string;

async function layOut(root: string, files: Record<string, string>): Promise<void> {
  for (const [rel, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, rel)), { recursive: true });
    if (content === "GRAPH") await cp(GRAPH, path.join(root, rel));
    else await writeFile(path.join(root, rel), content);
  }
  await symlink(path.join(ROOT, "node_modules"), path.join(root, "node_modules"), "dir");
}

const sourceOf = async (file: string) => (JSON.parse(await readFile(file, "utf8")) as { source: unknown }).source;
const graphSource = (module: string) => ({ kind: "graph", module, exportName: "graph" });

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "retrace-graph-identity-"));
  project = path.join(dir, "project");
  await layOut(project, {
    "package.json": '{"name":"my-agent","private":true,"type":"module"}\n',
    "sub/agent.mjs": "GRAPH",
  });
  baseline = path.join(dir, "baseline.json");
  const w = await runCli(
    ["eval", "--graph", "sub/agent.mjs", "--kb", MINI_KB, "--baseline", baseline, "--update-baseline"],
    { cwd: project, env },
  );
  expect(w.stderr).not.toMatch(/error/i);
  expect(w.exitCode).toBe(0);
}, 120_000);
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("a --graph baseline is found by the module's place in its project", () => {
  it("is written with the module relative to the project root", async () => {
    expect(await sourceOf(baseline)).toEqual(graphSource("sub/agent.mjs"));
  });

  it("gates a run started inside sub/ with --graph ./agent.mjs, and one with the absolute path from elsewhere", async () => {
    for (const [cwd, spec] of [
      [path.join(project, "sub"), "./agent.mjs"],
      [path.join(project, "sub"), "agent.mjs"],
      [os.tmpdir(), path.join(project, "sub", "agent.mjs")],
    ] as const) {
      const r = await runCli(
        ["eval", "--graph", spec, "--kb", MINI_KB, "--baseline", baseline, "--gate", "max-flips=0", "--json"],
        { cwd, env },
      );
      expect(r.stderr, `${cwd} ${spec}`).not.toContain("Cannot compare with the baseline");
      expect(r.exitCode, `${cwd} ${spec}: ${r.stderr}`).toBe(0);
      const report = JSON.parse(r.stdout) as {
        run: { source: string; embedder: string | null; graph: { file: string } };
        gate: { passed: boolean };
      };
      expect(report.run.source).toBe("graph");
      expect(report.run.embedder).toBeNull();
      expect(report.run.graph.file).toBe("sub/agent.mjs");
      expect(report.gate.passed).toBe(true);
    }
  }, 240_000);

  it("a monorepo's package is its own project: the module is named relative to the package", async () => {
    const mono = path.join(dir, "mono");
    await layOut(mono, {
      "package.json": '{"name":"mono","private":true,"workspaces":["packages/*"]}\n',
      "packages/bot/package.json": '{"name":"bot","type":"module"}\n',
      "packages/bot/agent.mjs": "GRAPH",
    });
    const file = path.join(dir, "mono-baseline.json");
    const w = await runCli(
      ["eval", "--graph", "packages/bot/agent.mjs", "--kb", MINI_KB, "--baseline", file, "--update-baseline"],
      { cwd: mono, env },
    );
    expect(w.exitCode).toBe(0);
    expect(await sourceOf(file)).toEqual(graphSource("agent.mjs"));
  }, 120_000);

  it("a baseline naming the module relative to the folder it was written from is read (migrated) with a note", async () => {
    // What the previous rule wrote when --update-baseline ran in the project's parent folder, in the shape retrace wrote
    // then (baseline version 3: the graph named in `config.embedder` as `graph:<module>#<export>`, no `source`).
    const legacy = path.join(dir, "legacy-baseline.json");
    const { source: _source, ...b } = JSON.parse(await readFile(baseline, "utf8")) as {
      schemaVersion: number;
      source: unknown;
      config: { embedder: string | null };
      graph: { module: string };
    };
    b.schemaVersion = 3;
    b.config.embedder = "graph:project/sub/agent.mjs#graph";
    b.graph.module = "project/sub/agent.mjs";
    await writeFile(legacy, JSON.stringify(b, null, 2));
    const r = await runCli(
      ["eval", "--graph", "./agent.mjs", "--kb", MINI_KB, "--baseline", legacy, "--gate", "max-flips=0"],
      { cwd: path.join(project, "sub"), env },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toContain(
      "names the graph module project/sub/agent.mjs (relative to the folder it was written from); read as sub/agent.mjs",
    );
    // Another module of the same name elsewhere is not taken for it.
    const other = path.join(dir, "other");
    await layOut(other, { "package.json": '{"name":"other","type":"module"}\n', "agent.mjs": "GRAPH" });
    const refused = await runCli(
      ["eval", "--graph", "./agent.mjs", "--kb", MINI_KB, "--baseline", legacy, "--gate", "max-flips=0"],
      { cwd: other, env },
    );
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain(
      'its `source` is "--graph project/sub/agent.mjs#graph" but this run\'s is "--graph agent.mjs#graph"',
    );
  }, 240_000);
});
