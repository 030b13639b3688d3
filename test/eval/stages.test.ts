/**
 * A retrieval stage is declared once (src/eval/report/stages.ts): the
 * pipeline, the trace's stages, a captured turn's groups, the funnel's rows
 * and what a run needs to measure each stage all derive from that one table,
 * and `retrace eval`'s stage gates are checked against it before the run.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../helpers/cli.js";
import { checkEvalOptions, type EvalOptions } from "../../src/app/eval-plan.js";
import { FUNNEL_STAGES as FROM_FUNNEL_STATS } from "../../src/eval/report/funnel-stats.js";
import { CAPTURED_STAGES, FUNNEL_STAGES, STAGES, stageMeasured, TRACE_STAGES } from "../../src/eval/report/stages.js";

describe("the stage declaration", () => {
  it("gives every list its stages in one order", () => {
    expect(FUNNEL_STAGES.map((s) => s.id)).toEqual([
      "query",
      "dense",
      "bm25",
      "fused",
      "reranked",
      "parents",
      "child",
      "scored",
      "final",
    ]);
    expect(FROM_FUNNEL_STATS).toBe(FUNNEL_STAGES);
    expect(TRACE_STAGES).toEqual(["dense", "bm25", "fused", "reranked", "parents"]);
    expect(STAGES.map((s) => s.id)).toEqual([...TRACE_STAGES, "final"]);
    expect(CAPTURED_STAGES.map((s) => [s.id, s.label])).toEqual([
      ["child", "child runs"],
      ["scored", "scored calls"],
    ]);
    expect(STAGES.find((s) => s.id === "fused")).toEqual({
      id: "fused",
      label: "fused",
      position: "after fusion",
      lostAt: "fusion",
      branch: false,
      color: "#6a3d9a",
    });
  });

  it("says which stages a run measures: the query with counterfactual retrieval, reranked with a reranker, one branch in a one-branch mode", () => {
    const full = { counterfactual: true, rerank: true, mode: "hybrid" as const };
    expect(FUNNEL_STAGES.filter((s) => stageMeasured(s.id, full)).map((s) => s.id)).toEqual(
      FUNNEL_STAGES.map((s) => s.id),
    );
    const bare = { counterfactual: false, rerank: false, mode: "dense" as const };
    expect(FUNNEL_STAGES.filter((s) => stageMeasured(s.id, bare)).map((s) => s.id)).toEqual([
      "dense",
      "fused",
      "parents",
      "child",
      "scored",
      "final",
    ]);
    expect(stageMeasured("dense", { ...full, mode: "bm25" })).toBe(false);
    expect(stageMeasured("bm25", { ...full, mode: "bm25" })).toBe(true);
    expect(stageMeasured("rerank", full)).toBe(false); // not a stage: the name is `reranked`
  });

  it("retrace eval refuses a stage gate on a stage the run will not measure, naming the ones it will", () => {
    const o = { minStage: { reranked: 0.5 } } as unknown as EvalOptions;
    expect(() => checkEvalOptions(o)).toThrow(/reranked/);
    expect(() => checkEvalOptions(o)).toThrow(/query, dense, bm25, fused, parents, child, scored, final/);
    expect(() => checkEvalOptions({ minStage: { fused: 0.5 } } as unknown as EvalOptions)).not.toThrow();
  });
});

/** Every stage id (written out here, not read from the code). */
const STAGE_IDS = ["query", "dense", "bm25", "fused", "reranked", "parents", "child", "scored", "final"];

/** Lists of three or more stage ids in one array literal or union type of `text`: a second declaration of the stages. */
function stageLists(text: string): string[] {
  const id = `"(?:${STAGE_IDS.join("|")})"`;
  const list = new RegExp(`\\[\\s*${id}(?:\\s*,\\s*${id}){2,}|${id}(?:\\s*\\|\\s*${id}){2,}`, "g");
  return [...text.matchAll(list)].map((m) => m[0]);
}

describe("a stage is declared once (issue 55)", () => {
  it("the check finds a list of stages, in an array or a union type", () => {
    expect(stageLists(`const S = ["dense", "bm25", "fused"];`)).toHaveLength(1);
    expect(stageLists(`type T = "fused" | "reranked" | "parents";`)).toHaveLength(1);
    expect(stageLists(`const modes = ["bm25", "dense", "hybrid"];`)).toEqual([]); // retrieval modes, two stage names
  });

  it("no source file but src/eval/report/stages.ts lists the stages", () => {
    const found: string[] = [];
    const walk = (dir: string) => {
      for (const e of readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
        const rel = `${dir}/${e.name}`;
        if (e.isDirectory()) walk(rel);
        else if (e.name.endsWith(".ts") && !e.name.includes(".generated.") && rel !== "src/eval/report/stages.ts")
          for (const l of stageLists(readFileSync(path.join(ROOT, rel), "utf8"))) found.push(`${rel}: ${l}`);
      }
    };
    walk("src");
    expect(found).toEqual([]);
  });
});
