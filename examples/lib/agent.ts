/**
 * Example helper: the smallest agent graph around a LangChain retriever — a
 * `retrieve` node that searches with the latest user message and an `answer`
 * node that replies with the top document's first line. No LLM, so the
 * examples run offline; the retriever is what `retrace eval --graph` scores.
 */
import type { BaseRetrieverInterface } from "@langchain/core/retrievers";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import type { DocumentInterface } from "@langchain/core/documents";
import { Annotation, END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";

const AgentState = Annotation.Root({
  ...MessagesAnnotation.spec,
  documents: Annotation<DocumentInterface[]>({ reducer: (_old, next) => next, default: () => [] }),
});

export function agentOver(retriever: BaseRetrieverInterface) {
  return new StateGraph(AgentState)
    .addNode("retrieve", async (state, config) => {
      const last = [...state.messages].reverse().find((m) => HumanMessage.isInstance(m));
      const query = typeof last?.content === "string" ? last.content : "";
      return { documents: await retriever.invoke(query, config) };
    })
    .addNode("answer", async (state) => ({
      messages: [new AIMessage(state.documents[0]?.pageContent.split("\n")[0] ?? "I could not find anything on that.")],
    }))
    .addEdge(START, "retrieve")
    .addEdge("retrieve", "answer")
    .addEdge("answer", END)
    .compile();
}
