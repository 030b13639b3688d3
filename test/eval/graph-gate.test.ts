/**
 * The gate and baseline of `--graph` runs (docs/evaluate-your-graph.md,
 * "Baselines"), without the CLI: the graph's identity (module relative to the
 * project root), the scoring a baseline records and the refusals / notes of a
 * comparison, the default tolerance, `--max-errors` / `--max-no-retrieval`
 * as gate checks, and JUnit marking the turns such a check counted.
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import { applyGate } from "../../src/app/report.js";
import { BaselineMismatchError } from "../../src/errors.js";
import {
  assertComparable,
  baselineFromReport,
  GRAPH_SCORING_MISSING,
  graphScoringDifferences,
  storeKindOf,
} from "../../src/eval/gate/baseline.js";
import { sameSource } from "../../src/eval/gate/run-source.js";
import { DEFAULT_MAX_DROP, defaultMaxDrop } from "../../src/eval/gate/gate.js";
import { renderJUnit, renderTable } from "../../src/eval/report/render.js";
import type { BaselineGraph } from "../../src/eval/report/schemas.js";
import type { GraphRunInfo, Report } from "../../src/eval/report/types.js";
import { graphGateChecks } from "../../src/eval/sweep/graph-checks.js";
import { fixtureReport } from "./report-fixture.js";

const HASH_A = "a".repeat(64);
const HASH_B = "b".repeat(64);
const graphInfo = (over: Partial<GraphRunInfo> = {}): GraphRunInfo => ({
  file: "agent.mjs",
  exportName: "graph",
  moduleHash: HASH_A,
  retrievers: ["R"],
  idKey: "metadata.parentId",
  retrievalCall: "last",
  errors: 0,
  noRetrieval: 0,
  ...over,
});
const graphReport = (over: Partial<GraphRunInfo> = {}) =>
  fixtureReport({ store: "graph", storeKind: "graph", source: "graph", embedder: null, graph: graphInfo(over) });

describe("the graph's identity", () => {
  it("graph.mjs, ./graph.mjs and its absolute path under the root are one graph; another module or export is another", () => {
    const root = path.resolve("/project/root");
    const g = (module: string, exportName = "graph") => ({ kind: "graph" as const, module, exportName });
    for (const m of ["./graph.mjs", path.join(root, "graph.mjs"), "src/../graph.mjs"])
      expect(sameSource(g(m), g("graph.mjs"), root), m).toBe(true);
    expect(sameSource(g("other.mjs"), g("graph.mjs"), root)).toBe(false);
    expect(sameSource(g("graph.mjs", "agent"), g("graph.mjs"), root)).toBe(false);
    expect(sameSource({ kind: "traces" }, g("graph.mjs"), root)).toBe(false);
    expect(sameSource({ kind: "own" }, { kind: "traces" }, root)).toBe(false);
    expect(sameSource({ kind: "traces" }, { kind: "traces" }, root)).toBe(true);
  });

  it("a graph run's store kind is graph, never remote", async () => {
    expect(storeKindOf("graph")).toBe("graph");
    const b = baselineFromReport(await graphReport());
    expect(b.storeKind).toBe("graph");
    expect(b.graph).toEqual({
      module: "agent.mjs",
      exportName: "graph",
      moduleHash: HASH_A,
      retrievalCall: "last",
      idKey: "metadata.parentId",
      idMapHash: null,
      configurableHash: null,
    });
  });
});

describe("comparing with a graph baseline", () => {
  const scoring = (over: Partial<BaselineGraph> = {}): BaselineGraph => ({
    module: "agent.mjs",
    exportName: "graph",
    moduleHash: HASH_A,
    retrievalCall: "last",
    idKey: "metadata.parentId",
    idMapHash: null,
    configurableHash: null,
    ...over,
  });

  it("refuses another retrieval-call mode, id key or id map, naming the field; notes a changed module or configurable", () => {
    expect(graphScoringDifferences(scoring(), scoring({ retrievalCall: "all" })).refusals.map((r) => r.field)).toEqual([
      "graph.retrievalCall",
    ]);
    expect(
      graphScoringDifferences(scoring(), scoring({ idKey: "metadata.source" })).refusals.map((r) => r.field),
    ).toEqual(["graph.idKey"]);
    expect(
      graphScoringDifferences(
        scoring({ idKey: "idMap (--id-map)", idMapHash: HASH_A }),
        scoring({ idKey: "idMap (--id-map)", idMapHash: HASH_B }),
      ).refusals.map((r) => r.field),
    ).toEqual(["graph.idMapHash"]);
    const same = graphScoringDifferences(scoring(), scoring({ moduleHash: HASH_B, configurableHash: HASH_A }));
    expect(same.refusals).toEqual([]);
    expect(same.notes[0]).toBe(
      "graph module changed since the baseline (agent.mjs: sha256 aaaaaaaaaaaa in the baseline, sha256 bbbbbbbbbbbb in this run); comparing anyway",
    );
    expect(same.notes[1]).toMatch(
      /^run.configurable differs \(none in the baseline, sha256 aaaaaaaaaaaa in this run\)/,
    );
    expect(graphScoringDifferences(scoring(), scoring())).toEqual({ refusals: [], notes: [] });
  });

  it("the gate throws BaselineMismatchError (exit 2) for a scoring change, and says what an old baseline is missing", async () => {
    const baseline = baselineFromReport(await graphReport());
    const other = await graphReport({ retrievalCall: "all" });
    expect(() => assertComparable(baseline, other)).toThrow(BaselineMismatchError);
    expect(() => assertComparable(baseline, other)).toThrow(/`graph\.retrievalCall` is "last" but this run's is "all"/);
    const edited = await graphReport({ moduleHash: HASH_B });
    expect(assertComparable(baseline, edited)).toEqual([
      expect.stringMatching(/^graph module changed since the baseline/),
    ]);
    const { graph: _graph, ...old } = baseline; // written before the scoring was recorded
    expect(assertComparable(old, other)).toEqual([GRAPH_SCORING_MISSING]);
  });

  it("a recording's baseline records how it was scored (no module hash): another retrieval call or id rule is refused", async () => {
    const traces = (over: Partial<GraphRunInfo> = {}) =>
      fixtureReport({
        store: "graph",
        storeKind: "graph",
        source: "traces",
        embedder: null,
        graph: graphInfo({ file: "traces", exportName: "recorded", moduleHash: undefined, ...over }),
      });
    const b = baselineFromReport(await traces());
    expect(b.source).toEqual({ kind: "traces" });
    expect(b.graph).toMatchObject({ moduleHash: null, retrievalCall: "last", idKey: "metadata.parentId" });
    expect(assertComparable(b, await traces())).toEqual([]);
    for (const [over, field] of [
      [{ retrievalCall: "all" }, "graph.retrievalCall"],
      [{ idKey: "metadata.id" }, "graph.idKey"],
    ] as const) {
      await expect(traces(over).then((r) => assertComparable(b, r))).rejects.toMatchObject({ field });
    }
  });

  it("the default tolerance of a graph run is DEFAULT_MAX_DROP (a graph may not be deterministic), and says so", async () => {
    const r = await graphReport();
    expect(defaultMaxDrop(baselineFromReport(r), r)).toEqual({
      maxDrop: DEFAULT_MAX_DROP,
      source: expect.stringMatching(/^default 0\.02: a --graph run/),
    });
    const own = await fixtureReport();
    expect(defaultMaxDrop(baselineFromReport(own), own).maxDrop).toBe(0);
  });
});

describe("--gate max-errors and max-no-retrieval are gate checks", () => {
  async function withBadTurns(): Promise<Report> {
    const r = await graphReport();
    r.turns[0] = { ...r.turns[0]!, error: "model exploded", results: [], retrievedIds: null };
    r.turns[1] = { ...r.turns[1]!, noRetrieval: true };
    return r;
  }

  it("each is a check with its verdict; --gate max-errors=0 is always checked", async () => {
    const r = await withBadTurns();
    const gold = r.turns[1]!.gold.length > 0;
    const { checks, failures } = graphGateChecks(r.turns, { maxErrors: 1, maxNoRetrieval: 0 });
    expect(checks.map((c) => [c.kind, c.option, c.observed, c.verdict])).toEqual([
      ["turn_errors", "--gate max-errors=1", 1, "pass"],
      ["no_retrieval", "--gate max-no-retrieval=0", gold ? 1 : 0, gold ? "fail" : "pass"],
    ]);
    expect(failures.map((f) => f.kind)).toEqual(gold ? ["no_retrieval"] : []);
    expect(graphGateChecks([], {}).checks.map((c) => c.option)).toEqual(["--gate max-errors=0"]);
  });

  it("applyGate lists them, so a run gated only by them is not 'no check was set'; JUnit fails the turns a failed check counted", async () => {
    const r = await withBadTurns();
    applyGate(r, {}, 42, null);
    expect(r.gate?.passed).toBe(false);
    expect(r.gate?.checks?.map((c) => c.option)).toEqual(["--gate max-errors=0"]);
    expect(renderTable(r, { color: false })).not.toMatch(/no floor or baseline check was set/);
    const xml = renderJUnit(r);
    expect(xml).toContain('<testcase classname="retrace.gate.turn_errors" name="--gate max-errors=0: turn_errors">');
    expect(xml).toContain('<failure message="the graph run threw: model exploded" type="turn_errors"/>');
    const ok = await graphReport();
    applyGate(ok, {}, 42, null);
    expect(ok.gate?.passed).toBe(true);
    expect(renderTable(ok, { color: false })).toMatch(
      /gate: PASS\n {2}passed checks \(1\): --gate max-errors=0 turn_errors/,
    );
  });

  it("one rule for every graph: an error turn of retrace's own graph fails its gate too; a clean run's gate lists no turn check", async () => {
    const own = await fixtureReport();
    expect(own.run.graph).toBeUndefined();
    const clean = structuredClone(own);
    applyGate(clean, {}, 42, null);
    expect(clean.gate?.passed).toBe(true);
    expect(clean.gate?.checks ?? []).toEqual([]);
    expect(renderTable(clean, { color: false })).toMatch(/no floor or baseline check was set/);
    own.turns[0] = { ...own.turns[0]!, error: "node exploded", givenUp: undefined, results: [], retrievedIds: null };
    applyGate(own, {}, 42, null);
    expect(own.gate?.passed).toBe(false);
    expect(own.gate?.failures.map((f) => f.kind)).toEqual(["turn_errors"]);
    expect(own.gate?.checks?.map((c) => [c.option, c.observed, c.verdict])).toEqual([
      ["--gate max-errors=0", 1, "fail"],
    ]);
    const tolerated = structuredClone(own);
    applyGate(tolerated, { maxErrors: 1 }, 42, null);
    expect(tolerated.gate?.passed).toBe(true);
    expect(tolerated.gate?.checks?.map((c) => [c.option, c.verdict])).toEqual([["--gate max-errors=1", "pass"]]);
  });
});
