/**
 * What `retrace eval --graph` scores and refuses (docs/evaluate-your-graph.md,
 * issue 21 items 4–6), end to end with the real bin over a graph written the
 * way a user writes one (test/fixtures/graphs/fanout-agent.mjs: a router that
 * skips retrieval for off-topic questions, then a `Send()` fan-out of three
 * parallel calls to a custom `BaseRetriever`):
 * - the default scores the last retrieval **step** (all three parallel calls),
 *   and the report counts the turns that made several calls;
 * - documents whose ids are file paths stop the run (exit 2) naming the ids
 *   and the `--id-key` / `--id-map` that fix them;
 * - off-topic turns with empty gold and no retrieval pass the gate without
 *   `--allow-no-retrieval`; a gold-bearing turn the router skipped is a
 *   labelled miss, gated by `--max-no-retrieval`;
 * - every retrieval empty, and a locale that retrieved none of its cards, are flagged;
 * - JUnit lists every gate failure: floor, drop, flips, errors, no-retrieval.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, runCli } from "../helpers/cli.js";
import { MINI_KB } from "../helpers/fixtures.js";

const FIXTURES = path.join(ROOT, "test", "fixtures", "graphs");
const GRAPH = path.join(FIXTURES, "fanout-agent.mjs");
const ALL_CASES = path.join(FIXTURES, "fanout-cases.jsonl");
const base = ["--kb", MINI_KB, "--cases", ALL_CASES, "-k", "3"];
const cases = (...ids: string[]) => ids.flatMap((id) => ["--case", id]);
const CORRECT = cases("en-lock-001", "en-weather-001", "en-joke-001", "es-lock-001", "pt-pix-001");

type Turn = {
  caseId: string;
  turn: number;
  retrievedIds: string[] | null;
  noRetrieval?: true;
  results: { key: string; score: number; comment?: string }[];
  captured?: { topLevelRuns: number; steps?: number; retrievers: string[]; unknownIds?: string[] };
};
const turn = (report: { turns: Turn[] }, id: string) => report.turns.find((t) => `${t.caseId}#${t.turn}` === id)!;
const hit = (t: Turn) => t.results.find((r) => r.key === "retrieval_hit_at_k")?.score;

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "retrace-graph-scoring-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("eval --graph: steps and multi-call turns", () => {
  it("scores all calls of the last step of a Send() fan-out by default, and counts the turns with several calls", async () => {
    const r = await runCli(["eval", "--graph", GRAPH, ...base, ...CORRECT, "--json"]);
    expect(r.stderr).not.toMatch(/unexpected error/);
    expect(r.exitCode).toBe(0);
    const report = JSON.parse(r.stdout);
    const first = turn(report, "en-lock-001#0");
    // The three parallel calls' lists, in start order, first occurrence wins: [card-freeze], [refund-timelines], [pt-chaves-pix].
    expect(first.retrievedIds).toEqual(["card-freeze", "refund-timelines", "pt-chaves-pix"]);
    expect(first.captured).toMatchObject({
      topLevelRuns: 3,
      steps: 1,
      retrievers: ["KeywordRetriever", "KeywordRetriever", "KeywordRetriever"],
    });
    expect(hit(first)).toBe(1);
    expect(report.run.graph).toMatchObject({
      retrievalCall: "last",
      multiCallTurns: 4,
      parallelCallTurns: 4,
      multiStepTurns: 0,
      retrievalTurns: 4,
      scoredIds: 10,
      unknownIds: 0,
    });
    // Every gold-bearing turn of the correct graph is a hit.
    expect(report.aggregates.retrieval_hit_at_k).toMatchObject({ mean: 1, n: 4 });

    const text = await runCli(["eval", "--graph", GRAPH, ...base, ...CORRECT, "--verbose"]); // the full header
    expect(text.stdout).toContain(
      "retriever calls: 4 of 4 turns with a retrieval made several (4 with calls in parallel, 0 with several steps); scored per turn: the last step (all its calls; calls overlapping in time are one step)",
    );
    // One step: `all` scores the same lists.
    const all = JSON.parse(
      (await runCli(["eval", "--graph", GRAPH, ...base, ...CORRECT, "--json", "--retrieval-call", "all"])).stdout,
    );
    expect(all.turns.map((t: Turn) => t.retrievedIds)).toEqual(report.turns.map((t: Turn) => t.retrievedIds));
  });
});

describe("eval --graph: no retrieval, judged by the gold", () => {
  it("passes off-topic turns with empty gold and no retrieval without --allow-no-retrieval", async () => {
    const r = await runCli([
      "eval",
      "--graph",
      GRAPH,
      ...base,
      ...CORRECT,
      "--gate",
      "min-hit=1",
      "--gate",
      "max-no-retrieval=0",
      "--verbose", // every listed turn, as the full report words them
    ]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain("no retrieval, none needed (empty gold): 2\n  en-weather-001#0 en");
    expect(r.stdout).toContain("no retrieval on a gold-bearing turn (scored as a miss: hit, recall, nDCG 0): 0");
    expect(r.stdout).toMatch(/gate: PASS/);
  });

  it("scores a gold-bearing turn the router skipped as a miss labelled 'no retrieval' in text, markdown and JSON; --max-no-retrieval gates it", async () => {
    const sel = cases("en-lock-001", "en-skipped-001");
    const md = path.join(dir, "skipped.md");
    const r = await runCli(["eval", "--graph", GRAPH, ...base, ...sel, "--out", md]);
    expect(r.exitCode).toBe(0); // a miss, not gated by default
    expect(r.stdout).toContain(
      'missed turns (no gold card in the top-3): 1\n  en-skipped-001#0 en golden  "joke aside, how do I freeze my card?"  retrieval: no retrieval (the turn made no retriever run)',
    );
    expect(await readFile(md, "utf8")).toContain(
      "| `en-skipped-001#0` | en | golden | joke aside, how do I freeze my card? | [card-freeze] | [] |  | no retrieval (the turn made no retriever run) |",
    );

    const json = JSON.parse((await runCli(["eval", "--graph", GRAPH, ...base, ...sel, "--json"])).stdout);
    const skipped = turn(json, "en-skipped-001#0");
    expect(skipped).toMatchObject({ noRetrieval: true, retrievedIds: [] });
    expect(skipped.results.map((x) => x.score)).toEqual([0, 0, 0, 0, 0]);
    expect(skipped.results[0]!.comment).toMatch(/^no retrieval \(the turn made no retriever run\): hit=0/);
    // n counts it: 3 gold-bearing turns, 2 hits.
    expect(json.aggregates.retrieval_hit_at_k).toMatchObject({ n: 3 });
    expect(json.aggregates.retrieval_hit_at_k.mean).toBeCloseTo(2 / 3, 10);
    expect(json.run.graph).toMatchObject({ noRetrieval: 1, noRetrievalMisses: 1, noRetrievalNoneNeeded: 0 });

    const gated = await runCli(["eval", "--graph", GRAPH, ...base, ...sel, "--gate", "max-no-retrieval=0"]);
    expect(gated.exitCode).toBe(1);
    expect(gated.stdout).toContain(
      "[no_retrieval] 1 gold-bearing turn made no retriever run (no retrieval; scored as misses; allowed: 0, --gate max-no-retrieval): en-skipped-001#0",
    );
    // --allow-no-retrieval (which had no effect) is exit 2 naming this gate check: test/cli/surface.test.ts.
    expect((await runCli(["eval", "--graph", GRAPH, ...base, ...sel, "--gate", "max-no-retrieval=1"])).exitCode).toBe(
      0,
    );
  });
});

describe("eval --graph: ids that name no card", () => {
  it("documents with file-path ids stop the run with exit 2 naming the ids and --id-key / --id-map; --id-map fixes them", async () => {
    const r = await runCli(["eval", "--graph", `${GRAPH}#pathGraph`, ...base, ...CORRECT]);
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(
      "10 of the 10 ids retrieved in the scored top-k lists (100%, more than 50%) name no card of the KB",
    );
    expect(r.stderr).toContain(
      'e.g. "docs/en/card-freeze.md", "docs/en/refund-timelines.md", "docs/pt-BR/pt-chaves-pix.md"',
    );
    // The metadata keys the documents do carry, as the "no card id" message lists them.
    expect(r.stderr).toContain(
      "The ids were read from metadata.parentId, metadata.doc_id, metadata.id, metadata.source, Document.id; metadata keys present: source.",
    );
    expect(r.stderr).toMatch(/look like file paths.*--id-key FIELD.*--id-map MODULE/);

    const mapped = await runCli([
      "eval",
      "--graph",
      `${GRAPH}#pathGraph`,
      "--id-map",
      path.join(FIXTURES, "path-id-map.mjs"),
      ...base,
      ...CORRECT,
      "--json",
    ]);
    expect(mapped.exitCode).toBe(0);
    const byParentId = JSON.parse((await runCli(["eval", "--graph", GRAPH, ...base, ...CORRECT, "--json"])).stdout);
    expect(JSON.parse(mapped.stdout).turns.map((t: Turn) => [t.retrievedIds, t.results])).toEqual(
      byParentId.turns.map((t: Turn) => [t.retrievedIds, t.results]),
    );
  });

  it("flags a run whose every retrieval was empty, and a locale that retrieved none of its cards, in every output", async () => {
    const junit = path.join(dir, "empty.xml");
    const md = path.join(dir, "empty.md");
    const empty = await runCli(
      ["eval", "--graph", GRAPH, ...base, ...CORRECT, "--out", `junit:${junit}`, "--out", md],
      { env: { FANOUT_STORE: "empty" } },
    );
    expect(empty.exitCode).toBe(0);
    const warning = "every retrieval returned nothing: all 4 turns that called a retriever got an empty list";
    expect(empty.stdout).toContain(`warning: ${warning}`);
    expect(await readFile(md, "utf8")).toContain(warning);
    expect(await readFile(junit, "utf8")).toContain(`<property name="warning" value="${warning}`);
    // The run's source is a property of its own (a graph ran no embedder of retrace's).
    expect(await readFile(junit, "utf8")).toContain(`<property name="source" value="graph"/>`);
    const json = await runCli(["eval", "--graph", GRAPH, ...base, ...CORRECT, "--json"], {
      env: { FANOUT_STORE: "empty" },
    });
    expect(JSON.parse(json.stdout).run.graph).toMatchObject({ retrievalTurns: 4, emptyRetrievalTurns: 4 });
    expect(json.stderr).toContain(warning);

    // A store holding only the en documents: es-419 and pt-BR turns retrieve en cards only.
    const enOnly = await runCli(["eval", "--graph", GRAPH, ...base, ...CORRECT], { env: { FANOUT_STORE: "en-only" } });
    expect(enOnly.stdout).toContain(
      "warning: locale es-419: its turns called a retriever but retrieved no card of es-419",
    );
    expect(enOnly.stdout).toContain(
      "warning: locale pt-BR: its turns called a retriever but retrieved no card of pt-BR",
    );
    expect(enOnly.stdout).not.toContain("warning: locale en:");
  });
});

describe("eval --graph --out junit:FILE", () => {
  it("lists every gate failure as a <failure>: floor, drops, flips, turn errors, no retrieval", async () => {
    const baseline = path.join(dir, "baseline.json");
    const write = await runCli([
      "eval",
      "--graph",
      GRAPH,
      ...base,
      "--baseline",
      baseline,
      "--update-baseline",
      "--gate",
      "max-errors=1",
    ]);
    expect(write.exitCode).toBe(0);
    const junit = path.join(dir, "gate.xml");
    // The same graph against an empty store: every gold-bearing turn now misses.
    const r = await runCli(
      [
        "eval",
        "--graph",
        GRAPH,
        ...base,
        "--baseline",
        baseline,
        "--gate",
        "max-drop=auto",
        "--gate",
        "max-flips=0",
        "--gate",
        "min-hit=0.5",
        "--gate",
        "max-no-retrieval=0",
        "--out",
        `junit:${junit}`,
        "--json",
      ],
      { env: { FANOUT_STORE: "empty" } },
    );
    expect(r.exitCode).toBe(1);
    const report = JSON.parse(r.stdout);
    const kinds = new Set(report.gate.failures.map((f: { kind: string }) => f.kind));
    expect([...kinds].sort()).toEqual(["flips", "floor", "no_retrieval", "regression", "turn_errors"]);
    const xml = await readFile(junit, "utf8");
    const failures = [...xml.matchAll(/<failure [^>]*type="([^"]+)"/g)].map((m) => m[1]);
    // Each gate failure is a failed testcase of the gate suite.
    const gateSuite = xml.slice(xml.indexOf('name="retrace.gate"'), xml.indexOf('name="retrace.turns'));
    const gateFailures = [...gateSuite.matchAll(/<failure [^>]*type="([^"]+)"/g)].map((m) => m[1]);
    expect(gateFailures.length).toBe(report.gate.failures.length);
    expect(new Set(gateFailures)).toEqual(new Set(["floor", "drop", "flips", "turn_errors", "no_retrieval"]));
    // The turns the failed gates counted: the flipped ones, the errored one, the skipped one.
    expect(xml).toMatch(
      /name="en-error-001#0: explode the lock on my card">\s*<failure message="the graph run threw: the search backend exploded" type="turn_errors"/,
    );
    expect(xml).toMatch(
      /name="en-skipped-001#0: joke aside, how do I freeze my card\?">\s*<failure message="no retrieval \(the turn made no retriever run\): hit=0/,
    );
    expect(xml).toMatch(
      /name="en-lock-001#0: how do I lock my card\?">\s*<failure message="hit@3 went from 1 \(baseline\) to 0/,
    );
    const total = Number(/<testsuites [^>]*failures="(\d+)"/.exec(xml)![1]);
    expect(total).toBe(failures.length);
    expect(xml).not.toContain("<skipped");
  });
});
