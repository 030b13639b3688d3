/**
 * SQLite FTS5 as a BM25 peer (better-sqlite3, in-memory database).
 *
 * One FTS5 table `t(id UNINDEXED, parent UNINDEXED, locale UNINDEXED, body)`
 * with the chunk text as `body`, ranked with `ORDER BY bm25(t)` (FTS5's Okapi
 * BM25, k1 = 1.2, b = 0.75 hard-coded; lower = better).
 *
 * Query tokenisation (`fts5OrQuery`): Unicode NFC, lowercase, then maximal
 * runs of letters, combining marks and digits (everything else separates, as
 * in FTS5's unicode61 tokenizer); each token is double-quoted (a phrase of one
 * token, so no word can act as an FTS5 operator) and the tokens are joined
 * with OR, in query order, duplicates kept. No stop words and no stemming
 * unless the table's tokenizer stems (`porter unicode61` does, English only).
 */
import { createRequire } from "node:module";

/** The part of better-sqlite3's API used here (the package ships no types). */
interface Statement {
  all(...params: unknown[]): unknown[];
  run(...params: unknown[]): unknown;
}
interface Database {
  exec(sql: string): void;
  prepare(sql: string): Statement;
  transaction<A extends unknown[]>(fn: (...args: A) => void): (...args: A) => void;
  close(): void;
}
type DatabaseCtor = new (file: string) => Database;

const BetterSqlite3 = createRequire(import.meta.url)("better-sqlite3") as DatabaseCtor;

const TOKEN_RE = /[\p{L}\p{M}\p{N}]+/gu;

/** The FTS5 MATCH expression for free text, or null when it has no token. */
export function fts5OrQuery(text: string): string | null {
  const tokens = [...text.normalize("NFC").toLowerCase().matchAll(TOKEN_RE)].map((m) => m[0]);
  if (tokens.length === 0) return null;
  return tokens.map((t) => `"${t.replace(/"/g, '""')}"`).join(" OR ");
}

export interface Fts5Row {
  id: string;
  parentId: string;
  locale: string;
  text: string;
}

export interface Fts5Hit {
  id: string;
  parentId: string;
  /** FTS5's bm25(): negative, lower is better. */
  score: number;
}

export class Fts5Index {
  private readonly db: Database;
  private readonly all: Statement;
  private readonly byLocale: Statement;

  /** `tokenizer` is FTS5's `tokenize` option, e.g. `unicode61 remove_diacritics 2` or `porter unicode61`. */
  constructor(rows: readonly Fts5Row[], tokenizer: string) {
    this.db = new BetterSqlite3(":memory:");
    this.db.exec(
      `CREATE VIRTUAL TABLE t USING fts5(id UNINDEXED, parent UNINDEXED, locale UNINDEXED, body, tokenize = '${tokenizer.replace(/'/g, "''")}')`,
    );
    const insert = this.db.prepare("INSERT INTO t (id, parent, locale, body) VALUES (?, ?, ?, ?)");
    this.db.transaction((all: readonly Fts5Row[]) => {
      for (const r of all) insert.run(r.id, r.parentId, r.locale, r.text);
    })(rows);
    this.all = this.db.prepare(
      "SELECT id, parent, bm25(t) AS score FROM t WHERE t MATCH ? ORDER BY bm25(t), id LIMIT ?",
    );
    this.byLocale = this.db.prepare(
      "SELECT id, parent, bm25(t) AS score FROM t WHERE t MATCH ? AND locale = ? ORDER BY bm25(t), id LIMIT ?",
    );
  }

  /** Top `limit` chunks for free text (tokenised by `fts5OrQuery`), optionally one locale only. */
  search(text: string, limit: number, locale?: string): Fts5Hit[] {
    const match = fts5OrQuery(text);
    if (match === null) return [];
    const rows = (locale === undefined ? this.all.all(match, limit) : this.byLocale.all(match, locale, limit)) as {
      id: string;
      parent: string;
      score: number;
    }[];
    return rows.map((r) => ({ id: r.id, parentId: r.parent, score: r.score }));
  }

  close(): void {
    this.db.close();
  }
}
