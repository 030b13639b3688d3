/**
 * A run's identity has its own field (docs/schema-versions.md: report version
 * 5's `run.source`, baseline version 4's `source`); files written before it
 * named a `--graph` run by `embedder: "graph:<module>#<export>"` and recorded
 * traces by `graph:traces#recorded`. Those files are migrated on read and
 * give the verdicts they gave before.
 *
 * The four fixtures were written by retrace at e1e8fd9 (report version 4,
 * baseline version 3), from the repository root:
 * - report-v4-graph.json, baseline-v3-graph.json:
 *   `KB_AGENT_KB=test/fixtures/kb-mini retrace eval --graph test/fixtures/graphs/kb-agent.mjs --kb test/fixtures/kb-mini`
 *   with `--json`, and with `--update-baseline --baseline FILE`;
 * - report-v4-traces.json, baseline-v3-traces.json: `retrace eval --traces
 *   test/fixtures/traces/openinference.otlp.jsonl --catalog test/fixtures/traces/catalog.tsv --cases
 *   test/fixtures/traces/cases.jsonl --gate max-errors=1`, likewise.
 */
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { BaselineMismatchError } from "../../src/errors.js";
import {
  assertComparable,
  baselineFromReport,
  GRAPH_SCORING_MISSING,
  parseBaseline,
  type Baseline,
} from "../../src/eval/gate/baseline.js";
import { buildComparison, runSideOf } from "../../src/eval/gate/compare.js";
import { gate } from "../../src/eval/gate/gate.js";
import { runDifferences } from "../../src/eval/gate/run-diff.js";
import { parseReport, type Report } from "../../src/eval/report/schemas.js";

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/schema/${name}`, import.meta.url));
const raw = async (name: string) => JSON.parse(await readFile(fixture(name), "utf8")) as Record<string, unknown>;
const CREATED = new Date("2026-12-07T00:00:00.000Z");

describe("a baseline written before `source` (version 3) is migrated on read", () => {
  for (const [name, source] of [
    ["baseline-v3-graph.json", { kind: "graph", module: "test/fixtures/graphs/kb-agent.mjs", exportName: "graph" }],
    ["baseline-v3-traces.json", { kind: "traces" }],
  ] as const)
    it(`${name}: source ${source.kind}, embedder null, every other field and the key order kept`, async () => {
      const old = await raw(name);
      expect(old.schemaVersion).toBe(3);
      expect((old.config as { embedder: string }).embedder).toMatch(/^graph:/);
      const b = parseBaseline(old, name);
      expect(b.schemaVersion).toBe(4);
      expect(b.source).toEqual(source);
      expect(b.config).toEqual({ ...(old.config as object), embedder: null });
      const keys = Object.keys(old);
      keys.splice(keys.indexOf("config"), 0, "source");
      expect(Object.keys(b)).toEqual(keys);
      const { schemaVersion: _s1, config: _c1, ...restOld } = old;
      const { schemaVersion: _s2, config: _c2, source: _src, ...restNew } = b;
      expect(restNew).toStrictEqual(restOld);
      expect((old.config as { embedder: string }).embedder).toMatch(/^graph:/); // the input is not mutated
    });
});

describe("a report written before `run.source` (version 4) is migrated on read", () => {
  for (const [name, source] of [
    ["report-v4-graph.json", "graph"],
    ["report-v4-traces.json", "traces"],
  ] as const)
    it(`${name}: run.source ${source} just before embedder, embedder null, everything else kept`, async () => {
      const old = await raw(name);
      expect(old.schemaVersion).toBe(4);
      const r = parseReport(old, name);
      expect(r.schemaVersion).toBe(5);
      expect(r.run.source).toBe(source);
      expect(r.run.embedder).toBeNull();
      const oldRun = old.run as Record<string, unknown>;
      const keys = Object.keys(oldRun);
      keys.splice(keys.indexOf("embedder"), 0, "source");
      expect(Object.keys(r.run)).toEqual(keys);
      const { embedder: _e1, ...runOld } = oldRun;
      const { embedder: _e2, source: _s, ...runNew } = r.run;
      if (source === "traces") {
        // The recording's header words, filled in on read just after `format` (schemas/legacy-trace-words.ts).
        const { format, ...rest } = (runOld.graph as { traces: Record<string, unknown> }).traces;
        runOld.graph = {
          ...(runOld.graph as object),
          traces: { format, label: "OTLP/JSON", recordsName: "spans", ...rest },
        };
      }
      expect(runNew).toStrictEqual(runOld);
      const { run: _r1, schemaVersion: _v1, ...restOld } = old;
      const { run: _r2, schemaVersion: _v2, ...restNew } = r as unknown as Record<string, unknown>;
      expect(restNew).toStrictEqual(restOld);
    });

  it("a report that says source graph records its graph: without run.graph it is refused, naming the field", async () => {
    const r = parseReport(await raw("report-v4-graph.json"), "r.json");
    const { graph: _g, ...run } = r.run;
    expect(() => parseReport({ ...r, run }, "no-graph.json")).toThrow(
      "no-graph.json: field `run.graph` missing: a --graph run's report records its graph",
    );
  });

  it("a report of retrace's own graph keeps its embedder and reads as source own", async () => {
    const old = await raw("report-v3-retrieval.json");
    const r = parseReport(old, "report-v3-retrieval.json");
    expect(r.run.source).toBe("own");
    expect(r.run.embedder).toBe((old.run as { embedder: string }).embedder);
  });
});

describe("old-shaped files give the verdicts they gave before", () => {
  for (const kind of ["graph", "traces"] as const) {
    const read = async () => {
      const report = parseReport(await raw(`report-v4-${kind}.json`), "r.json");
      const old = parseBaseline(await raw(`baseline-v3-${kind}.json`), "b.json");
      // The baseline this retrace writes from the same run.
      const now = parseBaseline(JSON.parse(JSON.stringify(baselineFromReport(report, CREATED))), "new.json");
      return { report, old, now };
    };

    it(`${kind}: the gate compares the old baseline with the run, and its checks are those of the new baseline`, async () => {
      const { report, old, now } = await read();
      expect(now.source).toEqual(old.source);
      // The same notes, but that an old recording's baseline does not record how it was scored (a --traces baseline records it now).
      expect(assertComparable(now, report)).toEqual([]);
      expect(assertComparable(old, report)).toEqual(kind === "graph" ? [] : [GRAPH_SCORING_MISSING]);
      const thresholds = { maxDrop: 0, maxFlips: 0 };
      const before = gate(report, thresholds, old);
      expect(before.passed).toBe(true);
      expect(before.checks?.length).toBeGreaterThan(0);
      expect(before).toEqual(gate(report, thresholds, now));
    });

    it(`${kind}: retrace compare pairs the old report and the old baseline with no run difference and no delta`, async () => {
      const { report, old } = await read();
      expect(runDifferences(old, report)).toEqual([]);
      const c = buildComparison(runSideOf("b.json", old), runSideOf("r.json", report));
      expect(c.comparisons.length).toBeGreaterThan(0);
      expect(c.comparisons.every((x) => x.diff === 0)).toBe(true);
      expect(c.flips.turns).toEqual([]);
    });
  }

  it("an old graph baseline is refused for recorded traces and for retrace's own graph, naming both sources", async () => {
    const graphBaseline = parseBaseline(await raw("baseline-v3-graph.json"), "b.json");
    const traces = parseReport(await raw("report-v4-traces.json"), "r.json");
    const asOther = (b: Baseline, r: Report) => {
      try {
        assertComparable({ ...b, datasetHash: r.run.datasetHash, k: r.run.k }, r);
      } catch (e) {
        return e;
      }
      return undefined;
    };
    const refused = asOther(graphBaseline, traces);
    expect(refused).toBeInstanceOf(BaselineMismatchError);
    expect((refused as BaselineMismatchError).field).toBe("source");
    expect((refused as Error).message).toContain(
      'its `source` is "--graph test/fixtures/graphs/kb-agent.mjs#graph" but this run\'s is "recorded traces (--traces)"',
    );
    const own = parseReport(await raw("report-v3-retrieval.json"), "own.json");
    expect((asOther(graphBaseline, own) as BaselineMismatchError).field).toBe("source");
  });
});

describe("no `graph:` prefix is parsed outside the migration", () => {
  it("src/ names `graph:` (as an id, not a `graph: …` display label) only in src/eval/report/schemas/legacy-graph-id.ts", async () => {
    const root = fileURLToPath(new URL("../../src/", import.meta.url));
    const files = (await readdir(root, { recursive: true }))
      .filter((f) => f.endsWith(".ts") && !f.endsWith(".generated.ts"))
      .map((f) => f.split(path.sep).join("/"));
    expect(files.length).toBeGreaterThan(100);
    const found: string[] = [];
    for (const f of files) {
      const text = await readFile(path.join(root, f), "utf8");
      // A string starting `graph:` not followed by a space: an id (`"graph:"`, `` `graph:${…}` ``), or its parse.
      if (/["'`]graph:(?! )/u.test(text) || /GRAPH_PREFIX/u.test(text)) found.push(f);
    }
    expect(found).toEqual(["eval/report/schemas/legacy-graph-id.ts"]);
  });
});
