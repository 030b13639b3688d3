/**
 * Seeded synthetic corpus for scaling benchmarks.
 *
 * Vocabulary: the 40 most frequent ranks are real English stop words (so the
 * English analyzer drops them, as it drops them in real text), followed by
 * pronounceable pseudo-words built from consonant-vowel syllables (2–4
 * syllables, unique). Word occurrences follow a Zipf law over ranks,
 * P(rank r) ∝ 1 / r^s (s = 1 by default), sampled by binary search on the CDF.
 * A chunk has 40–80 words (uniform, mean 60). Queries draw 2–6 words from the
 * same Zipf law (stop words included, as in natural queries).
 *
 * The vocabulary, the chunks and the queries each come from their own
 * mulberry32 stream: the same seeds give the same corpus on every machine.
 */
import { mulberry32 } from "../../src/eval/stats/bootstrap.js";

export const STOP_WORDS_AT_TOP = [
  "the",
  "of",
  "and",
  "to",
  "a",
  "in",
  "is",
  "that",
  "for",
  "it",
  "as",
  "was",
  "with",
  "be",
  "by",
  "on",
  "not",
  "he",
  "this",
  "are",
  "or",
  "his",
  "from",
  "at",
  "which",
  "but",
  "have",
  "an",
  "had",
  "they",
  "you",
  "were",
  "their",
  "one",
  "all",
  "we",
  "can",
  "her",
  "has",
  "there",
] as const;

const CONSONANTS = "bcdfghjklmnprstvz";
const VOWELS = "aeiou";

export interface ZipfCorpusOptions {
  seed: number;
  /** Vocabulary size including the stop words; default 50,000. */
  vocabulary?: number;
  /** Zipf exponent; default 1. */
  exponent?: number;
}

export interface SyntheticChunk {
  id: string;
  parentId: string;
  locale: "en";
  text: string;
}

export class ZipfCorpus {
  readonly words: string[];
  private readonly cdf: Float64Array;

  constructor(options: ZipfCorpusOptions) {
    const size = options.vocabulary ?? 50_000;
    const s = options.exponent ?? 1;
    const rand = mulberry32(options.seed);
    const words: string[] = [...STOP_WORDS_AT_TOP];
    const seen = new Set<string>(words);
    while (words.length < size) {
      const syllables = 2 + Math.floor(rand() * 3);
      let w = "";
      for (let i = 0; i < syllables; i++) {
        w += CONSONANTS[Math.floor(rand() * CONSONANTS.length)];
        w += VOWELS[Math.floor(rand() * VOWELS.length)];
      }
      if (!seen.has(w)) {
        seen.add(w);
        words.push(w);
      }
    }
    this.words = words;
    this.cdf = new Float64Array(size);
    let total = 0;
    for (let r = 0; r < size; r++) {
      total += 1 / (r + 1) ** s;
      this.cdf[r] = total;
    }
    for (let r = 0; r < size; r++) this.cdf[r] = (this.cdf[r] as number) / total;
  }

  /** One word drawn from the Zipf law with `rand`. */
  word(rand: () => number): string {
    const u = rand();
    let lo = 0;
    let hi = this.cdf.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((this.cdf[mid] as number) < u) lo = mid + 1;
      else hi = mid;
    }
    return this.words[lo] as string;
  }

  private text(rand: () => number, minWords: number, maxWords: number): string {
    const n = minWords + Math.floor(rand() * (maxWords - minWords + 1));
    const out: string[] = [];
    for (let i = 0; i < n; i++) out.push(this.word(rand));
    return out.join(" ");
  }

  /**
   * `count` chunks of 40–80 words; ids `syn-<n>#1`, parent `syn-<n>`. Drawn from
   * their own stream `seed`, so `chunks(1000, s)` is a prefix of `chunks(100000, s)`.
   */
  chunks(count: number, seed: number): SyntheticChunk[] {
    const rand = mulberry32(seed);
    const out: SyntheticChunk[] = [];
    for (let i = 0; i < count; i++) {
      const parent = `syn-${String(i).padStart(6, "0")}`;
      out.push({ id: `${parent}#1`, parentId: parent, locale: "en", text: this.text(rand, 40, 80) });
    }
    return out;
  }

  /** `count` queries of 2–6 words, from their own stream `seed`. */
  queries(count: number, seed: number): string[] {
    const rand = mulberry32(seed);
    return Array.from({ length: count }, () => this.text(rand, 2, 6));
  }
}
