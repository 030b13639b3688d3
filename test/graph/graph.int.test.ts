/**
 * The store-backed graph on a real Chroma server: the shipped KB ingested
 * into a temporary local Chroma (started from node_modules by `openStore`),
 * served through ChromaDenseIndex behind the HybridRetriever; a 3-turn
 * conversation of the eval set goes through the graph turn by turn.
 */
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { buildGraph } from "../../src/graph/build.js";
import { RetrievalTraceCollector } from "../../src/graph/collector.js";
import { loadCases } from "../../src/kb/cases.js";
import { chunkKnowledgeBase } from "../../src/kb/chunk.js";
import { kbHash } from "../../src/kb/hash.js";
import type { EvalCase, KnowledgeBase } from "../../src/kb/types.js";
import { loadKnowledgeBase } from "../../src/kb/cards.js";
import { openStore, type ChromaStoreHandle } from "../../src/retrieval/chroma-server.js";
import { ChromaDenseIndex, openCurrentCollection } from "../../src/retrieval/chroma-store.js";
import { HashingEmbedder } from "../../src/retrieval/embedders/builtin.js";
import { HybridRetriever } from "../../src/retrieval/hybrid.js";
import { ingest } from "../../src/retrieval/ingest.js";
import { chromaPids, tempDir } from "../helpers/chroma.js";
import { SHIPPED_KB } from "../helpers/fixtures.js";
import { runTurn, type TurnResult } from "./helpers.js";

const CASE_ID = "en-freeze-001";

let tmp: { dir: string; cleanup: () => Promise<void> };
let store: ChromaStoreHandle;
let kb: KnowledgeBase;
let retriever: HybridRetriever;
let evalCase: EvalCase;

beforeAll(async () => {
  tmp = await tempDir("graph-int");
  vi.stubEnv("CHROMA_URL", ""); // this file starts and owns its server
  store = await openStore({ dataDir: path.join(tmp.dir, "chroma") });
  kb = await loadKnowledgeBase(SHIPPED_KB);
  const cases = await loadCases(path.join(SHIPPED_KB, "eval", "cases.jsonl"), kb);
  evalCase = cases.find((c) => c.id === CASE_ID)!;
  const chunks = chunkKnowledgeBase(kb);
  const embedder = new HashingEmbedder();
  const hash = kbHash(kb);
  await ingest({ client: store.client, chunks, embedder, kbHash: hash });
  const current = await openCurrentCollection(store.client, { kbHash: hash, embedder, fallbackToLatest: false });
  retriever = new HybridRetriever({ chunks, embedder, dense: new ChromaDenseIndex(current!.collection) });
});

afterAll(async () => {
  await store?.close();
  vi.unstubAllEnvs();
  const leftover = chromaPids(tmp.dir);
  await tmp?.cleanup();
  expect(leftover).toEqual([]);
});

describe("store-backed graph over a real Chroma", () => {
  it("records each turn's trace in state, the custom stream and the collector; the follow-ups retrieve their gold card", async () => {
    expect(store.kind).toBe("local");
    expect(evalCase.turns).toHaveLength(3);
    const graph = buildGraph({ store: retriever, cards: kb });
    const collector = new RetrievalTraceCollector();
    const results: TurnResult[] = [];
    for (const t of evalCase.turns)
      results.push(await runTurn(graph, CASE_ID, t.user, { locale: evalCase.locale, collector }));

    const final = results[2]!.state;
    expect(final.retrieval.map((t) => t.turn)).toEqual([0, 1, 2]);
    for (const [i, r] of results.entries()) {
      const inState = r.state.retrieval[i]!;
      expect(r.custom).toHaveLength(1);
      expect(r.custom[0]!.threadId).toBe(CASE_ID);
      expect(r.custom[0]!.trace).toEqual(inState);
      expect(collector.forTurn(CASE_ID, i)).toEqual(inState);
      // The dense branch really ran on Chroma.
      expect(inState.config.embedder).toBe(new HashingEmbedder().id);
      expect(inState.stages.dense!.length).toBeGreaterThan(0);
      expect(inState.locale).toBe("en");
    }
    expect(collector.get(CASE_ID)).toEqual(final.retrieval);

    // The follow-ups carry the earlier subject and retrieve their gold card.
    for (const i of [1, 2]) {
      const turn = evalCase.turns[i]!;
      const trace = final.retrieval[i]!;
      expect(trace.query.startsWith(turn.user)).toBe(true);
      expect(trace.query.length).toBeGreaterThan(turn.user.length);
      expect(turn.must_cite_one_of!.some((g) => trace.retrievedIds.includes(g))).toBe(true);
    }
    // And the answers cite it.
    expect(results[0]!.state.citedIds).toContain("card-freeze");
  });
});
