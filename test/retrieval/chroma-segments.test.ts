/**
 * The read-only sqlite reader behind the segment sweep
 * (src/retrieval/chroma-segments.ts), checked against files written by the
 * sqlite3 command-line shell when it is installed: multi-level table
 * b-trees, overflow pages, every serial type, comments in CREATE TABLE; and
 * what it refuses (WAL mode, not a database).
 */
import { spawnSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { liveSegments, readSqliteTables, sweepSegmentFolders } from "../../src/retrieval/chroma-segments.js";

const hasSqlite = spawnSync("sqlite3", ["-version"], { encoding: "utf8" }).status === 0;
const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});
async function tmp(): Promise<string> {
  const d = await mkdtemp(path.join(os.tmpdir(), "retrace-sqlite-"));
  dirs.push(d);
  return d;
}
function sqlite(file: string, sql: string): void {
  const r = spawnSync("sqlite3", [file], { input: sql, encoding: "utf8" });
  if (r.status !== 0) throw new Error(r.stderr);
}

describe.skipIf(!hasSqlite)("readSqliteTables against the sqlite3 shell", () => {
  it("reads every row of a table spanning several b-tree levels, with overflow pages and every value type", async () => {
    const dir = await tmp();
    const file = path.join(dir, "t.db");
    const rows = 20_000; // 1 kB pages: three b-tree levels
    sqlite(
      file,
      `PRAGMA page_size = 1024;
CREATE TABLE "segments" (
    id TEXT PRIMARY KEY, -- unique, (with a comma) in a comment
    type TEXT NOT NULL, /* a block comment, too */
    n INTEGER, f REAL, b BLOB,
    collection TEXT NOT NULL,
    UNIQUE (id, collection)
);
WITH RECURSIVE k(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM k WHERE i < ${rows - 1})
INSERT INTO segments SELECT 'seg-' || i, CASE WHEN i % 97 = 0 THEN printf('%.*c', 5000, 'x') ELSE 'vector' END,
  CASE i % 7 WHEN 0 THEN NULL WHEN 1 THEN 0 WHEN 2 THEN 1 WHEN 3 THEN -300 WHEN 4 THEN 70000 WHEN 5 THEN 1099511627776 ELSE -4611686018427387904 END,
  i * 0.5, zeroblob(i % 5), 'col-' || (i % 300) FROM k;
CREATE TABLE collections (id TEXT PRIMARY KEY, name TEXT);
INSERT INTO collections SELECT DISTINCT collection, 'name' FROM segments;`,
    );
    const t = readSqliteTables(file, ["segments", "collections"]);
    const seg = t.segments ?? [];
    expect(seg).toHaveLength(rows);
    const ints = [null, 0, 1, -300, 70000, 1099511627776, -4611686018427387904n];
    const got = seg.map((r) => [r.id, r.type, r.n, r.f, (r.b as Uint8Array).length, r.collection]);
    const want = Array.from({ length: rows }, (_, i) => [
      `seg-${i}`,
      i % 97 === 0 ? "x".repeat(5000) : "vector",
      ints[i % 7],
      i * 0.5,
      i % 5,
      `col-${i % 300}`,
    ]);
    expect(got).toEqual(want);
    expect(t.collections).toHaveLength(300);
    expect(() => readSqliteTables(file, ["nope"])).toThrow(/no table nope/);
  });

  it("liveSegments: segment and collection ids of a Chroma-shaped database; refuses WAL mode and a collection without segments", async () => {
    const dir = await tmp();
    const file = path.join(dir, "chroma.sqlite3");
    const schema = `CREATE TABLE "collections" (id TEXT PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE "segments" (id TEXT PRIMARY KEY, type TEXT NOT NULL, scope TEXT NOT NULL, collection TEXT REFERENCES collection(id) NOT NULL);
INSERT INTO collections VALUES ('c1', 'one');
INSERT INTO segments VALUES ('AAAAAAAA-0000-4000-8000-000000000001', 'urn:chroma:segment/vector/hnsw-local-persisted', 'VECTOR', 'c1');`;
    sqlite(file, schema);
    const live = liveSegments(dir);
    expect(live).toEqual({ segments: new Set(["aaaaaaaa-0000-4000-8000-000000000001"]), collections: new Set(["c1"]) });
    sqlite(file, "INSERT INTO collections VALUES ('c2', 'two');");
    expect(liveSegments(dir)).toEqual({ error: "collection c2 has no segment row" });
    sqlite(file, "PRAGMA journal_mode = WAL; DELETE FROM collections WHERE id = 'c2';");
    expect(liveSegments(dir)).toEqual({ error: "WAL mode" });
  });
});

describe("what the reader refuses", () => {
  it("a file that is not a sqlite database, or no database at all: nothing is swept", async () => {
    const dir = await tmp();
    await writeFile(path.join(dir, "chroma.sqlite3"), "SQLite format 2\u0000 but not really".padEnd(200, "."));
    expect(liveSegments(dir)).toEqual({ error: "not a sqlite 3 file" });
    const folder = path.join(dir, "aaaaaaaa-0000-4000-8000-000000000001");
    await import("node:fs/promises").then((fs) => fs.mkdir(folder));
    expect(await sweepSegmentFolders(dir)).toEqual({ removed: [], bytes: 0, skipped: "not a sqlite 3 file" });
    await rm(path.join(dir, "chroma.sqlite3"));
    expect((await sweepSegmentFolders(dir)).skipped).toMatch(/ENOENT/);
  });
});
