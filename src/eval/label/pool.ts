/**
 * The pool of a labelling page (docs/labelling.md): for each turn, the union
 * of the top-`depth` cards of several systems (TREC pooling: judge what some
 * system retrieved, not the whole corpus), each card with the systems that
 * ranked it and where, and its best-matching passage with the query's terms
 * marked. Pure functions over plain data; the page script only lays it out.
 */
import { createHash } from "node:crypto";

/** The systems a pool may draw from: retrace's three retrieval modes and the user's graph (`--graph`). */
export const POOL_SYSTEMS = ["bm25", "dense", "hybrid", "graph"] as const;
export type PoolSystem = (typeof POOL_SYSTEMS)[number];
/** `--pool` unset: retrace's own three modes. */
export const DEFAULT_POOL: readonly PoolSystem[] = ["bm25", "dense", "hybrid"];
/** `--depth` unset: the top 10 cards of each system. */
export const DEFAULT_DEPTH = 10;

/** A passage cut into plain and marked runs: `[text, marked]` pairs (the page puts marked runs in `<mark>`, as text). */
export type Segments = [string, boolean][];

/** One pooled card of a turn. */
export interface PooledCard {
  id: string;
  title: string;
  /** system → 1-based rank in its top-`depth` list (systems that did not list it are absent). */
  ranks: Partial<Record<PoolSystem, number>>;
  /** The best-matching passage of the card (chunk or captured document), with the query's terms marked; empty when none is known. */
  passage: Segments;
  /** The judge's suggested grade (0–3), when a judge ran and gave one. */
  suggested?: number;
}

/** One turn of a labelling page. */
export interface LabelTurn {
  user: string;
  /** The query the systems retrieved with (the contextualized one), when it differs from `user`. */
  query?: string;
  pool: PooledCard[];
}

/** One case of a labelling page: its original line (exported back with the labels) and its turns. */
export interface LabelCase {
  id: string;
  locale: string;
  kind: string;
  /** The case's line of the cases file as parsed JSON (the export writes it back with the labelled turns' fields). */
  original: Record<string, unknown>;
  turns: LabelTurn[];
}

/** What the page script receives. */
export interface LabelPageData {
  kind: "label";
  title: string;
  /** Hash of the cases and pools: the page's localStorage key carries it, so two pages never share their work. */
  poolHash: string;
  systems: PoolSystem[];
  depth: number;
  /** The judge's model, when `--judge` ran (the page then shows suggestions and Cohen's κ). */
  judge: string | null;
  /** The file name the export downloads as. */
  exportName: string;
  cases: LabelCase[];
}

/** Lower-cased words of `text` (letters and digits, Unicode-aware). */
export function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** The query's terms that are worth marking: words of 3 or more characters, or any word with a digit. */
export function queryTerms(query: string): Set<string> {
  return new Set(words(query).filter((w) => w.length >= 3 || /\p{N}/u.test(w)));
}

/** How many distinct query terms `text` holds. */
export function termOverlap(text: string, terms: ReadonlySet<string>): number {
  const seen = new Set(words(text).filter((w) => terms.has(w)));
  return seen.size;
}

/** The passage among `texts` holding the most distinct query terms (the first on a tie); undefined when there is none. */
export function bestPassage(texts: readonly string[], terms: ReadonlySet<string>): string | undefined {
  let best: string | undefined;
  let bestScore = -1;
  for (const t of texts) {
    const s = termOverlap(t, terms);
    if (s > bestScore) [best, bestScore] = [t, s];
  }
  return best;
}

/** `text` cut into runs, the query's terms (whole words, case-insensitive) marked. The runs joined give `text` back unchanged. */
export function markTerms(text: string, terms: ReadonlySet<string>): Segments {
  const out: Segments = [];
  const push = (s: string, marked: boolean) => {
    if (s === "") return;
    const last = out[out.length - 1];
    if (last !== undefined && last[1] === marked) last[0] += s;
    else out.push([s, marked]);
  };
  let at = 0;
  for (const m of text.matchAll(/[\p{L}\p{N}]+/gu)) {
    const i = m.index ?? 0;
    push(text.slice(at, i), false);
    push(m[0], terms.has(m[0].toLowerCase()));
    at = i + m[0].length;
  }
  push(text.slice(at), false);
  return out;
}

/**
 * The union of the systems' lists, each cut at `depth`: cards in the order of
 * their best rank over the systems (then the order of `lists`, then id), each
 * with every system's rank.
 */
export function poolOf(lists: Partial<Record<PoolSystem, readonly string[]>>, systems: readonly PoolSystem[], depth: number): { id: string; ranks: Partial<Record<PoolSystem, number>> }[] {
  const ranks = new Map<string, Partial<Record<PoolSystem, number>>>();
  for (const s of systems) {
    const list = lists[s] ?? [];
    const seen = new Set<string>();
    for (const id of list) {
      if (seen.has(id)) continue;
      seen.add(id);
      if (seen.size > depth) break;
      const r = ranks.get(id) ?? {};
      r[s] = seen.size;
      ranks.set(id, r);
    }
  }
  const best = (r: Partial<Record<PoolSystem, number>>) => Math.min(...systems.map((s) => r[s] ?? Infinity));
  const firstSystem = (r: Partial<Record<PoolSystem, number>>) => systems.findIndex((s) => r[s] !== undefined && r[s] === best(r));
  return [...ranks.entries()]
    .map(([id, r]) => ({ id, ranks: r }))
    .sort((a, b) => best(a.ranks) - best(b.ranks) || firstSystem(a.ranks) - firstSystem(b.ranks) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** The page's pool hash: sha256 over the cases' ids, turns and pooled card ids (16 hex digits). */
export function poolHash(cases: readonly LabelCase[], systems: readonly PoolSystem[], depth: number): string {
  const basis = JSON.stringify({ systems, depth, cases: cases.map((c) => [c.id, c.turns.map((t) => [t.user, t.pool.map((p) => p.id)])]) });
  return createHash("sha256").update(basis, "utf8").digest("hex").slice(0, 16);
}
