/**
 * One evaluate path (docs/architecture.md §9, "…a source"): `trace` and
 * `label` get their turns from the source registry (`sourceTurns`, each
 * source's `turns`), and `merge` builds and gates its report by the step eval
 * runs after its sweep (src/app/evaluate.ts `reportAndGate`). A command that
 * swept a source by itself, or assembled a report by itself, fails here; so
 * does one that asks which source it runs (`kind === "traces"`) instead of
 * asking the source (`Source.trace`, `sourceFlag`, the registry's tables).
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { buildLabelData, planLabel } from "../../src/app/label.js";
import { SOURCES } from "../../src/app/sources/registry.js";
import type { SourceTrace } from "../../src/app/sources/source.js";
import { traceCase } from "../../src/app/trace.js";
import type { GraphTurn } from "../../src/eval/sweep/external-graph.js";
import { ROOT } from "../helpers/cli.js";

const DIR = path.join(ROOT, "test", "fixtures", "traces");
const OTLP = path.join(DIR, "openinference.otlp.jsonl");
const CATALOG = path.join(DIR, "catalog.tsv");
const CASES = path.join(DIR, "cases.jsonl");
const source = (kind: string) => SOURCES.find((s) => s.kind === kind)!;
const read = (f: string) => readFileSync(path.join(ROOT, "src", "app", f), "utf8");

afterEach(() => {
  vi.restoreAllMocks();
});

describe("trace, label and merge take eval's path", () => {
  it("every source answers `turns` (what trace and label sweep)", () => {
    for (const s of SOURCES) expect(typeof s.turns, s.kind).toBe("function");
  });

  it("trace --traces asks the registry's traces source for the case's turns (a stand-in answering none: every turn not recorded)", async () => {
    const turns = vi.spyOn(source("traces"), "turns").mockResolvedValue([[] as GraphTurn[]]);
    const traced = await traceCase("conv-freeze", { traces: OTLP, catalog: CATALOG, cases: CASES, k: 3 });
    expect(turns).toHaveBeenCalledTimes(1);
    const [options, request] = turns.mock.calls[0]!;
    expect(options.traces).toBe(OTLP);
    expect(request.cases.map((c) => c.id)).toEqual(["conv-freeze"]);
    expect(request.k).toBe(3);
    expect(traced.turns).toEqual([]);
    expect(traced.notRecorded).toEqual([0, 1]);
  });

  it("trace of retrace's own graph asks the own source, with the three queries (counterfactual) and the turns up to --turn", async () => {
    const turns = vi.spyOn(source("own"), "turns").mockResolvedValue([[] as GraphTurn[]]);
    await traceCase("en-freeze-001", { store: "none", kb: "test/fixtures/kb-mini", turn: 0 });
    expect(turns).toHaveBeenCalledTimes(1);
    const request = turns.mock.calls[0]![1];
    expect(request.cases.map((c) => [c.id, c.turns.length])).toEqual([["en-freeze-001", 1]]);
    expect(request.counterfactual).toBe(true);
    expect(request.data).toBeDefined(); // the store opens over the data planTrace read
  });

  it("label pools a recording through the registry's traces source, at the pool's depth", async () => {
    const turns = vi.spyOn(source("traces"), "turns").mockResolvedValue([[] as GraphTurn[]]);
    const plan = await planLabel({ cases: CASES, traces: OTLP, catalog: CATALOG, pool: ["recorded"], depth: 4 });
    const page = await buildLabelData(plan);
    expect(turns).toHaveBeenCalledTimes(1);
    expect(turns.mock.calls[0]![1]).toMatchObject({ k: 4, evaluators: [] });
    expect(page.cases.flatMap((c) => c.turns.flatMap((t) => t.pool))).toEqual([]);
  });

  it("label pools a graph through the registry's graph source, the recording's option left out of its options", async () => {
    const turns = vi.spyOn(source("graph"), "turns").mockResolvedValue([[] as GraphTurn[]]);
    const plan = await planLabel({
      cases: "test/fixtures/kb-mini/eval/cases.jsonl",
      kb: "test/fixtures/kb-mini",
      graph: "test/fixtures/graphs/kb-agent.mjs",
      pool: ["graph"],
      depth: 3,
    });
    await buildLabelData(plan);
    expect(turns).toHaveBeenCalledTimes(1);
    const [options, request] = turns.mock.calls[0]!;
    expect(options.graph).toBe("test/fixtures/graphs/kb-agent.mjs");
    expect(request.k).toBe(3);
    expect(request.cases.length).toBe(plan.cases.length);
  });

  it("label's bm25/dense/hybrid lists are one call of the own source, one list per mode", async () => {
    const turns = vi.spyOn(source("own"), "turns").mockResolvedValue([[], []] as GraphTurn[][]);
    const plan = await planLabel({
      cases: "test/fixtures/kb-mini/eval/cases.jsonl",
      kb: "test/fixtures/kb-mini",
      store: "memory",
      pool: ["bm25", "hybrid"],
    });
    await buildLabelData(plan);
    expect(turns).toHaveBeenCalledTimes(1);
    expect(turns.mock.calls[0]![1].modes).toEqual(["bm25", "hybrid"]);
  });

  it("no command sweeps a source or assembles a report by itself", () => {
    const SWEEPS =
      /\b(runGraphSweep|sweepGraph|sweepGraphHere|recordedTracesSource|ownGraphCaseOptions|openEvalSystem|graphFor)\b\s*\(/;
    for (const f of ["trace.ts", "label.ts"]) {
      expect(read(f), `${f} sweeps by itself`).not.toMatch(SWEEPS);
      expect(read(f), `${f} asks the registry`).toMatch(/\bsourceTurns\(/);
    }
    const merge = read("merge.ts");
    expect(merge).toMatch(/\breportAndGate\(/);
    expect(merge).not.toMatch(
      /\b(applyGate|reportInSteps|buildReportYielding|buildReport|attachRepeats|warnAboutJudgments)\b/,
    );
    expect(read("evaluate.ts")).toMatch(/\breportAndGate\(\{/); // eval's own body runs the same step
  });

  it("no command branches on a source kind: what differs is the source's to say (src/app/sources/)", () => {
    // Comparisons with a source kind, asking the registry for a kind to compare, or reading a source's kind.
    const BRANCH = [
      /\b(\w*[kK]ind|\w*[sS]ource)\s*[!=]==?\s*["'](own|graph|traces)["']/,
      /["'](own|graph|traces)["']\s*[!=]==?\s*(\w*[kK]ind|\w*[sS]ource)\b/,
      /\bsourceKindOf\([^)]*\)\s*[!=]==?/,
      /\bsourceFor\([^)]*\)\.kind\b/,
      /\bcase\s+["'](own|graph|traces)["']\s*:/,
      // "Neither option given" spelled out: retrace's own graph is `sourceFor(o).selectedBy === null`.
      /\.graph\s*[!=]==\s*undefined\s*(&&|\|\|)\s*\w+\.traces\s*[!=]==\s*undefined/,
      /\.traces\s*[!=]==\s*undefined\s*(&&|\|\|)\s*\w+\.graph\s*[!=]==\s*undefined/,
    ];
    // What stays, and why: these compare data that names a source, not the source a command runs.
    const STAYS = new Map<string, string>([
      // A baseline file's recorded source (BaselineSource): the own graph's baseline records its mode, reranking and embedder.
      ["src/app/baseline.ts", 'if (source.kind === "own") checkOwnConfig('],
      // A baseline file's recorded graph module, migrated when it was written from another folder.
      ["src/app/graph-identity.ts", 'if (source.kind !== "graph") return undefined;'],
      // runModuleEval's precondition (options naming neither module source are refused); the registry imports this
      // module's source modules, so asking it here would be an import cycle (npm run check:imports).
      ["src/app/graph-eval.ts", "if (o.graph === undefined && o.traces === undefined)"],
      // A BEIR split's kind (its own train part, or seeded): not a source.
      ["src/app/beir.ts", 'split.kind === "own"'],
    ]);
    const files = (dir: string): string[] =>
      readdirSync(path.join(ROOT, dir), { withFileTypes: true, recursive: true })
        .filter((e) => e.isFile() && e.name.endsWith(".ts"))
        .map((e) => path.relative(ROOT, path.join(e.parentPath, e.name)).split(path.sep).join("/"))
        .filter((f) => !f.startsWith("src/app/sources/"));
    const found: string[] = [];
    for (const f of [...files("src/app"), ...files("src/cli")])
      readFileSync(path.join(ROOT, f), "utf8")
        .split("\n")
        .forEach((line, i) => {
          if (!BRANCH.some((re) => re.test(line))) return;
          if (STAYS.has(f) && line.includes(STAYS.get(f)!)) return;
          found.push(`${f}:${i + 1}: ${line.trim()}`);
        });
    expect(found).toEqual([]);
  });

  it("each source says what retrace trace does with it", () => {
    const traceOf = (kind: string) => {
      const { sweeps, captured, unscoredTurn }: SourceTrace = source(kind).trace;
      return { sweeps, captured, unscoredTurn: unscoredTurn !== undefined };
    };
    expect(traceOf("own")).toEqual({ sweeps: "upTo", captured: null, unscoredTurn: false });
    expect(traceOf("graph")).toEqual({
      sweeps: "upTo",
      captured: { recorded: false, stateLimit: true },
      unscoredTurn: false,
    });
    expect(traceOf("traces")).toEqual({
      sweeps: "recorded",
      captured: { recorded: true, stateLimit: false },
      unscoredTurn: true,
    });
  });

  it("trace --traces reads its options' config as the CLI does (a setting trace does not read is refused, naming it)", async () => {
    await expect(
      traceCase("conv-freeze", { traces: OTLP, catalog: CATALOG, cases: CASES, k: 3, config: '{"run":{"seed":7}}' }),
    ).rejects.toMatchObject({
      code: "INVALID_DATA",
      message: expect.stringMatching(/run\.seed.*not a setting of retrace trace/s),
    });
  });

  it("trace --traces asks the source whether a turn it does not score is an error", async () => {
    vi.spyOn(source("traces"), "turns").mockResolvedValue([[] as GraphTurn[]]);
    await expect(
      traceCase("conv-freeze", { traces: OTLP, catalog: CATALOG, cases: CASES, k: 3, turn: 1 }),
    ).rejects.toThrow(/case conv-freeze turn 1 is not in the recording.*the recording gives: none/);
  });
});
