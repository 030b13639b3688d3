/**
 * A baseline that parses but cannot be a baseline is exit 2 before the sweep,
 * naming the file and the field — never a gate failure (exit 1), which CI
 * reads as a retrieval regression (docs/gates-and-exit-codes.md): its
 * aggregates emptied, `perTurn` entries removed, or a turn of another case.
 * Through the real bin, for retrace's own graph (store `memory`) and for
 * `--graph` (whose module is never loaded: a graph that records its
 * invocations shows none).
 */
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "../helpers/chroma.js";
import { ROOT, runCli } from "../helpers/cli.js";
import { MINI_KB } from "../helpers/fixtures.js";

type BaselineJson = { aggregates: Record<string, { n: number }>; perTurn: Record<string, Record<string, number>> };

let dir: string;
let cleanup: () => Promise<void>;
let own: BaselineJson;
let graph: BaselineJson;
const GRAPH = path.join(ROOT, "test", "fixtures", "graphs", "kb-agent.mjs");
const env = { KB_AGENT_KB: MINI_KB };

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir("corrupt-baseline"));
  const a = await runCli([
    "eval",
    "--kb",
    MINI_KB,
    "--store",
    "memory",
    "--baseline",
    path.join(dir, "own.json"),
    "--update-baseline",
  ]);
  expect(a.exitCode, a.stderr).toBe(0);
  own = JSON.parse(await readFile(path.join(dir, "own.json"), "utf8")) as BaselineJson;
  const g = await runCli(
    ["eval", "--graph", GRAPH, "--kb", MINI_KB, "--baseline", path.join(dir, "graph.json"), "--update-baseline"],
    { env },
  );
  expect(g.exitCode, g.stderr).toBe(0);
  graph = JSON.parse(await readFile(path.join(dir, "graph.json"), "utf8")) as BaselineJson;
}, 120_000);
afterAll(async () => cleanup());

const damages: [string, (b: BaselineJson) => void, RegExp][] = [
  [
    "aggregates emptied",
    (b) => void (b.aggregates = {}),
    /field `aggregates\.retrieval_hit_at_k` missing, though \d+ turns in perTurn carry retrieval_hit_at_k/,
  ],
  [
    "a perTurn entry deleted",
    (b) => void delete b.perTurn[Object.keys(b.perTurn).find((k) => "retrieval_hit_at_k" in b.perTurn[k]!)!],
    /field `aggregates\.retrieval_hit_at_k\.n` (\d+) turns, but perTurn holds retrieval_hit_at_k for \d+: the file is damaged/,
  ],
  [
    "a turn of another case",
    (b) => {
      const [key, scores] = Object.entries(b.perTurn)[0]!;
      delete b.perTurn[key];
      b.perTurn["no-such-case#0"] = scores;
    },
    /field `perTurn\.no-such-case#0` names no turn of the eval cases/,
  ],
];

describe("a damaged baseline is refused before the sweep (exit 2, file and field)", () => {
  for (const [what, damage, message] of damages) {
    it(`retrace's own graph: ${what}`, async () => {
      const file = path.join(dir, `own-${what.replace(/\W+/g, "-")}.json`);
      const b = structuredClone(own);
      damage(b);
      await writeFile(file, JSON.stringify(b, null, 2));
      const r = await runCli([
        "eval",
        "--kb",
        MINI_KB,
        "--store",
        "memory",
        "--baseline",
        file,
        "--gate",
        "max-flips=0",
      ]);
      expect(r.exitCode, r.stderr).toBe(2);
      expect(r.stdout).toBe(""); // no report: nothing ran
      expect(r.stderr).toContain(file);
      expect(r.stderr).toMatch(message);
    });

    it(`--graph: ${what}`, async () => {
      const file = path.join(dir, `graph-${what.replace(/\W+/g, "-")}.json`);
      const b = structuredClone(graph);
      damage(b);
      await writeFile(file, JSON.stringify(b, null, 2));
      const r = await runCli(["eval", "--graph", GRAPH, "--kb", MINI_KB, "--baseline", file, "--gate", "max-flips=0"], {
        env,
      });
      expect(r.exitCode, r.stderr).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr).toContain(file);
      expect(r.stderr).toMatch(message);
    });
  }

  it("the undamaged baselines gate both runs (exit 0): the refusals above come from the damage", async () => {
    const a = await runCli([
      "eval",
      "--kb",
      MINI_KB,
      "--store",
      "memory",
      "--baseline",
      path.join(dir, "own.json"),
      "--gate",
      "max-flips=0",
    ]);
    expect(a.exitCode, a.stderr).toBe(0);
    const g = await runCli(
      ["eval", "--graph", GRAPH, "--kb", MINI_KB, "--baseline", path.join(dir, "graph.json"), "--gate", "max-flips=0"],
      { env },
    );
    expect(g.exitCode, g.stderr).toBe(0);
    expect(existsSync(path.join(dir, "graph.json"))).toBe(true);
  });
});
