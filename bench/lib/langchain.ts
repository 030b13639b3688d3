/**
 * Adapters that let LangChain's retrievers run on exactly our inputs: chunks
 * as LangChain Documents (id = chunk id, metadata parentId / locale) and one
 * of our embedders as a LangChain `Embeddings`.
 */
import { Document } from "@langchain/core/documents";
import { Embeddings } from "@langchain/core/embeddings";
import type { Chunk } from "../../src/kb/types.js";
import type { Embedder } from "../../src/retrieval/types.js";

export interface ChunkMetadata {
  chunkId: string;
  parentId: string;
  locale: string;
}

export function chunksToDocuments(
  chunks: readonly Pick<Chunk, "id" | "parentId" | "locale" | "text">[],
): Document<ChunkMetadata>[] {
  return chunks.map(
    (c) =>
      new Document<ChunkMetadata>({
        id: c.id,
        pageContent: c.text,
        metadata: { chunkId: c.id, parentId: c.parentId, locale: c.locale },
      }),
  );
}

/** Parent card ids of retrieved Documents, in rank order (duplicates kept; scoring dedups). */
export function parentsOf(docs: readonly Document[]): string[] {
  return docs.map((d) => {
    const parent = (d.metadata as Partial<ChunkMetadata>).parentId;
    if (typeof parent !== "string")
      throw new Error(`retrieved a Document without metadata.parentId: ${JSON.stringify(d.metadata)}`);
    return parent;
  });
}

/** One of our embedders behind LangChain's `Embeddings` interface (same vectors, no extra work). */
export class EmbedderAsLangChain extends Embeddings {
  constructor(private readonly embedder: Embedder) {
    super({});
  }

  override embedDocuments(texts: string[]): Promise<number[][]> {
    return this.embedder.embedDocuments(texts);
  }

  override embedQuery(text: string): Promise<number[]> {
    return this.embedder.embedQuery(text);
  }
}
