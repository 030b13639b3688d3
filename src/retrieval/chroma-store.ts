/**
 * Chroma collections of retrace: how they are named, what their metadata
 * records, how the retriever finds the current one, and `ChromaDenseIndex`,
 * the `DenseIndex` over a collection.
 *
 * Naming: `retrace-<kb hash, 12 hex>-<sanitised embedder id>-d<dimension>`,
 * so a changed KB or a changed embedder never mixes vectors in one
 * collection. Staging collections (being filled by an ingest) are
 * `<final name>--staging-<8 hex>`; nothing ever reads them.
 *
 * A collection is *complete* when its metadata says `complete: true` and its
 * chunk count, chunk-set hash, embedder id and dimension match what is
 * expected. Only complete collections are served. The metadata also carries
 * `completedAt`, so the latest complete collection of an embedder can be
 * found when the KB changed and its new ingest has not completed (yet).
 */
import { createHash, randomBytes } from "node:crypto";
import { DimensionMismatchError, InvalidArgumentError, ServiceUnavailableError } from "../errors.js";
import type { Chunk, Locale } from "../kb/types.js";
import { LOCALE_EXPECTED, isLocale } from "../kb/types.js";
import { log } from "../log.js";
import type { ChromaClientLike, ChromaCollection, ChromaMetadataInput } from "./chroma-types.js";
import type { DenseIndex, DenseSearchOptions } from "./dense.js";
import { fingerprintOf } from "./fingerprint.js";
import { assertPositiveInteger, compareIds } from "./fusion.js";
import type { Embedder, Ranked } from "./types.js";

export const COLLECTION_PREFIX = "retrace-";
export const STAGING_MARK = "--staging-";
/** Version of the metadata layout below; bump it when it changes incompatibly. */
export const STORE_SCHEMA_VERSION = 1;
/** Longest sanitised embedder id kept verbatim in a collection name. */
const MAX_EMBEDDER_PART = 40;
/** Chroma's rule (server 1.x): 3-512 chars of [a-zA-Z0-9._-], alphanumeric at both ends, no "..". */
const CHROMA_NAME = /^[a-zA-Z0-9][a-zA-Z0-9._-]{1,510}[a-zA-Z0-9]$/;

/** Collection-level metadata of a retrace collection. */
export interface StoreMetadata {
  retrace: number;
  /** Full KB content hash. */
  kbHash: string;
  /** Hash of the chunk set (ids, fields, text): catches a chunker change with an unchanged KB. */
  chunksHash: string;
  embedder: string;
  dimension: number;
  chunks: number;
  complete: boolean;
  startedAt: number;
  completedAt?: number;
  /** On a staging collection: the name it will take. */
  target?: string;
  /** On a staging collection: `<hostname>:<pid>` of the ingesting process (to tell stale from in use). */
  owner?: string;
  /** Fingerprint of the embedder's weights (sha256 of its model files), when it has files (docs/reliability.md). */
  weights?: string;
}

/** Per-record metadata (what `ChromaDenseIndex` reads back). */
export interface ChunkMetadata {
  parentId: string;
  locale: Locale;
  title: string;
  section: string;
  [key: string]: string;
}

function shortHash(s: string, hexChars: number): string {
  return createHash("sha256").update(s).digest("hex").slice(0, hexChars);
}

/**
 * The collection name for a KB and an embedder. The embedder id is lowercased
 * and reduced to `[a-z0-9.-]`; when that changes or truncates it, a 6-hex hash
 * of the original id is appended so two ids never share a name.
 */
export function collectionName(kbHash: string, embedder: Pick<Embedder, "id" | "dimension">): string {
  const kb = kbHash.toLowerCase().replace(/[^a-f0-9]/g, "");
  if (kb.length < 12) throw new InvalidArgumentError("kbHash", "a hex digest of at least 12 characters", kbHash);
  assertPositiveInteger("embedder.dimension", embedder.dimension);
  if (embedder.id.trim() === "") throw new InvalidArgumentError("embedder.id", "a non-empty string", embedder.id);
  let part = embedder.id
    .toLowerCase()
    .replace(/[^a-z0-9.]+/g, "-")
    .replace(/\.{2,}/g, ".")
    .replace(/^[-.]+|[-.]+$/g, "");
  const exact = part === embedder.id && part.length <= MAX_EMBEDDER_PART;
  if (part.length > MAX_EMBEDDER_PART) part = part.slice(0, MAX_EMBEDDER_PART).replace(/[-.]+$/, "");
  if (!exact) part = `${part === "" ? "embedder" : part}-${shortHash(embedder.id, 6)}`;
  // New weights under the same model id get a new collection (docs/reliability.md).
  const fp = fingerprintOf(embedder);
  const weights =
    fp === undefined
      ? ""
      : `-w${fp
          .toLowerCase()
          .replace(/[^a-f0-9]/g, "")
          .slice(0, 8)}`;
  const name = `${COLLECTION_PREFIX}${kb.slice(0, 12)}-${part}${weights}-d${embedder.dimension}`;
  if (!CHROMA_NAME.test(name) || name.includes(".."))
    throw new InvalidArgumentError("collection name", "a valid Chroma name", name);
  return name;
}

export function stagingCollectionName(finalName: string, random: string = randomBytes(4).toString("hex")): string {
  return `${finalName}${STAGING_MARK}${random}`;
}

export function isStagingName(name: string): boolean {
  return name.startsWith(COLLECTION_PREFIX) && name.includes(STAGING_MARK);
}

/** The final name a staging name will take (`undefined` for a non-staging name). */
export function stagingTarget(name: string): string | undefined {
  const at = name.indexOf(STAGING_MARK);
  return isStagingName(name) && at > 0 ? name.slice(0, at) : undefined;
}

/** Order-independent hash of the chunks' ids, fields and text. */
export function chunksHash(chunks: readonly Chunk[]): string {
  const rows = chunks.map((c) => JSON.stringify([c.id, c.parentId, c.locale, c.title, c.section, c.text])).sort();
  const h = createHash("sha256");
  for (const r of rows) h.update(r).update("\u0000");
  return h.digest("hex");
}

/** The retrace metadata of a collection, or null when it is not one of ours (or is malformed). */
export function readStoreMetadata(collection: Pick<ChromaCollection, "metadata">): StoreMetadata | null {
  const m = collection.metadata as Record<string, unknown> | undefined | null;
  if (m === undefined || m === null || typeof m.retrace !== "number") return null;
  const str = (k: string) => (typeof m[k] === "string" ? (m[k] as string) : undefined);
  const num = (k: string) => (typeof m[k] === "number" ? (m[k] as number) : undefined);
  const kbHash = str("kbHash");
  const chunksHashValue = str("chunksHash");
  const embedder = str("embedder");
  const dimension = num("dimension");
  const chunks = num("chunks");
  const startedAt = num("startedAt");
  if (
    kbHash === undefined ||
    chunksHashValue === undefined ||
    embedder === undefined ||
    dimension === undefined ||
    chunks === undefined
  ) {
    return null;
  }
  const meta: StoreMetadata = {
    retrace: m.retrace,
    kbHash,
    chunksHash: chunksHashValue,
    embedder,
    dimension,
    chunks,
    complete: m.complete === true,
    startedAt: startedAt ?? 0,
  };
  const completedAt = num("completedAt");
  if (completedAt !== undefined) meta.completedAt = completedAt;
  const target = str("target");
  if (target !== undefined) meta.target = target;
  const owner = str("owner");
  if (owner !== undefined) meta.owner = owner;
  const weights = str("weights");
  if (weights !== undefined) meta.weights = weights;
  return meta;
}

/** StoreMetadata as Chroma collection metadata (no undefined values). */
export function toCollectionMetadata(meta: StoreMetadata): ChromaMetadataInput {
  const out: ChromaMetadataInput = {};
  for (const [k, v] of Object.entries(meta)) if (v !== undefined) out[k] = v as string | number | boolean;
  return out;
}

export interface Expectation {
  embedder: Pick<Embedder, "id" | "dimension">;
  chunks?: number;
  chunksHash?: string;
}

/** Why a collection is not a complete match for `expected`, or null when it is. */
export function incompleteReason(meta: StoreMetadata | null, expected: Expectation): string | null {
  if (meta === null) return "it has no retrace metadata";
  if (meta.retrace !== STORE_SCHEMA_VERSION)
    return `its metadata layout is version ${meta.retrace}, expected ${STORE_SCHEMA_VERSION}`;
  if (!meta.complete) return "it was never completed";
  if (meta.embedder !== expected.embedder.id) return `it holds vectors of embedder ${meta.embedder}`;
  if (meta.dimension !== expected.embedder.dimension) return `its dimension is ${meta.dimension}`;
  const fp = fingerprintOf(expected.embedder);
  if (fp !== undefined && meta.weights !== fp) return "it holds vectors of other weights of this embedder";
  if (expected.chunks !== undefined && meta.chunks !== expected.chunks)
    return `it holds ${meta.chunks} chunks, expected ${expected.chunks}`;
  if (expected.chunksHash !== undefined && meta.chunksHash !== expected.chunksHash)
    return "its chunks differ from the KB's";
  return null;
}

/** Every collection of the database (listCollections pages by 100). */
export async function listAllCollections(client: ChromaClientLike): Promise<ChromaCollection[]> {
  const all: ChromaCollection[] = [];
  const limit = 100;
  for (let offset = 0; ; offset += limit) {
    const page = await client.listCollections({ limit, offset });
    all.push(...page);
    if (page.length < limit) return all;
  }
}

function isNotFound(e: unknown): boolean {
  return e instanceof Error && (e.name === "ChromaNotFoundError" || /does not exist|not found/i.test(e.message));
}

/** The collection named `name`, or null when there is none. */
export async function getCollectionOrNull(client: ChromaClientLike, name: string): Promise<ChromaCollection | null> {
  try {
    // embeddingFunction null: we always supply vectors (no @chroma-core/default-embed lookup).
    return await client.getCollection({ name, embeddingFunction: null });
  } catch (e) {
    if (isNotFound(e)) return null;
    throw e;
  }
}

/** Chroma's "expecting embedding with dimension of X, got Y" as a DimensionMismatchError. */
export function asDimensionMismatch(e: unknown, context: string): DimensionMismatchError | undefined {
  if (!(e instanceof Error)) return undefined;
  const m = /dimension of (\d+), got (\d+)/i.exec(e.message);
  if (m === null) return undefined;
  return new DimensionMismatchError(Number(m[1]), Number(m[2]), context);
}

export interface CurrentCollection {
  collection: ChromaCollection;
  name: string;
  metadata: StoreMetadata;
  /** True when it is the collection of the requested KB; false when it is the latest complete one of an older KB. */
  exact: boolean;
}

export interface OpenCurrentOptions {
  kbHash: string;
  embedder: Pick<Embedder, "id" | "dimension">;
  /** When the KB's own collection is missing, fall back to the embedder's latest complete one (default true). */
  fallbackToLatest?: boolean;
}

/**
 * The collection a retriever should open for this KB and embedder: the
 * complete collection of that name; else (when `fallbackToLatest`) the most
 * recently completed collection of the same embedder and dimension, with a
 * warning that it was built from another KB; else null.
 * A collection of the right name but another dimension → DimensionMismatchError.
 */
export async function openCurrentCollection(
  client: ChromaClientLike,
  options: OpenCurrentOptions,
): Promise<CurrentCollection | null> {
  const name = collectionName(options.kbHash, options.embedder);
  const own = await getCollectionOrNull(client, name);
  if (own !== null) {
    const meta = readStoreMetadata(own);
    if (meta !== null && meta.dimension !== options.embedder.dimension) {
      throw new DimensionMismatchError(
        meta.dimension,
        options.embedder.dimension,
        `embedder ${options.embedder.id} and collection ${name}`,
      );
    }
    if (meta !== null && incompleteReason(meta, { embedder: options.embedder }) === null) {
      return { collection: own, name, metadata: meta, exact: true };
    }
  }
  if (!(options.fallbackToLatest ?? true)) return null;
  let best: { collection: ChromaCollection; meta: StoreMetadata } | null = null;
  for (const c of await listAllCollections(client)) {
    if (!c.name.startsWith(COLLECTION_PREFIX) || isStagingName(c.name)) continue;
    const meta = readStoreMetadata(c);
    if (incompleteReason(meta, { embedder: options.embedder }) !== null || meta === null) continue;
    const at = meta.completedAt ?? 0;
    if (
      best === null ||
      at > (best.meta.completedAt ?? 0) ||
      (at === (best.meta.completedAt ?? 0) && c.name < best.collection.name)
    ) {
      best = { collection: c, meta };
    }
  }
  if (best === null) return null;
  log.warn(
    `No complete collection for this KB (${name}); serving ${best.collection.name}, built from KB ${best.meta.kbHash.slice(0, 12)}. ` +
      "Run `retrace ingest` to index the current KB.",
  );
  return { collection: best.collection, name: best.collection.name, metadata: best.meta, exact: false };
}

/** `openCurrentCollection`, or ServiceUnavailableError (exit 3) telling to run `retrace ingest`. */
export async function requireCurrentCollection(
  client: ChromaClientLike,
  options: OpenCurrentOptions,
): Promise<CurrentCollection> {
  const current = await openCurrentCollection(client, options);
  if (current === null) {
    throw new ServiceUnavailableError(
      "chroma",
      `No ingested collection for embedder ${options.embedder.id} (expected ${collectionName(options.kbHash, options.embedder)}): run \`retrace ingest\` first`,
    );
  }
  return current;
}

/**
 * Extra results asked of Chroma beyond topN, so that a group of equal scores
 * straddling the cut is resolved by id (Chroma picks an arbitrary member of a
 * tie when it cuts). Orthogonal vectors (score 0) tie often.
 */
export const TIE_LOOKAHEAD = 16;

/**
 * `DenseIndex` over a Chroma collection created with cosine space.
 * score = 1 − cosine distance (cosine similarity; Chroma computes it in
 * float32), ranks 1-based, ties by id.
 */
export class ChromaDenseIndex implements DenseIndex {
  readonly name: string;
  /** Expected query dimension (from the collection metadata), when known. */
  readonly dimension: number | undefined;

  constructor(
    readonly collection: ChromaCollection,
    options?: { dimension?: number },
  ) {
    this.name = `chroma:${collection.name}`;
    this.dimension = options?.dimension ?? readStoreMetadata(collection)?.dimension;
  }

  async search(vector: number[], options: DenseSearchOptions): Promise<Ranked[]> {
    assertPositiveInteger("topN", options.topN);
    if (options.locale !== undefined && !isLocale(options.locale)) {
      throw new InvalidArgumentError("locale", LOCALE_EXPECTED, options.locale);
    }
    if (this.dimension !== undefined && vector.length !== this.dimension) {
      throw new DimensionMismatchError(this.dimension, vector.length, `queries of ${this.name}`);
    }
    for (const x of vector) if (!Number.isFinite(x)) throw new InvalidArgumentError("vector", "finite numbers", x);
    let res;
    try {
      res = await this.collection.query({
        queryEmbeddings: [vector],
        nResults: options.topN + TIE_LOOKAHEAD,
        ...(options.locale !== undefined ? { where: { locale: options.locale } } : {}),
        include: ["distances", "metadatas"],
      });
    } catch (e) {
      throw asDimensionMismatch(e, `queries of ${this.name}`) ?? e;
    }
    const ids = res.ids[0] ?? [];
    const distances = res.distances[0] ?? [];
    const metas = res.metadatas[0] ?? [];
    const hits = ids.map((id, i) => {
      const meta = metas[i] as Record<string, unknown> | null | undefined;
      const parent = meta?.parentId;
      return { id, parentId: typeof parent === "string" ? parent : id, score: 1 - (distances[i] ?? 1) };
    });
    hits.sort((a, b) => b.score - a.score || compareIds(a.id, b.id));
    return hits.slice(0, options.topN).map((h, i) => ({ ...h, rank: i + 1 }));
  }
}
