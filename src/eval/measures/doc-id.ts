/**
 * The one rule that maps a retrieved document to a card id
 * (docs/evaluate-your-graph.md, "Documents → card ids"), shared by the
 * `--graph` capture (../sweep/capture.ts), the LangSmith evaluators
 * (./langsmith.ts), the Vitest matchers (src/testing/) and the library API:
 *
 * 1. `idMap(doc)` when given (`--id-map MODULE`): its result, whatever the metadata;
 * 2. else `metadata[idKey]` when `idKey` is given (`--id-key FIELD`): that field only;
 * 3. else the first present of `metadata.parentId`, `metadata.doc_id`,
 *    `metadata.id`, `metadata.source` (the exact string: no path or
 *    extension stripping), then `Document.id`.
 *
 * An id is a non-empty string, or a finite number (stringified). A document
 * with none is an error (exit 2) with one message: where, which document, the
 * keys tried and the keys present. Structural (no LangChain import): any
 * `{ id?, metadata? }` object is a document here.
 */
import { GraphInputError } from "../../errors.js";

/** What the rule reads of a document (a LangChain `Document` is one). */
export interface DocumentLike {
  id?: unknown;
  metadata?: Record<string, unknown> | null;
}

/** Metadata keys tried, in order, when no `idKey` / `idMap` is given; then `Document.id`. */
export const DEFAULT_ID_KEYS = ["parentId", "doc_id", "id", "source"] as const;

/** How a document maps to a card id (`--id-key` / `--id-map`; both unset: the default keys). */
export interface DocumentIdOptions<D extends DocumentLike = DocumentLike> {
  /** One metadata field to read (replaces the default chain). */
  idKey?: string;
  /**
   * A user function; its result is the id when it is a non-empty string (or a
   * finite number). Declared as a method so that a function typed for
   * LangChain's `Document` is accepted where any document-like is passed.
   */
  idMap?(doc: D): unknown;
}

/** The keys tried, in order: `["metadata.parentId", …, "Document.id"]`, `["metadata.FIELD"]` or `["idMap (--id-map)"]`. */
export function idKeysTried(opts: DocumentIdOptions<never>): string[] {
  if (opts.idMap !== undefined) return ["idMap (--id-map)"];
  if (opts.idKey !== undefined) return [`metadata.${opts.idKey}`];
  return [...DEFAULT_ID_KEYS.map((k) => `metadata.${k}`), "Document.id"];
}

/** The keys tried as one line, for messages and the report header. */
export function describeIdKeys(opts: DocumentIdOptions<never>): string {
  return idKeysTried(opts).join(", ");
}

function asId(v: unknown): string | null {
  if (typeof v === "string" && v !== "") return v;
  if (typeof v === "number" && Number.isFinite(v)) return String(v);
  return null;
}

/** The card id of one document by the rule above, or null when none applies. */
export function documentId<D extends DocumentLike>(doc: D, opts: DocumentIdOptions<D> = {}): string | null {
  if (opts.idMap !== undefined) return asId(opts.idMap(doc));
  const meta = (doc?.metadata ?? {}) as Record<string, unknown>;
  if (opts.idKey !== undefined) return asId(meta[opts.idKey]);
  for (const key of DEFAULT_ID_KEYS) {
    const id = asId(meta[key]);
    if (id !== null) return id;
  }
  return asId(doc?.id);
}

/**
 * The one message for a document without a card id: `where`, the document's
 * 1-based position, the keys tried, the metadata keys present and whether it
 * has a `Document.id`, and how to say where the id is.
 */
export function missingIdMessage(
  doc: DocumentLike,
  index: number,
  opts: DocumentIdOptions<never>,
  where: string,
): string {
  const keys = Object.keys(doc?.metadata ?? {}).sort();
  const hasId = asId(doc?.id) !== null;
  return (
    `${where}: document ${index + 1} has no card id; tried ${describeIdKeys(opts)}; ` +
    `metadata keys present: ${keys.length === 0 ? "none" : keys.join(", ")}; ${hasId ? "Document.id present" : "no Document.id"}. ` +
    "Name the metadata field that holds the card id with --id-key FIELD (idKey), or map each document with --id-map MODULE (idMap)."
  );
}

/**
 * Card ids of a ranked document list: each document mapped by `documentId`,
 * then deduplicated by first occurrence (chunks of one card collapse to the
 * rank of its best chunk, as retrace's own parent dedup does). Throws
 * GraphInputError (exit 2) on the first document with no id
 * (`missingIdMessage`); `where` says which turn or run.
 */
export function cardIdsOf<D extends DocumentLike>(
  docs: readonly D[],
  opts: DocumentIdOptions<D>,
  where: string,
): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  docs.forEach((doc, i) => {
    const id = documentId(doc, opts);
    if (id === null) throw new GraphInputError(missingIdMessage(doc, i, opts as DocumentIdOptions<never>, where));
    if (!seen.has(id)) {
      seen.add(id);
      out.push(id);
    }
  });
  return out;
}
