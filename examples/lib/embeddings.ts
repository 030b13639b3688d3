/**
 * Example helper: an offline, deterministic LangChain `Embeddings` — hashed
 * character trigrams of each word into a fixed-size, L2-normalised vector.
 * Lexical, not semantic: it exists so the examples run with no model
 * download. Swap in any LangChain embeddings class for real use.
 */
import { Embeddings } from "@langchain/core/embeddings";
import { words } from "./cards.js";

/** FNV-1a 32-bit hash of a string. */
function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

export class TrigramHashEmbeddings extends Embeddings {
  constructor(readonly dimension = 256) {
    super({});
  }

  private embed(text: string): number[] {
    const v = new Array<number>(this.dimension).fill(0);
    for (const w of words(text)) {
      const padded = `#${w}#`;
      for (let i = 0; i + 3 <= padded.length; i++) v[fnv1a(padded.slice(i, i + 3)) % this.dimension]! += 1;
    }
    const norm = Math.sqrt(v.reduce((s, x) => s + x * x, 0));
    return norm === 0 ? v : v.map((x) => x / norm);
  }

  async embedDocuments(texts: string[]): Promise<number[][]> {
    return texts.map((t) => this.embed(t));
  }

  async embedQuery(text: string): Promise<number[]> {
    return this.embed(text);
  }
}
