/**
 * The pool of a labelling page (docs/labelling.md): for each turn, the union
 * of the top-`depth` cards of several systems (TREC pooling: judge what some
 * system retrieved, not the whole corpus), each card with the systems that
 * ranked it and where, and its best-matching passage with the query's terms
 * marked. Pure functions over plain data; the page script only lays it out.
 */
import { createHash } from "node:crypto";

/** The systems a pool may draw from: retrace's three retrieval modes and the user's graph (`--graph`). */
/** `recorded`: the retrieval recorded in traces (`label --traces`, docs/recorded-traces.md), scored as recorded. */
export const POOL_SYSTEMS = ["bm25", "dense", "hybrid", "graph", "recorded"] as const;
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
  /** What the assistant said before this turn (the case turn's `context`), shown in the conversation so far. */
  context?: string[];
  /** The query each system searched with (retrace's own modes: the contextualized query; `graph`: its scored call's query), for the systems that ran one. */
  queries: Partial<Record<PoolSystem, string>>;
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

/** A word's analysed term (the locale's analyzer: stemmed, accent-folded), or null for one of its stop words. */
export type TermOf = (word: string) => string | null;

/** Document frequencies over the cards known: `docs` cards, `df` the number of them holding each analysed term. */
export interface TermStats {
  docs: number;
  df: ReadonlyMap<string, number>;
}

/** The document frequencies of `docs` (one entry a card: its texts), by analysed term. */
export function termStats(docs: Iterable<readonly string[]>, termOf: TermOf): TermStats {
  const df = new Map<string, number>();
  let n = 0;
  for (const texts of docs) {
    n++;
    const seen = new Set<string>();
    for (const t of texts)
      for (const w of words(t)) {
        const term = termOf(w);
        if (term !== null) seen.add(term);
      }
    for (const term of seen) df.set(term, (df.get(term) ?? 0) + 1);
  }
  return { docs: n, df };
}

/** BM25's IDF of a term held by `df` of `n` cards: ln(1 + (n − df + 0.5) / (df + 0.5)). */
export function idf(df: number, n: number): number {
  return Math.log(1 + (n - df + 0.5) / (df + 0.5));
}

/**
 * The IDF floor of a marked term (docs/labelling.md): ln 2, which BM25's IDF
 * reaches exactly when a term is held by half the cards; a query term held by
 * more than half of them ("card" in a card-services KB) is not marked.
 */
export const MARK_IDF_FLOOR = Math.log(2);

/**
 * The query terms worth marking, as analysed terms: the words of `queries`
 * that are not stop words of the locale's analyzer (`termOf` gives null) and
 * whose IDF over `stats` is at least MARK_IDF_FLOOR. A term no card holds is
 * kept (it marks nothing). Without stats (no texts known), stop words alone are left out.
 */
export function queryTerms(queries: readonly string[], termOf: TermOf, stats?: TermStats): Set<string> {
  const out = new Set<string>();
  for (const q of queries)
    for (const w of words(q)) {
      const term = termOf(w);
      if (term === null) continue;
      const df = stats?.df.get(term) ?? 0;
      if (stats !== undefined && df > 0 && idf(df, stats.docs) < MARK_IDF_FLOOR) continue;
      out.add(term);
    }
  return out;
}

/** How many distinct query terms `text` holds. */
export function termOverlap(text: string, terms: ReadonlySet<string>, termOf: TermOf): number {
  const seen = new Set<string>();
  for (const w of words(text)) {
    const term = termOf(w);
    if (term !== null && terms.has(term)) seen.add(term);
  }
  return seen.size;
}

/** The passage among `texts` holding the most distinct query terms (the first on a tie); undefined when there is none. */
export function bestPassage(texts: readonly string[], terms: ReadonlySet<string>, termOf: TermOf): string | undefined {
  let best: string | undefined;
  let bestScore = -1;
  for (const t of texts) {
    const s = termOverlap(t, terms, termOf);
    if (s > bestScore) [best, bestScore] = [t, s];
  }
  return best;
}

/** `text` cut into runs, the words whose analysed term is a query term marked (whole words, case-insensitive). The runs joined give `text` back unchanged. */
export function markTerms(text: string, terms: ReadonlySet<string>, termOf: TermOf): Segments {
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
    const term = termOf(m[0].toLowerCase());
    push(m[0], term !== null && terms.has(term));
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
export function poolOf(
  lists: Partial<Record<PoolSystem, readonly string[]>>,
  systems: readonly PoolSystem[],
  depth: number,
): { id: string; ranks: Partial<Record<PoolSystem, number>> }[] {
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
  const firstSystem = (r: Partial<Record<PoolSystem, number>>) =>
    systems.findIndex((s) => r[s] !== undefined && r[s] === best(r));
  return [...ranks.entries()]
    .map(([id, r]) => ({ id, ranks: r }))
    .sort(
      (a, b) =>
        best(a.ranks) - best(b.ranks) ||
        firstSystem(a.ranks) - firstSystem(b.ranks) ||
        (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
    );
}

/** The page's pool hash: sha256 over the cases' ids, turns and pooled card ids (16 hex digits). */
export function poolHash(cases: readonly LabelCase[], systems: readonly PoolSystem[], depth: number): string {
  const basis = JSON.stringify({
    systems,
    depth,
    cases: cases.map((c) => [c.id, c.turns.map((t) => [t.user, t.pool.map((p) => p.id)])]),
  });
  return createHash("sha256").update(basis, "utf8").digest("hex").slice(0, 16);
}
