/**
 * A local Chroma data dir against real servers (issue 22, items 3 and 5): a
 * truncated chroma.sqlite3 fails the start with exit 3 whose first line is
 * the cause; segment folders of deleted collections (a plain delete, an
 * interrupted ingest's staging collection) are removed, live ones never.
 */
import { mkdir, readFile, readdir, stat, truncate, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ServiceUnavailableError } from "../../src/errors.js";
import { COLLECTION_PREFIX, stagingCollectionName } from "../../src/retrieval/chroma-store.js";
import { liveSegments, sweepSegmentFolders, treeBytes } from "../../src/retrieval/chroma-segments.js";
import { connectChroma, openStore, startLocalChroma } from "../../src/retrieval/chroma-server.js";
import type { ChromaClientLike } from "../../src/retrieval/chroma-types.js";
import { START_LOG_FILE } from "../../src/retrieval/chroma-process.js";
import { ingest } from "../../src/retrieval/ingest.js";
import { chromaPids, chunk, deadPid, TableEmbedderFake, tempDir } from "../helpers/chroma.js";

let tmp: { dir: string; cleanup: () => Promise<void> };
beforeAll(async () => {
  tmp = await tempDir("data-dir");
});
afterAll(async () => {
  const left = chromaPids(tmp.dir);
  await tmp?.cleanup();
  expect(left).toEqual([]); // no Chroma process of this file survives it
});

const DIM = 32;
/** `n` deterministic unit-ish vectors of DIM dimensions. */
function vectors(n: number, seed: number): number[][] {
  return Array.from({ length: n }, (_, i) =>
    Array.from({ length: DIM }, (_, j) => Math.sin((i + 1) * (j + 1) * 0.37 + seed)),
  );
}

async function fill(
  client: ChromaClientLike,
  name: string,
  n: number,
  metadata?: Record<string, string | number | boolean>,
) {
  const c = await client.createCollection({
    name,
    configuration: { hnsw: { space: "cosine" } },
    embeddingFunction: null,
    ...(metadata !== undefined ? { metadata } : {}),
  });
  await c.add({
    ids: Array.from({ length: n }, (_, i) => `${name}-${i}`),
    embeddings: vectors(n, name.length),
    documents: Array.from({ length: n }, (_, i) => `doc ${i}`),
  });
  return c;
}

/** UUID-named folders of a data dir. */
async function segmentFolders(dataDir: string): Promise<string[]> {
  return (await readdir(dataDir, { withFileTypes: true }))
    .filter((e) => e.isDirectory() && /^[0-9a-f-]{36}$/.test(e.name))
    .map((e) => e.name)
    .sort();
}

describe("a truncated chroma.sqlite3", () => {
  it("fails the start with exit 3 whose first line names the cause, then where the full log is; no server is left", async () => {
    const dataDir = path.join(tmp.dir, "truncated");
    const server = await startLocalChroma({ dataDir });
    await fill(await connectChroma({ url: server.url }), "some-collection", 200);
    await server.stop();
    const db = path.join(dataDir, "chroma.sqlite3");
    await truncate(db, Math.floor((await stat(db)).size / 2));

    const e = await startLocalChroma({ dataDir }).then(
      () => undefined,
      (x: unknown) => x,
    );
    expect(e).toBeInstanceOf(ServiceUnavailableError);
    const err = e as ServiceUnavailableError;
    expect(err.exitCode).toBe(3);
    const lines = err.message.split("\n");
    expect(lines[0]).toMatch(
      new RegExp(
        `^Could not start a local Chroma server \\(data dir ${dataDir}\\): database disk image is malformed; the server exited during startup`,
      ),
    );
    expect(lines[1]).toMatch(/^Server said: .*SqliteError \{ code: 11, message: "database disk image is malformed" \}/);
    const logFile = path.join(dataDir, START_LOG_FILE);
    expect(lines[2]).toBe(`Full server output: ${logFile}`);
    expect(lines[3]).toContain(`What to do: the Chroma database ${db} is damaged`);
    expect(lines).toHaveLength(4); // no backtrace in the message…
    expect(await readFile(logFile, "utf8")).toMatch(/stack backtrace:[\s\S]*panicking/); // …it is in the log
    expect(chromaPids(dataDir)).toEqual([]);
  });
});

describe("segment folders of deleted collections", () => {
  it("Chroma leaves a deleted collection's folder; the sweep removes exactly it, and the live collection still answers", async () => {
    const dataDir = path.join(tmp.dir, "sweep");
    const server = await startLocalChroma({ dataDir });
    try {
      const client = await connectChroma({ url: server.url });
      const before = await segmentFolders(dataDir);
      const keep = await fill(client, "keep-me", 300);
      const afterKeep = await segmentFolders(dataDir);
      await fill(client, "drop-me", 300);
      const all = await segmentFolders(dataDir);
      expect(all).toHaveLength(before.length + 2);
      const dropFolder = all.find((f) => !afterKeep.includes(f)) as string;
      const keepFolder = afterKeep.find((f) => !before.includes(f)) as string;
      const live = liveSegments(dataDir);
      expect("error" in live).toBe(false);
      if (!("error" in live)) {
        expect(live.segments.has(keepFolder) && live.segments.has(dropFolder)).toBe(true);
        expect(live.collections.has(keep.id)).toBe(true);
      }
      // a UUID-named folder that is not a segment's (a foreign file in it) is never touched
      const foreign = path.join(dataDir, "0badf00d-0000-4000-8000-000000000000");
      await mkdir(foreign);
      await writeFile(path.join(foreign, "notes.txt"), "mine");

      const dropBytes = await treeBytes(path.join(dataDir, dropFolder));
      expect(dropBytes).toBeGreaterThan(0);
      await client.deleteCollection({ name: "drop-me" });
      expect(await segmentFolders(dataDir)).toContain(dropFolder); // chroma-core/chroma#5259: the server keeps it

      // a write in progress (a hot journal) stops the sweep
      await writeFile(path.join(dataDir, "chroma.sqlite3-journal"), "x");
      expect((await sweepSegmentFolders(dataDir)).skipped).toMatch(/journal exists/);
      await writeFile(path.join(dataDir, "chroma.sqlite3-journal"), "");

      const swept = await sweepSegmentFolders(dataDir);
      expect(swept).toEqual({ removed: [path.join(dataDir, dropFolder)], bytes: dropBytes });
      expect(await segmentFolders(dataDir)).toEqual([...before, keepFolder, path.basename(foreign)].sort());
      expect(await keep.count()).toBe(300);
      const q = await keep.query({ queryEmbeddings: vectors(1, "keep-me".length), nResults: 3 });
      expect(q.ids[0]?.[0]).toBe("keep-me-0");
      expect(await sweepSegmentFolders(dataDir)).toEqual({ removed: [], bytes: 0 });
    } finally {
      await server.stop();
    }
  });

  it("an interrupted ingest's staging collection: the next ingest deletes it and closing the store removes its folder", async () => {
    const dataDir = path.join(tmp.dir, "staging");
    const KB = "b".repeat(64);
    const table: Record<string, number[]> = {};
    const chunks = Array.from({ length: 50 }, (_, i) => {
      const text = `chunk text ${i}`;
      table[text] = vectors(1, i)[0] as number[];
      return chunk(`c${i}#0`, "en", text);
    });
    const embedder = new TableEmbedderFake("fake-table", DIM, table);
    let store = await openStore({ dataDir });
    const before = await segmentFolders(dataDir);
    // What a killed ingest leaves: a half-filled staging collection whose owner is gone.
    const name = `${COLLECTION_PREFIX}${KB.slice(0, 12)}-fake-table-d${DIM}`;
    await fill(store.client, stagingCollectionName(name), 300, {
      retrace: 1,
      kbHash: KB,
      chunksHash: "h",
      embedder: embedder.id,
      dimension: DIM,
      chunks: 50,
      complete: false,
      startedAt: Date.now(),
      target: name,
      owner: `${os.hostname()}:${await deadPid()}`,
    });
    const staged = (await segmentFolders(dataDir)).filter((f) => !before.includes(f));
    expect(staged).toHaveLength(1);
    await store.close();
    expect(await segmentFolders(dataDir)).toContain(staged[0]); // still a live (stale) collection: kept

    store = await openStore({ dataDir });
    try {
      const r = await ingest({ client: store.client, chunks, embedder, kbHash: KB });
      expect(r.removedStaging).toHaveLength(1);
    } finally {
      await store.close();
    }
    const after = await segmentFolders(dataDir);
    expect(after).not.toContain(staged[0]);
    expect(after).toHaveLength(before.length + 1); // the new collection's folder only
    expect(chromaPids(dataDir)).toEqual([]);
  });
});
