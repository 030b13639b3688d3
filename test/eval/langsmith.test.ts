/**
 * retrace's evaluators inside LangSmith's own `evaluate()` (the `langsmith`
 * package), local-only (`uploadRuns: false`) with a stubbed client and the
 * fetch guard: no request leaves the process. The target is a scripted
 * stand-in for an agent (a table of what it retrieved per question).
 */
import { evaluate } from "langsmith/evaluation";
import { Client } from "langsmith";
import { describe, expect, it } from "vitest";
import {
  langsmithEvaluators,
  langsmithMetric,
  langsmithRetrievalEvaluators,
  retrievedIdsOf,
} from "../../src/eval/measures/langsmith.js";
import { useFetchGuard } from "../helpers/network.js";

useFetchGuard();

/**
 * A client stub: LangSmith's own Client (evaluate() calls its local helpers,
 * e.g. to normalise evaluator results) pointed at a closed local port, with
 * every method that would upload something replaced by one that records the
 * call and fails. The fetch guard catches any other request.
 */
function stubClient(): { client: Client; calls: string[] } {
  const calls: string[] = [];
  const client = new Client({ apiUrl: "http://127.0.0.1:9", apiKey: "offline-stub", autoBatchTracing: false });
  for (const m of [
    "createRun",
    "updateRun",
    "batchIngestRuns",
    "multipartIngestRuns",
    "createFeedback",
    "createProject",
    "readProject",
    "readDataset",
    "listExamples",
    "createExperiment",
  ]) {
    (client as unknown as Record<string, unknown>)[m] = (..._args: unknown[]) => {
      calls.push(m);
      return Promise.reject(new Error(`offline stub: ${m} must not be called with uploadRuns: false`));
    };
  }
  return { client, calls };
}

// k = 3. Hand-checked scores per example:
// q1 gold [a, b], retrieved [c, a, d] → hit 1, recall 1/2, nDCG (1/log2 3)/(1 + 1/log2 3) ≈ 0.386853, MRR 1/2, P 1/3
// q2 gold [e],    retrieved [e, f, g] → hit 1, recall 1, nDCG 1, MRR 1, P 1/3
// q3 gold [h],    retrieved [x, y, z] → hit 0, recall 0, nDCG 0, MRR 0, P 0
// q4 gold []      (no-match turn)     → no retrieval keys at all
const RETRIEVED: Record<string, string[]> = {
  q1: ["c", "a", "d"],
  q2: ["e", "f", "g"],
  q3: ["x", "y", "z"],
  q4: ["a"],
};
const GOLD: Record<string, string[]> = { q1: ["a", "b"], q2: ["e"], q3: ["h"], q4: [] };
const examples = Object.keys(GOLD).map((q, i) => ({
  id: `00000000-0000-4000-8000-00000000000${i + 1}`,
  dataset_id: "00000000-0000-4000-8000-000000000000",
  inputs: { question: q },
  outputs: { must_cite_one_of: GOLD[q]!, expect: GOLD[q]!.length === 0 ? "refuse" : "answer" },
  created_at: "2025-01-01T00:00:00Z",
  modified_at: "2025-01-01T00:00:00Z",
  runs: [],
}));
/** Scripted stand-in for the agent under test. */
const agentStandIn = async (inputs: Record<string, unknown>) => {
  const q = inputs.question as string;
  return {
    retrievedIds: RETRIEVED[q]!,
    answer: q === "q4" ? "" : `answer [${RETRIEVED[q]![0]}]`,
    citedIds: q === "q4" ? [] : [RETRIEVED[q]![0]!],
    refused: q === "q4",
  };
};
const L3 = Math.log2(3);

describe("LangSmith evaluate() with retrace evaluators", () => {
  it("produces the retrieval keys for each gold-bearing example and none for the no-match one, locally", async () => {
    const { client, calls } = stubClient();
    const results = await evaluate(agentStandIn, {
      data: examples,
      evaluators: langsmithRetrievalEvaluators({ k: 3 }),
      client,
      uploadRuns: false,
      disableEvaluatorTracing: true,
    });
    const byQ: Record<string, Record<string, number>> = {};
    for (const row of results.results) {
      const q = row.example.inputs.question as string;
      byQ[q] = Object.fromEntries(row.evaluationResults.results.map((r) => [r.key, r.score as number]));
    }
    expect(byQ.q1!.retrieval_hit_at_k).toBe(1);
    expect(byQ.q1!.retrieval_recall_at_k).toBe(0.5);
    expect(byQ.q1!.retrieval_ndcg_at_k).toBeCloseTo(1 / L3 / (1 + 1 / L3), 12);
    expect(byQ.q1!.retrieval_mrr_at_k).toBe(0.5);
    expect(byQ.q1!.retrieval_precision_at_k).toBeCloseTo(1 / 3, 12);
    expect(byQ.q2).toMatchObject({
      retrieval_hit_at_k: 1,
      retrieval_recall_at_k: 1,
      retrieval_ndcg_at_k: 1,
      retrieval_mrr_at_k: 1,
    });
    expect(byQ.q3).toMatchObject({
      retrieval_hit_at_k: 0,
      retrieval_recall_at_k: 0,
      retrieval_ndcg_at_k: 0,
      retrieval_mrr_at_k: 0,
      retrieval_precision_at_k: 0,
    });
    expect(byQ.q4).toEqual({}); // empty gold: no keys, never a vacuous 1
    expect(calls).toEqual([]);
  });

  it("runs every deterministic evaluator as one multi-key evaluator each", async () => {
    const { client } = stubClient();
    const results = await evaluate(agentStandIn, {
      data: examples,
      evaluators: langsmithEvaluators({ k: 3 }),
      client,
      uploadRuns: false,
      disableEvaluatorTracing: true,
    });
    const q3 = results.results.find((r) => r.example.inputs.question === "q3")!;
    const keys = q3.evaluationResults.results.map((r) => r.key).sort();
    // q3 cites x, which was retrieved: correctness 1; it cites no gold: coverage 0.
    expect(keys).toEqual([
      "citation_correctness",
      "citation_coverage",
      "refusal_correctness",
      "retrieval_hit_at_k",
      "retrieval_mrr_at_k",
      "retrieval_ndcg_at_k",
      "retrieval_precision_at_k",
      "retrieval_recall_at_k",
    ]);
    const score = (k: string) => q3.evaluationResults.results.find((r) => r.key === k)!.score;
    expect([score("citation_coverage"), score("citation_correctness"), score("refusal_correctness")]).toEqual([
      0, 1, 1,
    ]);
  });
});

describe("the (run, example) shape", () => {
  it("returns {key, score, comment} whose comment says where the gold was", async () => {
    const r = await langsmithMetric("retrieval_hit_at_k", { k: 3 })(
      { outputs: { retrievedIds: ["c", "a", "d"] } },
      { outputs: { must_cite_one_of: ["a", "b"] } },
    );
    expect(r).toEqual({
      key: "retrieval_hit_at_k",
      score: 1,
      comment: "hit=1 recall=0.50 ndcg=0.39 mrr=0.50 precision=0.33 gold=[a,b] top3=[c,a,d]",
    });
  });
  it("reads retrieved ids from graph state traces or from LangChain documents", () => {
    expect(retrievedIdsOf({ retrieval: [{ retrievedIds: ["x"] }, { retrievedIds: ["a", "b"] }] })).toEqual(["a", "b"]);
    expect(
      retrievedIdsOf({
        documents: [{ pageContent: "", metadata: { parentId: "a", id: "a#1" } }, { metadata: { id: "b" } }],
      }),
    ).toEqual(["a", "b"]);
    expect(retrievedIdsOf({ answer: "x" })).toBeNull();
  });
  it("names the missing reference field", async () => {
    await expect(
      langsmithMetric("retrieval_hit_at_k", { k: 3 })({ outputs: { retrievedIds: [] } }, { outputs: {} }),
    ).rejects.toThrow(/must_cite_one_of/);
  });
});
