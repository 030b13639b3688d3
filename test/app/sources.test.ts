/**
 * One rule per source (each source module of src/app/sources/ declares its own): the settings a source
 * does not use are refused by the use-case itself, for library callers as for
 * the CLI, before anything loads; a setting at its unset value is not a choice.
 */
import { describe, expect, it } from "vitest";
import {
  checkSourceSettings,
  runEval,
  runGraphEval,
  sourceKindOf,
  UNUSED_SETTINGS,
} from "../../src/app/sources/registry.js";
import { InvalidArgumentError } from "../../src/errors.js";

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
