/**
 * The offline examples evaluated by the real CLI (`retrace eval --graph`),
 * per-turn numbers checked against an independent computation (see
 * ./helpers.ts), plus `retrace trace --graph` on the ensemble and the
 * bad-input exits of --graph.
 */
import path from "node:path";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, runCli } from "../helpers/cli.js";
import { MINI_KB } from "../helpers/fixtures.js";
import { cards, expectTurnsMatch, readCases } from "./helpers.js";
import { loadGraph } from "../../src/eval/sweep/external-graph.js";
import { GraphInputError } from "../../src/errors.js";

const CASES = path.join(MINI_KB, "eval", "cases.jsonl");
const env = { RETRACE_EXAMPLE_KB: MINI_KB, RETRACE_LOG: "warn" };

beforeAll(() => {
  process.env.RETRACE_EXAMPLE_KB = MINI_KB;
});

describe("examples evaluated with retrace eval --graph", () => {
  it("custom BaseRetriever: per-turn hit/recall/nDCG equal the hand computation on the retriever's own ranking", async () => {
    const r = await runCli(["eval", "--graph", "examples/custom-retriever.ts", "--kb", MINI_KB, "--json", "-k", "2"], {
      env,
    });
    expect(r.stderr).not.toMatch(/unexpected error/);
    const report = JSON.parse(r.stdout);
    // The mini KB has 4 cards; "do you offer mortgages?" shares no word with any: a turn with no documents is still a retriever run.
    expect(report.run.graph).toMatchObject({
      file: "examples/custom-retriever.ts",
      exportName: "graph",
      retrievers: ["WordOverlapRetriever"],
      retrievalCall: "last",
      errors: 0,
      noRetrieval: 0,
    });
    const { retriever } = await import("../../examples/custom-retriever.js");
    const checked = await expectTurnsMatch(report, readCases(CASES), 2, async (q) => cards(await retriever.invoke(q)));
    expect(checked).toBe(5);
    expect(r.exitCode).toBe(0);
  }, 180_000);

  it("EnsembleRetriever(BM25, vector store): same check, and the trace shows each child as a stage", async () => {
    const r = await runCli(["eval", "--graph", "examples/ensemble.ts", "--kb", MINI_KB, "--json"], { env });
    const report = JSON.parse(r.stdout);
    expect(report.run.graph.retrievers).toEqual(["EnsembleRetriever"]);
    const { buildRetriever } = await import("../../examples/ensemble.js");
    const ensemble = await buildRetriever(MINI_KB);
    expect(await expectTurnsMatch(report, readCases(CASES), 5, async (q) => cards(await ensemble.invoke(q)))).toBe(5);
    const first = report.turns[0];
    expect(first.captured.stages.map((s: { key: string; role: string }) => `${s.role}:${s.key}`)).toEqual([
      "child:BM25Retriever",
      "child:VectorStoreRetriever",
      "final:EnsembleRetriever",
    ]);
    // The BM25 child alone, asked independently, gives the child stage's cards.
    expect(first.captured.stages[0].ids).toEqual(cards(await ensemble.retrievers[0]!.invoke("how do I lock my card?")));

    const t = await runCli(
      ["trace", "--graph", "examples/ensemble.ts", "en-freeze-001", "--turn", "0", "--kb", MINI_KB],
      { env },
    );
    expect(t.exitCode).toBe(0);
    expect(t.stdout).toMatch(
      /card-freeze: \d+(st|nd|rd|th) in #1 child BM25Retriever, (\d+(st|nd|rd|th) in|absent from) #1 child VectorStoreRetriever.*after #1 EnsembleRetriever/,
    );
    expect(t.stdout).toContain("child BM25Retriever");
  }, 240_000);
});

describe("--graph with --catalog, --input and --id-map", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "retrace-graph-opts-"));
    // The user's documents listed by id and locale instead of a KB folder: two more en entries than the mini KB has cards.
    await writeFile(
      path.join(dir, "catalog.tsv"),
      [
        "card-freeze\ten",
        "refund-timelines\ten",
        "en-extra-1\ten",
        "en-extra-2\ten",
        "es-congelar-tarjeta\tes-419",
        "pt-chaves-pix\tpt-BR",
        "",
      ].join("\n"),
    );
    // Every turn is asked as the same question, so the retrieved cards show the mapper was used.
    await writeFile(
      path.join(dir, "input.mjs"),
      "export default (turn, c) => ({ messages: [{ role: 'user', content: 'how do I lock my card?' }] });\n",
    );
    // Swaps two ids, so the ids scored show the map was used (the default reads metadata.parentId).
    await writeFile(
      path.join(dir, "idmap.mjs"),
      "export function toId(doc) { const id = doc.metadata.parentId; return id === 'card-freeze' ? 'refund-timelines' : id === 'refund-timelines' ? 'card-freeze' : id; }\n",
    );
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("scores the mapped ids of the mapped inputs, with chance levels from the catalog's counts", async () => {
    const r = await runCli(
      [
        "eval",
        "--graph",
        "examples/custom-retriever.ts",
        "--catalog",
        path.join(dir, "catalog.tsv"),
        "--cases",
        CASES,
        "--input",
        path.join(dir, "input.mjs"),
        "--id-map",
        `${path.join(dir, "idmap.mjs")}#toId`,
        "--json",
        "-k",
        "2",
      ],
      { env },
    );
    expect(r.stderr).not.toMatch(/unexpected error/);
    const report = JSON.parse(r.stdout);
    // Recorded relative to the project root (the working directory), never absolute (docs/evaluate-your-graph.md).
    expect(report.run.graph.catalog).toBe(path.relative(ROOT, path.join(dir, "catalog.tsv")).split(path.sep).join("/"));
    expect(report.chance.cardsPerLocale).toEqual({ en: 4, "es-419": 1, "pt-BR": 1 });
    const { retriever } = await import("../../examples/custom-retriever.js");
    const swap = (id: string) =>
      id === "card-freeze" ? "refund-timelines" : id === "refund-timelines" ? "card-freeze" : id;
    const expected = cards(await retriever.invoke("how do I lock my card?")).map(swap);
    expect(expected[0]).toBe("refund-timelines");
    // The mortgage turn, asked as "how do I lock my card?", now retrieves too; every turn gets the same (swapped) cards.
    for (const t of report.turns) expect(t.retrievedIds).toEqual(expected.slice(0, 2));
    expect(r.exitCode).toBe(0);
  }, 180_000);
});

describe("--graph bad input", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "retrace-graph-"));
    await writeFile(path.join(dir, "notgraph.mjs"), "export const graph = { hello: 1 };\nexport const other = 2;\n");
    await writeFile(path.join(dir, "throws.mjs"), "export async function graph() { throw new Error('no API key'); }\n");
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("exits 2 naming file and export for a missing file (CLI)", async () => {
    const r = await runCli(["eval", "--graph", "missing.ts#agent", "--kb", MINI_KB], { env });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/--graph missing\.ts#agent: the file missing\.ts does not exist/);
  }, 120_000);

  it.each([
    [
      "a missing export",
      () => "examples/custom-retriever.ts#nope",
      /custom-retriever\.ts#nope: the module has no export "nope"; it exports .*graph/,
    ],
    [
      "not a graph",
      () => path.join(dir, "notgraph.mjs"),
      /notgraph\.mjs#graph: expected a compiled LangGraph graph or a factory returning one, got object/,
    ],
    [
      "a factory that throws",
      () => path.join(dir, "throws.mjs"),
      /throws\.mjs#graph: the factory threw while building the graph: no API key/,
    ],
  ])("loadGraph: a GraphInputError (exit 2) naming file and export for %s", async (_label, spec, message) => {
    const e = await loadGraph(spec()).then(
      () => null,
      (x: unknown) => x,
    );
    expect(e).toBeInstanceOf(GraphInputError);
    expect((e as GraphInputError).exitCode).toBe(2);
    expect((e as Error).message).toMatch(message);
  });

  it("exits 2 when documents carry none of the id keys, naming the keys tried and those present", async () => {
    const r = await runCli(["eval", "--graph", "examples/custom-retriever.ts", "--kb", MINI_KB, "--id-key", "card"], {
      env,
    });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(
      /case en-freeze-001 turn 0: document 1 .* tried metadata.card; metadata keys present: locale, parentId, section/,
    );
  }, 120_000);
});
