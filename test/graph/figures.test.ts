/**
 * Figures on the shipped eval set (kb/eval/cases.jsonl): every case through
 * the store-backed graph (real HybridRetriever, in-memory dense index with the
 * built-in embedder, one checkpointed thread per case), with the
 * deterministic answerer:
 *   - every adversarial turn whose expect is "refuse" is refused;
 *   - at least 90% of golden answerable turns are answered with a citation.
 * The figures are printed.
 */
import { HumanMessage } from "@langchain/core/messages";
import { beforeAll, describe, expect, it } from "vitest";
import { buildGraph } from "../../src/graph/build.js";
import { RetrievalTraceCollector } from "../../src/graph/collector.js";
import { loadCases } from "../../src/kb/cases.js";
import type { EvalCase } from "../../src/kb/types.js";
import path from "node:path";
import { SHIPPED_KB } from "../helpers/fixtures.js";
import { hybridFixture, type Fixture } from "./helpers.js";

interface Row {
  caseId: string;
  turn: number;
  kind: EvalCase["kind"];
  expect: "answer" | "refuse";
  gold: string[];
  refused: boolean;
  citedIds: string[];
  retrievedIds: string[];
}

let fx: Fixture;
let rows: Row[];
let collector: RetrievalTraceCollector;

beforeAll(async () => {
  fx = await hybridFixture(SHIPPED_KB);
  const cases = await loadCases(path.join(SHIPPED_KB, "eval", "cases.jsonl"), fx.kb);
  const graph = buildGraph({ store: fx.retriever, cards: fx.kb });
  collector = new RetrievalTraceCollector();
  rows = [];
  for (const c of cases) {
    for (const [i, t] of c.turns.entries()) {
      const s = (await graph.invoke(
        { messages: [new HumanMessage(t.user)], locale: c.locale },
        { configurable: { thread_id: c.id }, callbacks: [collector] },
      )) as { refused: boolean; citedIds: string[]; retrieval: { turn: number; retrievedIds: string[] }[] };
      const trace = s.retrieval[s.retrieval.length - 1]!;
      expect(trace.turn).toBe(i);
      rows.push({ caseId: c.id, turn: i, kind: c.kind, expect: t.expect, gold: t.must_cite_one_of, refused: s.refused, citedIds: s.citedIds, retrievedIds: trace.retrievedIds });
    }
  }
}, 120_000);

const pct = (n: number, d: number) => `${((100 * n) / d).toFixed(1)}%`;

describe("figures on kb/eval/cases.jsonl", () => {
  it("refuses every adversarial turn that must be refused", () => {
    const adversarial = rows.filter((r) => r.kind === "adversarial" && r.expect === "refuse");
    const refused = adversarial.filter((r) => r.refused);
    console.log(`adversarial refusals ${refused.length}/${adversarial.length}`);
    expect(adversarial.length).toBeGreaterThan(0);
    expect(adversarial.filter((r) => !r.refused).map((r) => `${r.caseId}#${r.turn}`)).toEqual([]);
    expect(refused.every((r) => r.citedIds.length === 0)).toBe(true);
  });

  it("answers at least 90% of golden answerable turns with a citation", () => {
    const golden = rows.filter((r) => r.kind === "golden" && r.expect === "answer");
    const answered = golden.filter((r) => !r.refused && r.citedIds.length > 0);
    const noMatch = rows.filter((r) => r.kind === "golden" && r.expect === "refuse");
    const gold = rows.filter((r) => r.gold.length > 0);
    const hits = gold.filter((r) => r.gold.some((g) => r.retrievedIds.includes(g)));
    const citedGold = answered.filter((r) => r.citedIds.some((id) => r.gold.includes(id)));
    console.log(
      `golden answered with citation ${answered.length}/${golden.length} (${pct(answered.length, golden.length)}); ` +
        `golden no-match declined ${noMatch.filter((r) => r.refused).length}/${noMatch.length}; ` +
        `answers citing a gold card ${citedGold.length}/${answered.length}; ` +
        `retrieval hit@k on gold-bearing turns ${hits.length}/${gold.length} (${pct(hits.length, gold.length)})`,
    );
    expect(golden.length).toBeGreaterThan(0);
    expect(answered.length / golden.length).toBeGreaterThanOrEqual(0.9);
    // An answer only cites cards that were retrieved for its turn.
    for (const r of answered) for (const id of r.citedIds) expect(r.retrievedIds).toContain(id);
  });

  it("the collector saw exactly the traces in state, one per turn and thread", () => {
    expect(collector.size).toBe(rows.length);
    for (const r of rows) expect(collector.forTurn(r.caseId, r.turn)?.retrievedIds).toEqual(r.retrievedIds);
  });
});
