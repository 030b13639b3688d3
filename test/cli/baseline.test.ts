import { describe, expect, it } from "vitest";
import { BaselineMismatchError } from "../../src/errors.js";
import {
  checkBaselineBeforeRun,
  defaultBaselineFile,
  evalCommandLine,
  predictEmbedderId,
  suggestFloors,
  type RunIntent,
} from "../../src/app/baseline.js";
import { renderFloors } from "../../src/cli/commands/report.js";
import { parseFloors } from "../../src/cli/floor-options.js";
import { baselineFromReport } from "../../src/eval/gate/baseline.js";
import { fixtureReport } from "../eval/report-fixture.js";

const intent = (over: Partial<RunIntent> = {}): RunIntent => ({
  kb: "my-kb",
  k: 3,
  mode: "hybrid",
  embedder: "builtin",
  baselineFile: "my-kb/eval/baseline.json",
  baselineIsDefault: true,
  ...over,
});
const plan = { datasetHash: "ds-1111", fullDatasetHash: "ds-1111", selected: 4, total: 4 };

describe("baseline file and command lines", () => {
  it("the default baseline follows the KB", () => {
    expect(defaultBaselineFile("my-kb")).toBe("my-kb/eval/baseline.json");
    expect(defaultBaselineFile("kb")).toBe("kb/eval/baseline.json");
  });

  it("spells the eval command back with only the options that differ from the defaults", () => {
    expect(evalCommandLine(intent({ kb: "kb", k: 5, embedder: "auto" }))).toBe("retrace eval");
    expect(evalCommandLine(intent({ locale: ["en"], case: ["a b"] }))).toBe(
      'retrace eval --kb my-kb -k 3 --config \'{"retrieval":{"embedder":"builtin"}}\' --locale en --case \'a b\'',
    );
    expect(
      evalCommandLine(intent({ locale: ["en"], baselineIsDefault: false, baselineFile: "b.json" }), {
        filters: null,
        update: "",
      }),
    ).toBe(
      'retrace eval --kb my-kb -k 3 --config \'{"retrieval":{"embedder":"builtin"}}\' --baseline b.json --update-baseline',
    );
  });
});

describe("checkBaselineBeforeRun", () => {
  it("accepts a baseline of the same dataset, k and configuration", async () => {
    const b = baselineFromReport(await fixtureReport({ embedder: "builtin-hashed-ngrams-384-v1" }));
    expect(() => checkBaselineBeforeRun(b, intent(), plan, "builtin-hashed-ngrams-384-v1")).not.toThrow();
  });

  it("names a --locale/--case subset of the full set, and the command that compares the full run", async () => {
    const b = baselineFromReport(await fixtureReport());
    const sub = { datasetHash: "ds-sub", fullDatasetHash: "ds-1111", selected: 2, total: 4 };
    expect(() => checkBaselineBeforeRun(b, intent({ locale: ["en"] }), sub)).toThrow(BaselineMismatchError);
    expect(() => checkBaselineBeforeRun(b, intent({ locale: ["en"] }), sub)).toThrow(
      'my-kb/eval/baseline.json covers all 4 cases but --locale/--case selects 2; compare the full run with `retrace eval --kb my-kb -k 3 --config \'{"retrieval":{"embedder":"builtin"}}\'`',
    );
    // changed cases: re-create
    expect(() =>
      checkBaselineBeforeRun(b, intent(), { ...plan, datasetHash: "ds-new", fullDatasetHash: "ds-new" }),
    ).toThrow(
      'was written for other eval cases (the cases changed since); to replace it with this run\'s results instead, run `retrace eval --kb my-kb -k 3 --config \'{"retrieval":{"embedder":"builtin"}}\' --update-baseline`',
    );
  });

  it("k, mode, reranking and the built-in embedder, each with the command that matches the baseline", async () => {
    const b = baselineFromReport(await fixtureReport());
    expect(() => checkBaselineBeforeRun(b, intent({ k: 5 }), plan)).toThrow(
      'compare at the baseline\'s k with `retrace eval --kb my-kb -k 3 --config \'{"retrieval":{"embedder":"builtin"}}\'`',
    );
    expect(() => checkBaselineBeforeRun(b, intent({ mode: "bm25" }), plan)).toThrow(
      'run `retrace eval --kb my-kb -k 3 --config \'{"retrieval":{"embedder":"builtin"}}\'`',
    );
    expect(() => checkBaselineBeforeRun(b, intent({ rerank: "auto" }), plan)).toThrow(
      'run without retrieval.rerank: `retrace eval --kb my-kb -k 3 --config \'{"retrieval":{"embedder":"builtin"}}\'`',
    );
    // fixture embedder id is "builtin-hash-ngram-384", not the built-in embedder's id
    const withBuiltin = () => checkBaselineBeforeRun(b, intent(), plan, "builtin-hashed-ngrams-384-v1");
    expect(withBuiltin).toThrow(
      '`config.embedder` is "builtin-hash-ngram-384" but this run\'s is "builtin-hashed-ngrams-384-v1"',
    );
    expect(withBuiltin).toThrow(
      'run `retrace eval --kb my-kb -k 3 --config \'{"retrieval":{"embedder":"builtin-hash-ngram-384"}}\'`',
    );
    // no predicted embedder id: left to the check after the run
    expect(() => checkBaselineBeforeRun(b, intent({ embedder: "auto" }), plan)).not.toThrow();
  });

  it("one check for every source: another source, or another graph module or export, is refused before the run", async () => {
    const own = baselineFromReport(await fixtureReport());
    const graphInfo = {
      file: "agent.mjs",
      exportName: "graph",
      moduleHash: "a".repeat(64),
      retrievers: ["R"],
      idKey: "metadata.id",
      retrievalCall: "last" as const,
      errors: 0,
      noRetrieval: 0,
    };
    const graph = baselineFromReport(
      await fixtureReport({ source: "graph", embedder: null, store: "graph", graph: graphInfo }),
    );
    const graphIntent = (module: string, over: Partial<RunIntent> = {}) =>
      intent({
        kb: "kb",
        mode: undefined,
        embedder: undefined,
        source: { kind: "graph", module, exportName: "graph" },
        graph: module,
        baselineFile: "g.json",
        baselineIsDefault: false,
        ...over,
      });
    // retrace's own graph with a graph's baseline: refused before the run (it used to run, then fail on config.embedder).
    expect(() => checkBaselineBeforeRun(graph, intent(), plan)).toThrow(
      'its `source` is "--graph agent.mjs#graph" but this run\'s is "retrace\'s own graph"; my-kb/eval/baseline.json was written by --graph agent.mjs#graph, not retrace\'s own graph',
    );
    expect(() => checkBaselineBeforeRun(own, graphIntent("agent.mjs"), plan)).toThrow(
      "g.json was written by retrace's own graph, not --graph agent.mjs#graph; give this run's baseline with --baseline FILE, or to replace it with this run's results instead, run `retrace eval --graph agent.mjs -k 3 --baseline g.json --update-baseline`",
    );
    expect(() => checkBaselineBeforeRun(graph, graphIntent("other.mjs"), plan)).toThrow(
      "g.json was written for another graph module or export",
    );
    expect(() =>
      checkBaselineBeforeRun(graph, graphIntent("agent.mjs", { source: { kind: "traces" }, graph: undefined }), plan),
    ).toThrow('its `source` is "--graph agent.mjs#graph" but this run\'s is "recorded traces (--traces)"');
    // The same graph spelled ./agent.mjs is the same graph; a graph run's k and subset advice name its own command.
    expect(() => checkBaselineBeforeRun(graph, graphIntent("./agent.mjs"), plan)).not.toThrow();
    expect(() => checkBaselineBeforeRun(graph, graphIntent("agent.mjs", { k: 5 }), plan)).toThrow(
      "compare at the baseline's k with `retrace eval --graph agent.mjs -k 3 --baseline g.json`",
    );
    expect(() =>
      checkBaselineBeforeRun(graph, graphIntent("agent.mjs", { locale: ["en"] }), {
        ...plan,
        datasetHash: "ds-sub",
        selected: 2,
      }),
    ).toThrow("compare the full run with `retrace eval --graph agent.mjs -k 3 --baseline g.json`");
    // How the graph is scored: another retrieval call is refused before the run, as the gate refuses it after.
    const scoring = { ...graph.graph!, retrievalCall: "all" as const };
    expect(() => checkBaselineBeforeRun(graph, graphIntent("agent.mjs", { scoring }), plan)).toThrow(
      '`graph.retrievalCall` is "last" but this run\'s is "all"',
    );
  });

  it("predicts the embedder id without loading a model", async () => {
    expect(await predictEmbedderId("builtin")).toBe("builtin-hashed-ngrams-384-v1");
    expect(await predictEmbedderId("Xenova/some-model")).toBe("Xenova/some-model");
    // The precision is part of the id (docs/models.md); `auto` never resolves to a model, whatever folders exist.
    expect(await predictEmbedderId("Xenova/some-model@q8")).toBe("Xenova/some-model@q8");
    expect(await predictEmbedderId("auto")).toBeNull();
    // Per-locale embedders: an English model's reach depends on the KB's locales, known after the load.
    expect(await predictEmbedderId("Xenova/bge-small-en-v1.5@q8")).toBeNull();
    expect(await predictEmbedderId("auto;en=Xenova/some-model@q8")).toBeNull();
  });
});

describe("parseFloors", () => {
  it("a bare number is the overall floor; SCOPE=X items are scoped; both mix", () => {
    expect(parseFloors("--min-hit")("0.9")).toBe(0.9);
    expect(parseFloors("--min-hit")("en=0.95,es-419=0.9,adversarial=0.8")).toEqual({
      en: 0.95,
      "es-419": 0.9,
      adversarial: 0.8,
    });
    expect(parseFloors("--min-hit")("0.9, pt-BR=0.85")).toEqual({ all: 0.9, "pt-BR": 0.85 });
  });

  it("rejects values outside [0, 1], empty items and repeated scopes", () => {
    expect(() => parseFloors("--min-hit")("1.5")).toThrow(/--min-hit: expected a floor between 0 and 1/);
    expect(() => parseFloors("--min-hit")("en=")).toThrow(/got "en="/);
    expect(() => parseFloors("--min-hit")("en=0.9,en=0.8")).toThrow("--min-hit: scope en given twice");
  });
});

describe("suggestFloors", () => {
  it("is the lower bound of each recorded interval, rounded down to the step, per scope", () => {
    const agg = (lo: number, n = 10) => ({ mean: lo + 0.05, n, ci95: [lo, lo + 0.1] as [number, number] });
    const s = suggestFloors(
      { retrieval_hit_at_k: agg(0.8567) },
      {
        kind: { golden: { retrieval_hit_at_k: agg(0.9) } },
        locale: { en: { retrieval_hit_at_k: agg(0.70001) }, "pt-BR": { retrieval_hit_at_k: { mean: 1, n: 1 } } },
      },
    );
    expect(s).toEqual([
      {
        key: "retrieval_hit_at_k",
        flag: "--min-hit",
        floors: { all: 0.85, golden: 0.9, en: 0.7 },
        skipped: { "pt-BR": "n=1: no interval" },
      },
    ]);
    expect(renderFloors(s, "b.json")).toContain(
      "\n--gate min-hit=all=0.85,golden=0.9,en=0.7\n# --gate min-hit: scope pt-BR skipped (n=1: no interval)",
    );
  });
});
