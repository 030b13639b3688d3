/**
 * One rule per source (each source module of src/app/sources/ declares its own): the settings a source
 * does not use are refused by the use-case itself, for library callers as for
 * the CLI, before anything loads; a setting at its unset value is not a choice.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import {
  checkSourceSettings,
  runEval,
  runGraphEval,
  sourceFlag,
  sourceFor,
  sourceKindOf,
  SOURCES,
  UNUSED_SETTINGS,
} from "../../src/app/sources/registry.js";
import { InvalidArgumentError } from "../../src/errors.js";
import { ROOT } from "../helpers/cli.js";

const KB = "test/fixtures/kb-mini";
const AGENT = "test/fixtures/graphs/kb-agent.mjs";

describe("the settings each source uses", () => {
  it("picks the source: traces over graph over retrace's own graph", () => {
    expect(sourceKindOf({})).toBe("own");
    expect(sourceKindOf({ graph: "g.ts" })).toBe("graph");
    expect(sourceKindOf({ traces: "t.jsonl" })).toBe("traces");
    expect(sourceKindOf({ graph: "g.ts", traces: "t.jsonl" })).toBe("traces");
  });

  it("refuses retrace's retriever settings with a graph through runEval, before the module loads", async () => {
    // The module does not exist: a refusal that came after loading it would be a different error.
    const run = runEval({ graph: "test/fixtures/graphs/no-such-graph.mjs", kb: KB, rerank: "model" });
    await expect(run).rejects.toThrow(InvalidArgumentError);
    await expect(run).rejects.toThrow(/`rerank` to be unset with --graph \(your graph brings its own store/);
  });

  it("refuses the contextualizer's window and worker threads with a graph, with their reasons", async () => {
    await expect(runEval({ graph: AGENT, kb: KB, history: 0 })).rejects.toThrow(/contextualizer/);
    await expect(runEval({ graph: AGENT, kb: KB, workers: 2 })).rejects.toThrow(/worker threads/);
  });

  it("refuses them through runGraphEval too (a caller's options object may carry any setting)", async () => {
    const o = { graph: AGENT, kb: KB, denseK: 20 } as Parameters<typeof runGraphEval>[0];
    await expect(runGraphEval(o)).rejects.toThrow(/`denseK` to be unset with --graph/);
  });

  it("refuses what runs a graph with recorded traces", () => {
    expect(() => checkSourceSettings({ traces: "t.jsonl", repeat: 3 })).toThrow(/`repeat` to be unset with --traces/);
    expect(() => checkSourceSettings({ traces: "t.jsonl", graph: AGENT })).toThrow(/`graph`/);
  });

  it("refuses graph-only settings for retrace's own graph", () => {
    expect(() => checkSourceSettings({ idKey: "doc_id" })).toThrow(/`idKey` to be unset without --graph or --traces/);
    expect(() => checkSourceSettings({ tracesFormat: "otlp" })).toThrow(/without --traces/);
  });

  it("leaves a setting at its unset value alone (the CLI's defaults are not choices)", () => {
    expect(() => checkSourceSettings({ graph: AGENT, store: "auto", mode: "hybrid", workers: 1 })).not.toThrow();
    expect(() => checkSourceSettings({ traces: "t.jsonl", repeat: 1, counterfactual: false })).not.toThrow();
    expect(() => checkSourceSettings({ retrievalCall: "last" })).not.toThrow();
    expect(() => checkSourceSettings({ retrievalCall: "all" })).toThrow(/retrievalCall/);
  });

  it("each source's lists name no setting twice", () => {
    for (const rules of Object.values(UNUSED_SETTINGS)) {
      const all = rules.flatMap((r) => r.settings);
      expect(new Set(all).size).toBe(all.length);
    }
  });
});

describe('the source registry (docs/architecture.md, "…a source")', () => {
  const DIR = path.join(ROOT, "src", "app", "sources");
  /** The source modules: every file of src/app/sources/ but the interface and the registry. */
  const moduleFiles = readdirSync(DIR)
    .filter((f) => f.endsWith(".ts") && f !== "source.ts" && f !== "registry.ts")
    .sort();

  it("registers every source module, once, each exporting the one source it declares", async () => {
    expect(moduleFiles).toEqual(["graph.ts", "own-graph.ts", "traces.ts"]);
    const exported: unknown[] = [];
    for (const f of moduleFiles) {
      const m = (await import(pathToFileURL(path.join(DIR, f)).href)) as Record<string, unknown>;
      const values = Object.values(m);
      expect(values, `${f} exports one source`).toHaveLength(1);
      exported.push(values[0]);
    }
    for (const s of exported) expect(SOURCES, "registered in src/app/sources/registry.ts").toContain(s);
    expect(SOURCES).toHaveLength(exported.length);
  });

  it("each source implements the interface: kind, selecting option, label, captures, rules, run", () => {
    const kinds = SOURCES.map((s) => s.kind);
    expect(new Set(kinds).size).toBe(kinds.length);
    for (const s of SOURCES) {
      expect(typeof s.run, s.kind).toBe("function");
      expect(s.label.length, s.kind).toBeGreaterThan(0);
      expect(s.captures.length, s.kind).toBeGreaterThan(20);
      expect(s.unused.length, s.kind).toBeGreaterThan(0);
      for (const rule of s.unused) expect(rule.mode).toMatch(/^(with|without) /);
    }
    // Exactly one default source, tried last (the first source whose option is given wins).
    expect(SOURCES.filter((s) => s.selectedBy === null).map((s) => s.kind)).toEqual(["own"]);
    expect(SOURCES.at(-1)!.selectedBy).toBeNull();
    expect(sourceFor({ graph: "g.mjs" })).toBe(SOURCES.find((s) => s.kind === "graph"));
    // The CLI's rules are the sources' own.
    for (const s of SOURCES) expect(UNUSED_SETTINGS[s.kind]).toBe(s.unused);
  });

  it("the architecture recipe names the registry and every source module", () => {
    const doc = readFileSync(path.join(ROOT, "docs", "architecture.md"), "utf8");
    const recipe = doc.slice(doc.indexOf("### …a source"), doc.indexOf("### …a CLI command"));
    expect(recipe.length).toBeGreaterThan(100);
    expect(recipe).toContain("src/app/sources/registry.ts");
    expect(recipe).toContain("src/app/sources/source.ts");
    expect(recipe).toContain("one module plus one registry line");
    for (const f of moduleFiles) expect(recipe).toContain(`src/app/sources/${f}`);
  });

  it("the source modules stay light: the CLI reads their rules without loading a graph, store or LangChain", () => {
    for (const f of [...moduleFiles, "source.ts", "registry.ts"]) {
      const text = readFileSync(path.join(DIR, f), "utf8");
      const statics = [...text.matchAll(/^import (?!type )[^;]*? from "([^"]+)";/gms)].map((m) => m[1]);
      for (const spec of statics)
        expect(spec, `${f} imports ${spec} statically`).toMatch(
          /^\.\/|^\.\.\/\.\.\/(errors|eval\/sweep\/(turns|turn-guard))\.js$/,
        );
    }
  });
});

describe("sourceFlag: the option selecting a run's source, as a command line spells it", () => {
  it("names the recording over a graph, the graph module, and nothing for retrace's own graph", () => {
    expect(sourceFlag({ traces: "t.jsonl", graph: "g.mjs" })).toBe(" --traces t.jsonl");
    expect(sourceFlag({ graph: "agent.ts#graph" })).toBe(" --graph agent.ts#graph");
    expect(sourceFlag({})).toBe("");
  });
});
