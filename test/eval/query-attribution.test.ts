/**
 * Query attribution (src/eval/report/query-attribution.ts, docs/query-attribution.md):
 * the precedence on hand-made outcomes, then the real graph over the shipped
 * KB: counterfactual retrieval never changes a turn's own scores, and with the
 * contextualizer's history cut to 0 (`--history 0`) the pronoun follow-ups the
 * rewrite rescued become turns the rewrite lost.
 */
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { attributeTurn, attributionOf, queryOutcome } from "../../src/eval/report/query-attribution.js";
import { ownGraphCaseOptions } from "../../src/app/own-graph/parallel.js";
import { runGraphSweep } from "../../src/eval/sweep/external-graph.js";
import { evaluatorsFor } from "../../src/eval/measures/storeless.js";
import type { TurnReport } from "../../src/eval/report/types.js";
import { openSystem, type RetraceSystem } from "../../src/system.js";
import { SHIPPED_KB } from "../helpers/fixtures.js";

const out = (query: string, ranked: string[]) => queryOutcome({ query, ranked }, ["g"], 3);

describe("attributionOf (precedence)", () => {
  const hit = (q: string) => out(q, ["x", "g", "y"]);
  const miss = (q: string) => out(q, ["x", "y", "z", "g"]); // gold at rank 4: beyond k = 3
  it.each([
    ["graph misses, oracle hits", miss("q+ctx"), hit("raw"), hit("oracle"), "rewrite_lost_it"],
    ["graph misses, oracle misses although raw hits", miss("q+ctx"), hit("raw"), miss("oracle"), "retriever_lost_it"],
    ["graph misses, no oracle, raw hits", miss("q+ctx"), hit("raw"), undefined, "rewrite_lost_it"],
    ["graph misses, no oracle, raw misses", miss("q+ctx"), miss("raw"), undefined, "retriever_lost_it"],
    ["graph hits with the raw message as its query", hit("raw"), hit("raw"), miss("oracle"), "ok"],
    ["graph hits with a rewrite, raw misses", hit("q+ctx"), miss("raw"), hit("oracle"), "rewrite_rescued_it"],
    ["graph hits with a rewrite, raw hits", hit("q+ctx"), hit("raw"), undefined, "rewrite_not_needed"],
  ] as const)("%s → %s", (_name, g, r, o, want) => {
    expect(attributionOf(g, r, o)).toBe(want);
  });

  it("keeps each query's rank of the gold beyond k and its metrics at k", () => {
    const t = attributeTurn(
      { graph: { query: "a", ranked: ["x", "y", "z", "g"] }, raw: { query: "b", ranked: ["g"] } },
      ["g"],
      3,
    )!;
    expect(t.graph.rank).toBe(4);
    expect(t.graph.scores.retrieval_hit_at_k).toBe(0);
    expect(t.raw.rank).toBe(1);
    expect(t.raw.scores.retrieval_hit_at_k).toBe(1);
    expect(t.standalone).toBeUndefined();
    expect(attributeTurn({ graph: { query: "a", ranked: [] }, raw: { query: "a", ranked: [] } }, [], 3)).toBeNull();
  });
});

describe("query attribution over the shipped KB (memory store, LSA embedder)", () => {
  let sys: RetraceSystem;
  beforeAll(async () => {
    sys = await openSystem({
      kbDir: SHIPPED_KB,
      casesFile: path.join(SHIPPED_KB, "eval", "cases.jsonl"),
      store: "memory",
      embedder: "lsa",
    });
  }, 120_000);
  afterAll(async () => {
    await sys?.close();
  });

  const ids = ["en-freeze-001", "en-dispute-007", "en-limits-017", "es-cancelar-013", "pt-contestar-010"];
  const sweep = async (opts: { history?: number; counterfactual: boolean }) => {
    const defaults = {
      k: 5,
      mode: "hybrid" as const,
      rerank: false,
      ...(opts.history !== undefined ? { historyTurns: opts.history } : {}),
    };
    const local = ownGraphCaseOptions({
      retriever: sys.retriever,
      kb: sys.kb,
      analyzers: sys.analyzers,
      defaults,
      evaluators: evaluatorsFor({ k: 5, storeBacked: true }),
      knownIds: new Set(sys.kb.byId.keys()),
      threadPrefix: `h${opts.history ?? "all"}:`,
      k: 5,
      counterfactual: opts.counterfactual,
    });
    const turns = await runGraphSweep({ ...local, cases: sys.cases.filter((c) => ids.includes(c.id)), concurrency: 2 });
    return new Map<string, TurnReport>(turns.map(({ report: t }) => [`${t.caseId}#${t.turn}`, t]));
  };
  const attribution = (m: Map<string, TurnReport>, id: string) => m.get(id)?.queries?.attribution;

  it("never changes a turn's own scores, and moves pronoun follow-ups from rescued to lost with --history 0", async () => {
    const off = await sweep({ counterfactual: false });
    const on = await sweep({ counterfactual: true });
    for (const [id, t] of on) {
      expect(t.results, id).toEqual(off.get(id)!.results);
      expect(off.get(id)!.queries).toBeUndefined();
    }
    const none = await sweep({ history: 0, counterfactual: true });
    // "ok found it, how do I turn it back on?" — "it" is the card freeze of turn 0.
    const moved = [
      "en-freeze-001#2",
      "en-dispute-007#1",
      "en-dispute-007#2",
      "en-limits-017#1",
      "es-cancelar-013#1",
      "pt-contestar-010#1",
    ];
    for (const id of moved) {
      expect(attribution(on, id), id).toBe("rewrite_rescued_it");
      expect(attribution(none, id), id).toBe("rewrite_lost_it");
      // With no history the graph's query is the raw message itself.
      expect(none.get(id)!.queries!.graph.query).toBe(none.get(id)!.user);
      expect(none.get(id)!.queries!.standalone!.scores.retrieval_hit_at_k).toBe(1);
    }
    // First turns have nothing to rewrite: the same attribution either way.
    expect(attribution(none, "en-freeze-001#0")).toBe(attribution(on, "en-freeze-001#0"));
  }, 300_000);
});
