/**
 * Example (c): a custom LangChain `BaseRetriever` in a LangGraph agent,
 * evaluated with
 *
 *     retrace eval --graph examples/custom-retriever.ts --kb kb
 *
 * The retriever scores each card section by how many distinct query words it
 * contains (ties by document id) and returns the top `k` sections; each
 * section Document carries `metadata.parentId`, so retrace collapses sections
 * to their card. Set RETRACE_EXAMPLE_KB to read another KB folder.
 */
import { BaseRetriever } from "@langchain/core/retrievers";
import type { DocumentInterface } from "@langchain/core/documents";
import { agentOver } from "./lib/agent.js";
import { loadCardDocuments, words } from "./lib/cards.js";

export class WordOverlapRetriever extends BaseRetriever {
  override lc_namespace = ["examples", "retrievers"];
  static override lc_name() {
    return "WordOverlapRetriever";
  }

  constructor(
    private readonly docs: DocumentInterface[],
    private readonly k = 10,
  ) {
    super({});
  }

  override async _getRelevantDocuments(query: string): Promise<DocumentInterface[]> {
    const q = new Set(words(query).filter((w) => w.length > 2));
    return this.docs
      .map((doc) => {
        const d = new Set(words(doc.pageContent));
        let score = 0;
        for (const w of q) if (d.has(w)) score += 1;
        return { doc, score };
      })
      .filter((x) => x.score > 0)
      .sort((a, b) => b.score - a.score || String(a.doc.id).localeCompare(String(b.doc.id)))
      .slice(0, this.k)
      .map((x) => x.doc);
  }
}

export const retriever = new WordOverlapRetriever(loadCardDocuments(process.env.RETRACE_EXAMPLE_KB ?? "kb"));
export const graph = agentOver(retriever);
