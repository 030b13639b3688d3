// A TypeScript consumer: the README's "retrieve node in your own graph"
// program as a library function, type-checked with `tsc --strict` against the
// shipped .d.ts files (the README's block itself is compiled and run from the
// markdown: test/helpers/doc-snippets.ts).
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import { RetrievalAnnotation, retrieveNode } from "retrace-eval";
import { RetrievalTraceCollector } from "retrace-eval/agent";
import {
  HashingEmbedder,
  HybridRetriever,
  InMemoryDenseIndex,
  type Chunk,
  type RetrievalTrace,
} from "retrace-eval/retrieval";
import { ndcgAtK } from "retrace-eval/metrics";
import { RetraceRetriever } from "retrace-eval/langchain";

const MyState = Annotation.Root({ ...RetrievalAnnotation.spec, answer: Annotation<string> });

export async function run(chunks: Chunk[]): Promise<number> {
  const embedder = new HashingEmbedder();
  const retriever = new HybridRetriever({
    chunks,
    embedder,
    dense: await InMemoryDenseIndex.fromChunks(chunks, embedder),
  });
  const graph = new StateGraph(MyState)
    .addNode("retrieve", retrieveNode)
    .addEdge(START, "retrieve")
    .addEdge("retrieve", END)
    .compile();
  const collector = new RetrievalTraceCollector();
  await graph.invoke(
    { messages: [{ role: "user", content: "my card was swallowed by an ATM" }], locale: "en" },
    { configurable: { retriever, thread_id: "t1" }, callbacks: [collector] },
  );
  const trace: RetrievalTrace | undefined = collector.forTurn("t1", 0);
  const docs = await new RetraceRetriever({ retriever }).invoke("swallowed card");
  const first: string = docs[0]?.metadata.parentId;
  return ndcgAtK(trace?.retrievedIds ?? [], [first], 5) ?? 0;
}
