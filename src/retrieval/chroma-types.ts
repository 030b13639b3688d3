/**
 * What retrace uses of a Chroma client and of its collections, as retrace's
 * own types.
 *
 * retrace's public declarations name these, never chromadb's: chromadb 3.5's
 * `chromadb.d.ts` imports `@hey-api/client-fetch`, which chromadb does not
 * install, so a consumer type-checking with `skipLibCheck: false` (the
 * TypeScript default) fails on any declaration of ours that reaches it. The
 * objects are chromadb's own `ChromaClient` and collections: `connectChroma`
 * assigns a `new ChromaClient(…)` to `ChromaClientLike` without a cast, so
 * the compiler checks that chromadb satisfies these interfaces. A caller who
 * needs the rest of chromadb's API can cast to chromadb's types.
 */

/** A metadata value retrace writes (collection and record metadata). */
export type ChromaMetadataValue = string | number | boolean | null;

/** Metadata as retrace writes it; what Chroma returns is read as `Record<string, unknown>`. */
export type ChromaMetadataInput = Record<string, ChromaMetadataValue>;

/** An equality filter on record metadata, e.g. `{ locale: "en" }`. */
export type ChromaWhere = Record<string, string | number | boolean>;

/** Fields a `get` or `query` can return. */
export type ChromaInclude = "distances" | "documents" | "embeddings" | "metadatas" | "uris";

/** Records of a collection as `get` returns them (fields not in `include` come back empty). */
export interface ChromaGetResult {
  readonly ids: string[];
  readonly embeddings: number[][];
  readonly metadatas: (Readonly<Record<string, unknown>> | null)[];
  readonly documents: (string | null)[];
}

/** Nearest neighbours as `query` returns them: one list per query vector. */
export interface ChromaQueryResult {
  readonly ids: string[][];
  readonly distances: (number | null)[][];
  readonly metadatas: (Readonly<Record<string, unknown>> | null)[][];
  readonly documents: (string | null)[][];
}

/** The part of a chromadb `Collection` retrace uses. */
export interface ChromaCollection {
  /** Chroma's id of the collection (a UUID; a new one when a collection is recreated). */
  readonly id: string;
  readonly name: string;
  /** Collection-level metadata (retrace's `StoreMetadata` on a retrace collection). */
  readonly metadata: Readonly<Record<string, unknown>> | undefined;
  count(): Promise<number>;
  add(args: {
    ids: string[];
    embeddings?: number[][];
    metadatas?: ChromaMetadataInput[];
    documents?: string[];
  }): Promise<void>;
  get(args?: {
    ids?: string[];
    where?: ChromaWhere;
    limit?: number;
    offset?: number;
    include?: ChromaInclude[];
  }): Promise<ChromaGetResult>;
  query(args: {
    queryEmbeddings: number[][];
    nResults?: number;
    where?: ChromaWhere;
    include?: ChromaInclude[];
  }): Promise<ChromaQueryResult>;
  /** Renames the collection and/or replaces its metadata. */
  modify(args: { name?: string; metadata?: ChromaMetadataInput }): Promise<void>;
}

/** The part of a chromadb `ChromaClient` retrace uses. */
export interface ChromaClientLike {
  /** The server's heartbeat (nanoseconds); rejects when it does not answer. */
  heartbeat(): Promise<number>;
  listCollections(args?: { limit?: number; offset?: number }): Promise<ChromaCollection[]>;
  /** Rejects when there is no such collection. retrace passes `embeddingFunction: null` (it always supplies vectors). */
  getCollection(args: { name: string; embeddingFunction?: unknown }): Promise<ChromaCollection>;
  createCollection(args: {
    name: string;
    configuration?: { hnsw?: { space?: "cosine" | "l2" | "ip" } };
    metadata?: ChromaMetadataInput;
    embeddingFunction?: null;
  }): Promise<ChromaCollection>;
  deleteCollection(args: { name: string }): Promise<void>;
}
