/**
 * `retrace label --merge`'s "Next:" lines (src/cli/next-steps.ts
 * `mergeNextSteps`): a labelling run may pool a graph and a recording
 * (`--pool graph,recorded` with `--graph` and `--traces`), and its merge is
 * given both; `eval` scores one source a run and refuses `--graph` with
 * `--traces`, so each gets an eval line of its own, and the recording's line
 * runs as printed.
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import { mergeNextSteps } from "../../src/cli/next-steps.js";
import { ROOT, runCli } from "../helpers/cli.js";

const DIR = path.join(ROOT, "test", "fixtures", "traces");
const evalLines = (lines: string[]) =>
  lines.map((l) => /(score [^:]+) on them: npx retrace eval (.*)$/.exec(l)).filter((m) => m !== null);

describe("label --merge's next steps", () => {
  it("with --graph and --traces: one eval line per source, never both in one", () => {
    const lines = mergeNextSteps(
      { graph: "agent.mjs#graph", traces: "rec.jsonl", catalog: "cat.tsv", input: "in.mjs", idKey: "doc_id" },
      "cases.jsonl",
    );
    const evals = evalLines(lines);
    // In the source registry's order (src/app/sources/registry.ts SOURCES: recorded traces, then a graph).
    expect(evals.map((m) => m[1])).toEqual(["score the recording", "score your graph"]);
    expect(evals[0]![2]).toBe("--traces rec.jsonl --catalog cat.tsv --id-key doc_id --cases cases.jsonl");
    expect(evals[1]![2]).toBe(
      "--graph agent.mjs#graph --catalog cat.tsv --id-key doc_id --input in.mjs --cases cases.jsonl",
    );
  });

  it("with one source: one eval line, as before", () => {
    expect(evalLines(mergeNextSteps({ traces: "rec.jsonl", catalog: "cat.tsv" }, "c.jsonl")).map((m) => m[2])).toEqual([
      "--traces rec.jsonl --catalog cat.tsv --cases c.jsonl",
    ]);
    expect(evalLines(mergeNextSteps({ graph: "g.mjs", catalog: "cat.tsv" }, "c.jsonl")).map((m) => m[2])).toEqual([
      "--graph g.mjs --catalog cat.tsv --cases c.jsonl",
    ]);
  });

  it("the recording's line, as printed for a run given both, is an eval the CLI runs", async () => {
    const rec = path.join(DIR, "langsmith.runs.jsonl");
    const cases = path.join(DIR, "cases.jsonl");
    const lines = mergeNextSteps(
      { graph: "agent.mjs", traces: rec, catalog: path.join(DIR, "catalog.tsv"), input: "in.mjs" },
      cases,
    );
    const line = evalLines(lines).find((m) => m[1] === "score the recording")!;
    const args = line[2]!.split(" ").map((a) => a.replace(/^'(.*)'$/, "$1"));
    const r = await runCli(["eval", ...args, "-k", "3"]);
    expect(r.stderr).not.toMatch(/is not used with --traces/);
    expect([0, 1]).toContain(r.exitCode);
  });
});
