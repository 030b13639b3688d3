/**
 * The built-in embedder: hashed character n-grams, no model weights.
 *
 * It is *lexical-fuzzy, not semantic*: texts that share words or word pieces
 * ("tarjeta"/"tarjetas", "refund"/"refunds", a typo) end up close; synonyms and
 * paraphrases do not. It exists so the dense branch, the store and the whole
 * pipeline run for real where no sentence-embedding model can be downloaded.
 *
 * Features of a text (the "hashing trick", Weinberger et al. 2009):
 *   - tokens from `tokenize` (NFKC, lowercase, letter/digit runs, accents folded);
 *   - for each token, its character n-grams (n = minN..maxN, default 3..5) of
 *     `<token>` with boundary markers, weight 1 each;
 *   - the whole token as a word feature, weight `WORD_WEIGHT`;
 * each feature is hashed with FNV-1a (32-bit, over UTF-16 code units) then the
 * murmur3 finaliser; `h mod dimension` is the coordinate and bit 31 picks the
 * sign (+1/-1) so collisions cancel in expectation rather than pile up. The
 * vector is L2-normalised. A text with no token (empty, punctuation only)
 * embeds to the fixed unit vector of the feature `<empty>`.
 *
 * Deterministic, batch-invariant (each text is embedded on its own), and
 * stable across platforms and releases: changing any of the above must change
 * `id` (the `-v1` suffix), because the id names the Chroma collection.
 */
import { InvalidArgumentError } from "../../errors.js";
import { tokenize } from "../analyzer.js";
import type { Embedder } from "../types.js";

export const BUILTIN_DIMENSION = 384;
/** Weight of a whole-word feature relative to one n-gram. */
export const WORD_WEIGHT = 2;
const EMPTY_FEATURE = "<empty>";

export interface HashingEmbedderOptions {
  /** Output dimension; default 384 (the size of the common small sentence encoders). */
  dimension?: number;
  /** Smallest n-gram length; default 3. */
  minN?: number;
  /** Largest n-gram length; default 5. */
  maxN?: number;
}

/** 32-bit FNV-1a over UTF-16 code units (equal to the byte-wise FNV-1a for ASCII). Unsigned. */
export function fnv1a32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** MurmurHash3's 32-bit finaliser: spreads FNV's weak low bits over the whole word. Unsigned. */
export function fmix32(x: number): number {
  let h = x | 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** The hash of one feature: `fmix32(fnv1a32(feature))`. */
export function hashFeature(feature: string): number {
  return fmix32(fnv1a32(feature));
}

export class HashingEmbedder implements Embedder {
  readonly id: string;
  readonly dimension: number;
  readonly description = "built-in hashed character n-grams (lexical-fuzzy, not semantic; no model weights)";
  readonly minN: number;
  readonly maxN: number;

  constructor(options?: HashingEmbedderOptions) {
    const dimension = options?.dimension ?? BUILTIN_DIMENSION;
    const minN = options?.minN ?? 3;
    const maxN = options?.maxN ?? 5;
    if (!Number.isInteger(dimension) || dimension < 2) {
      throw new InvalidArgumentError("dimension", "an integer of at least 2", dimension);
    }
    if (!Number.isInteger(minN) || minN < 1) throw new InvalidArgumentError("minN", "a positive integer", minN);
    if (!Number.isInteger(maxN) || maxN < minN) {
      throw new InvalidArgumentError("maxN", `an integer of at least minN (${minN})`, maxN);
    }
    this.dimension = dimension;
    this.minN = minN;
    this.maxN = maxN;
    const grams = minN === 3 && maxN === 5 ? "" : `-n${minN}-${maxN}`;
    this.id = `builtin-hashed-ngrams-${dimension}${grams}-v1`;
  }

  /** The embedding of one text, synchronously. */
  embed(text: string): number[] {
    if (typeof text !== "string") throw new InvalidArgumentError("text", "a string", text);
    const v = new Float64Array(this.dimension);
    const tokens = tokenize(text);
    if (tokens.length === 0) this.add(v, EMPTY_FEATURE, 1);
    for (const token of tokens) {
      this.add(v, `w:${token}`, WORD_WEIGHT);
      const marked = `<${token}>`;
      for (let n = this.minN; n <= this.maxN; n++) {
        for (let i = 0; i + n <= marked.length; i++) this.add(v, marked.slice(i, i + n), 1);
      }
    }
    let norm = 0;
    for (const x of v) norm += x * x;
    norm = Math.sqrt(norm);
    if (norm === 0) {
      // Every feature cancelled out (possible with the sign trick): fall back to the empty feature.
      this.add(v, EMPTY_FEATURE, 1);
      norm = 1;
    }
    return Array.from(v, (x) => x / norm);
  }

  async embedDocuments(texts: string[]): Promise<number[][]> {
    return texts.map((t) => this.embed(t));
  }

  async embedQuery(text: string): Promise<number[]> {
    return this.embed(text);
  }

  private add(v: Float64Array, feature: string, weight: number): void {
    const h = hashFeature(feature);
    const index = h % this.dimension;
    v[index] = (v[index] as number) + (h & 0x80000000 ? -weight : weight);
  }
}
