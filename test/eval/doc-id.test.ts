/**
 * One document-id rule (src/eval/measures/doc-id.ts) for the `--graph`
 * capture, the LangSmith evaluators, the Vitest matchers and the library API:
 * the same ordered keys, `idKey` / `idMap`, and one error message. A graph
 * whose documents carry only `metadata.source` scores the same everywhere.
 */
import { Document } from "@langchain/core/documents";
import { BaseRetriever } from "@langchain/core/retrievers";
import { AIMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { GraphInputError } from "../../src/errors.js";
import {
  cardIdsOf,
  DEFAULT_ID_KEYS,
  describeIdKeys,
  documentId,
  missingIdMessage,
} from "../../src/eval/measures/doc-id.js";
import { retrievalEvaluator } from "../../src/eval/measures/evaluators.js";
import { langsmithMetric, langsmithRetrievalEvaluators, retrievedIdsOf } from "../../src/eval/measures/langsmith.js";
import { runGraphSweep } from "../../src/eval/sweep/external-graph.js";
import { checkRetrieve, retraceMatchers, type RetraceMatchers } from "../../src/testing/index.js";
import type { EvalCase } from "../../src/kb/types.js";

declare module "vitest" {
  interface Assertion<T> extends RetraceMatchers<T> {}
}
expect.extend(retraceMatchers);

/** What a LangChain file loader sets: only `metadata.source`. */
const bySource = (source: string) => new Document({ pageContent: source, metadata: { source } });
const DOCS = [
  bySource("refund-timelines"),
  bySource("card-freeze"),
  bySource("refund-timelines"),
  bySource("es-congelar-tarjeta"),
];
const GOLD = ["card-freeze"];

class SourceRetriever extends BaseRetriever {
  override lc_namespace = ["test", "source"];
  override async _getRelevantDocuments(): Promise<Document[]> {
    return DOCS;
  }
}

const graph = new StateGraph(MessagesAnnotation)
  .addNode("agent", async (s, config) => {
    const docs = await new SourceRetriever().invoke(String(s.messages[s.messages.length - 1]?.content ?? ""), config);
    return { messages: [new AIMessage(`found ${docs.length}`)] };
  })
  .addEdge(START, "agent")
  .addEdge("agent", END)
  .compile();

const oneCase: EvalCase = {
  id: "c1",
  locale: "en",
  kind: "golden",
  line: 1,
  turns: [{ user: "lock my card", must_cite_one_of: GOLD, expect: "answer" }],
};

describe("the document-id rule", () => {
  it("tries metadata.parentId, doc_id, id, source, then Document.id; idKey replaces the chain; idMap wins", () => {
    expect(DEFAULT_ID_KEYS).toEqual(["parentId", "doc_id", "id", "source"]);
    expect(describeIdKeys({})).toBe("metadata.parentId, metadata.doc_id, metadata.id, metadata.source, Document.id");
    expect(describeIdKeys({ idKey: "card" })).toBe("metadata.card");
    expect(describeIdKeys({ idMap: () => "x" })).toBe("idMap (--id-map)");
    expect(documentId({ metadata: { source: "s", id: "i" } })).toBe("i");
    expect(documentId({ metadata: { source: "s" }, id: "d" })).toBe("s");
    expect(documentId({ metadata: {}, id: "d" })).toBe("d");
    expect(documentId({ metadata: { n: 7 } }, { idKey: "n" })).toBe("7");
    expect(documentId({ metadata: { parentId: "p" } }, { idMap: () => "" })).toBeNull();
  });

  it("one message: where, which document, the keys tried and the keys present", () => {
    const bad = { metadata: { title: "t", url: "u" } };
    expect(missingIdMessage(bad, 1, {}, "run.outputs.documents")).toBe(
      "run.outputs.documents: document 2 has no card id; tried metadata.parentId, metadata.doc_id, metadata.id, metadata.source, Document.id; metadata keys present: title, url; no Document.id. Name the metadata field that holds the card id with --id-key FIELD (idKey), or map each document with --id-map MODULE (idMap).",
    );
    expect(() => cardIdsOf([bySource("a"), bad], {}, "w")).toThrowError(GraphInputError);
  });
});

describe("a graph whose documents carry only metadata.source", () => {
  it("scores the same in the --graph capture, the LangSmith evaluator and the Vitest matcher", async () => {
    const k = 3;
    // The --graph capture (what `retrace eval --graph` and runGraphSweep run).
    const [turn] = await runGraphSweep({
      graph,
      cases: [oneCase],
      evaluators: [retrievalEvaluator({ k })],
      knownIds: new Set(),
      k,
    });
    expect(turn!.report.retrievedIds).toEqual(["refund-timelines", "card-freeze", "es-congelar-tarjeta"]);
    const cli = Object.fromEntries(turn!.report.results.map((r) => [r.key, r.score]));
    expect(cli.retrieval_hit_at_k).toBe(1);
    expect(cli.retrieval_mrr_at_k).toBe(0.5);

    // LangSmith: the run's outputs carry the same documents (serialised the way a target returns them).
    const outputs = { documents: DOCS.map((d) => ({ pageContent: d.pageContent, metadata: d.metadata })) };
    expect(retrievedIdsOf(outputs)).toEqual(turn!.report.retrievedIds);
    const example = { outputs: { must_cite_one_of: GOLD } };
    const langsmith: Record<string, number> = {};
    for (const ev of langsmithRetrievalEvaluators({ k })) {
      const r = await ev({ outputs }, example);
      if ("key" in r) langsmith[r.key] = r.score;
    }
    expect(langsmith).toEqual(cli);

    // Vitest: the matcher takes the documents themselves.
    expect(DOCS).toRetrieve(GOLD, { k });
    expect(DOCS).not.toRetrieve(GOLD, { k: 1 });
    expect(checkRetrieve(DOCS, GOLD, { k: 1 }).message).toContain("card-freeze: rank 2, cut at k=1");
  });

  it("takes idKey / idMap in all three, and fails with the same message", async () => {
    const docs = [
      new Document({ pageContent: "x", metadata: { card: "card-freeze", source: "/kb/en/card-freeze.md" } }),
    ];
    expect(retrievedIdsOf({ documents: docs }, { idKey: "card" })).toEqual(["card-freeze"]);
    expect(checkRetrieve(docs, GOLD, { k: 1, idMap: (d: Document) => String(d.metadata.card) }).pass).toBe(true);
    const hit = await langsmithMetric("retrieval_hit_at_k", { k: 1, idKey: "card" })(
      { outputs: { documents: docs } },
      { outputs: { must_cite_one_of: GOLD } },
    );
    expect(hit).toMatchObject({ key: "retrieval_hit_at_k", score: 1 });

    const none = [new Document({ pageContent: "x", metadata: { title: "t" } })];
    const message =
      /document 1 has no card id; tried metadata\.parentId, metadata\.doc_id, metadata\.id, metadata\.source, Document\.id; metadata keys present: title; no Document\.id/;
    expect(() => retrievedIdsOf({ documents: none })).toThrow(message);
    expect(() => checkRetrieve(none, GOLD)).toThrow(message);
    await expect(
      langsmithMetric("retrieval_hit_at_k", { k: 1 })(
        { outputs: { documents: none } },
        { outputs: { must_cite_one_of: GOLD } },
      ),
    ).rejects.toThrow(message);
  });
});
