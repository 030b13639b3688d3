/**
 * Disk space of a local Chroma data dir: removing the HNSW segment folders
 * of deleted collections (docs/reliability.md, "The data dir does not grow
 * without bound").
 *
 * A local Chroma 1.0.x server keeps each collection's vector index in
 * `<data dir>/<vector segment id>/` (header.bin, data_level0.bin,
 * length.bin, link_lists.bin) and everything else in `<data dir>/chroma.sqlite3`.
 * `deleteCollection` removes the collection's rows (`collections`,
 * `segments`) but never its folder (chroma-core/chroma#5259: removal is left
 * to a garbage collector the single-node server does not run), and the
 * client API does not expose segment ids. So retrace reads the live segment
 * ids from the sqlite file itself, read-only, with the small reader below
 * (table b-trees, records, overflow pages: the parts of the file format
 * https://www.sqlite.org/fileformat2.html needed for two small tables), and
 * removes every UUID-named folder that no segment row names.
 *
 * Nothing is removed unless the read is trustworthy: the file is a UTF-8
 * sqlite 3 database in rollback-journal mode with no hot journal (a write
 * in progress), its change counter is the same before and after the read,
 * every collection row has a segment row, and a folder holds only the
 * files an HNSW segment has. Any doubt: nothing is removed (a debug line
 * says why), since leaking space is better than losing an index.
 */
import { closeSync, fstatSync, openSync, readSync, statSync } from "node:fs";
import { lstat, readdir, rm } from "node:fs/promises";
import path from "node:path";
import { log } from "../log.js";

export const CHROMA_SQLITE_FILE = "chroma.sqlite3";
/** What a Chroma HNSW segment folder may hold (index_metadata.pickle: written by Chroma's Python server). */
const SEGMENT_FILES = new Set([
  "header.bin",
  "data_level0.bin",
  "length.bin",
  "link_lists.bin",
  "index_metadata.pickle",
]);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Pages a read may visit before it is judged a corrupt (cyclic) file. */
const MAX_PAGES_VISITED = 1_000_000;

export type SqliteValue = null | number | bigint | string | Uint8Array;

class SqliteFormatError extends Error {}

/** Read-only access to the pages of a sqlite 3 file (the header checks of the module comment). */
class SqliteFile {
  readonly pageSize: number;
  readonly usable: number;
  readonly pages: number;
  readonly changeCounter: number;
  private readonly fd: number;

  constructor(file: string) {
    this.fd = openSync(file, "r");
    try {
      const h = Buffer.alloc(100);
      if (readSync(this.fd, h, 0, 100, 0) !== 100 || h.toString("latin1", 0, 16) !== "SQLite format 3\u0000")
        throw new SqliteFormatError("not a sqlite 3 file");
      const raw = h.readUInt16BE(16);
      this.pageSize = raw === 1 ? 65536 : raw;
      if (this.pageSize < 512 || (this.pageSize & (this.pageSize - 1)) !== 0)
        throw new SqliteFormatError(`page size ${raw}`);
      if (h[18] !== 1 || h[19] !== 1) throw new SqliteFormatError("WAL mode"); // a WAL file may hold newer pages
      this.usable = this.pageSize - (h[20] as number);
      if (h.readUInt32BE(56) !== 1) throw new SqliteFormatError("text encoding is not UTF-8");
      this.changeCounter = h.readUInt32BE(24);
      this.pages = Math.floor(fstatSync(this.fd).size / this.pageSize);
    } catch (e) {
      closeSync(this.fd);
      throw e;
    }
  }

  close(): void {
    closeSync(this.fd);
  }

  page(n: number): Buffer {
    if (!Number.isInteger(n) || n < 1 || n > this.pages)
      throw new SqliteFormatError(`page ${n} is outside the file (${this.pages} pages)`);
    const b = Buffer.alloc(this.pageSize);
    if (readSync(this.fd, b, 0, this.pageSize, (n - 1) * this.pageSize) !== this.pageSize)
      throw new SqliteFormatError(`short read of page ${n}`);
    return b;
  }
}

/** A sqlite varint at `o`: [value, bytes used]. */
function varint(b: Buffer, o: number): [number, number] {
  let v = 0;
  for (let i = 0; i < 8; i++) {
    const byte = b[o + i];
    if (byte === undefined) throw new SqliteFormatError("varint past the end of a page");
    v = v * 128 + (byte & 0x7f);
    if ((byte & 0x80) === 0) return [v, i + 1];
  }
  const last = b[o + 8];
  if (last === undefined) throw new SqliteFormatError("varint past the end of a page");
  return [v * 256 + last, 9];
}

/** The values of one record (a row's payload). */
function decodeRecord(p: Buffer): SqliteValue[] {
  const [headerSize, n] = varint(p, 0);
  const types: number[] = [];
  for (let o = n; o < headerSize;) {
    const [t, m] = varint(p, o);
    types.push(t);
    o += m;
  }
  const out: SqliteValue[] = [];
  let o = headerSize;
  const int = (len: number): number | bigint => {
    if (o + len > p.length) throw new SqliteFormatError("record past its payload");
    if (len === 8) return p.readBigInt64BE(o);
    return p.readIntBE(o, len);
  };
  for (const t of types) {
    if (t === 0) out.push(null);
    else if (t >= 1 && t <= 6) {
      const len = [0, 1, 2, 3, 4, 6, 8][t] as number;
      out.push(int(len));
      o += len;
    } else if (t === 7) {
      if (o + 8 > p.length) throw new SqliteFormatError("record past its payload");
      out.push(p.readDoubleBE(o));
      o += 8;
    } else if (t === 8 || t === 9) out.push(t - 8);
    else if (t >= 12) {
      const len = Math.floor((t - 12) / 2);
      if (o + len > p.length) throw new SqliteFormatError("record past its payload");
      out.push(t % 2 === 1 ? p.toString("utf8", o, o + len) : Uint8Array.from(p.subarray(o, o + len)));
      o += len;
    } else throw new SqliteFormatError(`serial type ${t}`);
  }
  return out;
}

/** Every row (its values, in column order) of the table b-tree rooted at `root`. */
function readTable(db: SqliteFile, root: number): SqliteValue[][] {
  const rows: SqliteValue[][] = [];
  const stack = [root];
  const seen = new Set<number>();
  const U = db.usable;
  const maxLocal = U - 35;
  const minLocal = Math.floor(((U - 12) * 32) / 255) - 23;
  while (stack.length > 0) {
    const n = stack.pop() as number;
    if (seen.has(n) || seen.size > MAX_PAGES_VISITED) throw new SqliteFormatError(`page ${n} reached twice`);
    seen.add(n);
    const page = db.page(n);
    const h = n === 1 ? 100 : 0;
    const kind = page[h];
    const cells = page.readUInt16BE(h + 3);
    if (kind === 0x05) {
      // Right-most child first, so pages come off the stack in rowid order.
      stack.push(page.readUInt32BE(h + 8));
      for (let i = cells - 1; i >= 0; i--) stack.push(page.readUInt32BE(page.readUInt16BE(h + 12 + 2 * i)));
    } else if (kind === 0x0d) {
      for (let i = 0; i < cells; i++) {
        let o = page.readUInt16BE(h + 8 + 2 * i);
        const [size, a] = varint(page, o);
        o += a;
        const [, b] = varint(page, o); // rowid
        o += b;
        let local = size;
        if (size > maxLocal) {
          const k = minLocal + ((size - minLocal) % (U - 4));
          local = k <= maxLocal ? k : minLocal;
        }
        if (o + local > page.length) throw new SqliteFormatError(`cell past the end of page ${n}`);
        const parts = [page.subarray(o, o + local)];
        let have = local;
        let next = local < size ? page.readUInt32BE(o + local) : 0;
        while (have < size) {
          if (next === 0 || seen.has(next)) throw new SqliteFormatError("broken overflow chain");
          seen.add(next);
          const ov = db.page(next);
          const take = Math.min(size - have, U - 4);
          parts.push(ov.subarray(4, 4 + take));
          have += take;
          next = ov.readUInt32BE(0);
        }
        rows.push(decodeRecord(Buffer.concat(parts)));
      }
    } else throw new SqliteFormatError(`page ${n} is not a table b-tree page (type ${String(kind)})`);
  }
  return rows;
}

/** Column names of a `CREATE TABLE name (col type …, …)` statement, in order (constraints skipped). */
function columnsOf(sql: string): string[] {
  const open = sql.indexOf("(");
  const close = sql.lastIndexOf(")");
  if (open < 0 || close < open) throw new SqliteFormatError("unreadable CREATE TABLE");
  // Comments out (`-- …` to the end of the line, `/* … */`); Chroma's schema has both kinds of line.
  const body = sql
    .slice(open + 1, close)
    .replace(/--[^\n]*/g, "")
    .replace(/\/\*[\s\S]*?\*\//g, "");
  const parts: string[] = [];
  let depth = 0;
  let cur = "";
  for (const ch of body) {
    if (ch === "(") depth++;
    if (ch === ")") depth--;
    if (ch === "," && depth === 0) {
      parts.push(cur);
      cur = "";
    } else cur += ch;
  }
  parts.push(cur);
  return parts
    .map((p) => p.trim())
    .filter((p) => !/^(constraint|primary|unique|check|foreign)\b/i.test(p))
    .map((p) => (/^["`[]?([^"`\]\s]+)/.exec(p)?.[1] ?? "").toLowerCase());
}

/**
 * Rows of the named tables of a sqlite 3 file, as objects keyed by column
 * name (read-only; see the module comment for what is refused). Throws when
 * the file cannot be read consistently.
 */
export function readSqliteTables(
  file: string,
  tables: readonly string[],
): Record<string, Record<string, SqliteValue>[]> {
  const db = new SqliteFile(file);
  try {
    const master = readTable(db, 1); // sqlite_schema: type, name, tbl_name, rootpage, sql
    const out: Record<string, Record<string, SqliteValue>[]> = {};
    for (const t of tables) {
      const row = master.find((r) => r[0] === "table" && r[1] === t);
      if (row === undefined) throw new SqliteFormatError(`no table ${t}`);
      const cols = columnsOf(String(row[4]));
      out[t] = readTable(db, Number(row[3])).map((r) => Object.fromEntries(cols.map((c, i) => [c, r[i] ?? null])));
    }
    return out;
  } finally {
    db.close();
  }
}

/** The segment ids (vector and metadata) and collection ids of a data dir's Chroma database; `{ error }` when it cannot be read consistently. */
export function liveSegments(dataDir: string): { segments: Set<string>; collections: Set<string> } | { error: string } {
  const file = path.join(dataDir, CHROMA_SQLITE_FILE);
  try {
    for (const side of ["-journal", "-wal"]) {
      if (fileSize(`${file}${side}`) > 0)
        return { error: `${path.basename(file)}${side} exists (a write in progress)` };
    }
    const before = new SqliteFile(file);
    const counter = before.changeCounter;
    before.close();
    const t = readSqliteTables(file, ["collections", "segments"]);
    const after = new SqliteFile(file);
    const changed = after.changeCounter !== counter;
    after.close();
    if (changed) return { error: "the database changed while it was read" };
    const segments = new Set<string>();
    const owners = new Set<string>();
    for (const r of t.segments ?? []) {
      if (typeof r.id !== "string" || typeof r.collection !== "string")
        return { error: "a segment row without id or collection" };
      segments.add(r.id.toLowerCase());
      owners.add(r.collection.toLowerCase());
    }
    const collections = new Set<string>();
    for (const r of t.collections ?? []) {
      if (typeof r.id !== "string") return { error: "a collection row without id" };
      const id = r.id.toLowerCase();
      collections.add(id);
      if (!owners.has(id)) return { error: `collection ${id} has no segment row` };
    }
    return { segments, collections };
  } catch (e) {
    return { error: e instanceof Error ? e.message : String(e) };
  }
}

/** Size of a file; 0 when there is none. */
function fileSize(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

/** Bytes (sum of file sizes) under `p`, following no link. */
export async function treeBytes(p: string): Promise<number> {
  const st = await lstat(p);
  if (!st.isDirectory()) return st.size;
  let total = 0;
  for (const e of await readdir(p)) total += await treeBytes(path.join(p, e));
  return total;
}

export interface SweepResult {
  /** Folders removed (absolute paths, sorted). */
  removed: string[];
  /** Their size: the sum of their files' sizes. */
  bytes: number;
  /** Why nothing was looked at or removed, when that is the case. */
  skipped?: string;
}

/**
 * Removes the segment folders under a local Chroma data dir that belong to
 * no live segment (see the module comment). Call it while no request is
 * running against a server of that data dir (retrace holds the data-dir
 * lock), or with the server stopped.
 */
export async function sweepSegmentFolders(dataDir: string): Promise<SweepResult> {
  let entries: string[];
  try {
    entries = (await readdir(dataDir, { withFileTypes: true }))
      .filter((e) => e.isDirectory() && UUID.test(e.name))
      .map((e) => e.name);
  } catch (e) {
    return { removed: [], bytes: 0, skipped: `cannot list ${dataDir}: ${e instanceof Error ? e.message : String(e)}` };
  }
  if (entries.length === 0) return { removed: [], bytes: 0 };
  const live = liveSegments(dataDir);
  if ("error" in live) {
    log.debug(`Not removing segment folders of deleted collections in ${dataDir}: ${live.error}`);
    return { removed: [], bytes: 0, skipped: live.error };
  }
  const removed: string[] = [];
  let bytes = 0;
  for (const name of entries.sort()) {
    if (live.segments.has(name.toLowerCase())) continue;
    const dir = path.join(dataDir, name);
    let size: number;
    try {
      const files = await readdir(dir, { withFileTypes: true });
      const odd = files.find((f) => !f.isFile() || !SEGMENT_FILES.has(f.name));
      if (odd !== undefined) {
        log.debug(`Keeping ${dir}: it holds ${odd.name}, not a file of a Chroma segment`);
        continue;
      }
      size = await treeBytes(dir);
      await rm(dir, { recursive: true, force: true });
    } catch (e) {
      log.debug(`Could not remove ${dir}: ${e instanceof Error ? e.message : String(e)}`);
      continue;
    }
    removed.push(dir);
    bytes += size;
  }
  if (removed.length > 0)
    log.debug(`Removed ${removed.length} segment folder(s) of deleted collections from ${dataDir} (${bytes} bytes)`);
  return { removed, bytes };
}
