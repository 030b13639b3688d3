/**
 * `retrace ingest` end to end: the real bin in a child process, a local
 * Chroma server it starts itself (and must never leave behind: after success,
 * after SIGINT, after a failure), or a remote one through CHROMA_URL.
 */
import path from "node:path";
import type { ChromaClientLike } from "../../src/retrieval/chroma-types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadKnowledgeBase } from "../../src/kb/cards.js";
import { chunkKnowledgeBase } from "../../src/kb/chunk.js";
import { kbHash } from "../../src/kb/hash.js";
import { connectChroma, findFreePort, startLocalChroma, type LocalChroma } from "../../src/retrieval/chroma-server.js";
import { collectionName } from "../../src/retrieval/chroma-store.js";
import { HashingEmbedder } from "../../src/retrieval/embedders/builtin.js";
import { runCli } from "../helpers/cli.js";
import { MINI_KB } from "../helpers/fixtures.js";
import { chromaPids, spawnCli, tempDir, waitFor } from "../helpers/chroma.js";

let server: LocalChroma;
let client: ChromaClientLike;
let tmp: { dir: string; cleanup: () => Promise<void> };
let chunkCount: number;
let expectedCollection: string;

const LOCAL = { CHROMA_URL: "" };

beforeAll(async () => {
  tmp = await tempDir("cli-ingest");
  server = await startLocalChroma({ dataDir: path.join(tmp.dir, "shared") });
  client = await connectChroma({ url: server.url });
  const kb = await loadKnowledgeBase(MINI_KB);
  chunkCount = chunkKnowledgeBase(kb).length;
  expectedCollection = collectionName(kbHash(kb), new HashingEmbedder());
});

afterAll(async () => {
  await server?.stop();
  const leftover = chromaPids(tmp.dir);
  await tmp?.cleanup();
  expect(leftover).toEqual([]); // no Chroma process of this file survives it
});

const ingestArgs = (dataDir: string, ...more: string[]) => [
  "ingest",
  "--kb",
  MINI_KB,
  "--config",
  JSON.stringify({ retrieval: { embedder: "builtin" } }),
  "--data-dir",
  dataDir,
  ...more,
];

describe("retrace ingest with a local store", () => {
  it("starts a local server, ingests, prints one summary line, and leaves no server behind; a rerun is up to date", async () => {
    const dataDir = path.join(tmp.dir, "local");
    const first = await runCli(ingestArgs(dataDir), { env: LOCAL });
    expect(first.stderr).toContain("Starting a local Chroma server");
    expect(first.exitCode).toBe(0);
    const line = new RegExp(
      `^collection ${expectedCollection}: ${chunkCount} chunks, embedder builtin-hashed-ngrams-384-v1 \\(384-d\\), ingested ${chunkCount} chunks in \\d+ ms; timings: built-in embedder, nothing to prepare, store write \\d+\\.\\d\\d s \\(embed \\+ write\\)\\n$`,
    );
    expect(first.stdout).toMatch(line);
    expect(chromaPids(dataDir)).toEqual([]);

    const second = await runCli(ingestArgs(dataDir), { env: LOCAL });
    expect(second.exitCode).toBe(0);
    expect(second.stdout).toMatch(
      new RegExp(
        `^collection ${expectedCollection}: ${chunkCount} chunks, embedder builtin-hashed-ngrams-384-v1 \\(384-d\\), already up to date; timings: built-in embedder, nothing to prepare, store up to date \\(checked in \\d+\\.\\d\\d s\\)\\n$`,
      ),
    );
    // Nothing was written: no "N/N chunks" progress line before "already up to date" (the first run printed them).
    expect(first.stderr).toMatch(new RegExp(`ingest: ${chunkCount}/${chunkCount} chunks`));
    expect(second.stderr).not.toMatch(/ingest: \d+\/\d+ chunks/);
    expect(chromaPids(dataDir)).toEqual([]);
  });

  it("--json prints a versioned object", async () => {
    const dataDir = path.join(tmp.dir, "json");
    const r = await runCli(ingestArgs(dataDir, "--json", "--batch-size", "4"), { env: LOCAL });
    expect(r.exitCode).toBe(0);
    const j = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(j).toMatchObject({
      version: 1,
      status: "ingested",
      collection: expectedCollection,
      chunks: chunkCount,
      dimension: 384,
    });
    // The server this command started is stopped by the time the JSON is read: no URL to reach it by.
    expect(j.store).toEqual({ kind: "local", url: null, state: "stopped", dataDir: path.resolve(dataDir) });
    expect(chromaPids(dataDir)).toEqual([]);
  });

  it("--json reports the LSA fit apart from the store's write in `timings`; a rerun loads the saved state", async () => {
    const dataDir = path.join(tmp.dir, "lsa-timings");
    const args = [
      "ingest",
      "--kb",
      MINI_KB,
      "--config",
      JSON.stringify({ retrieval: { embedder: "lsa" } }),
      "--data-dir",
      dataDir,
      "--json",
    ];
    type Timings = {
      embedder: { kind: string; ms: number; chanceMs?: number };
      store: { status: string; writeMs: number };
    };
    const first = await runCli(args, { env: LOCAL });
    expect(first.exitCode).toBe(0);
    const t1 = (JSON.parse(first.stdout) as { timings: Timings }).timings;
    expect(t1.embedder.kind).toBe("lsa-fit");
    expect(t1.embedder.ms).toBeGreaterThan(0);
    // the chance baseline is part of the fit, timed apart
    expect(t1.embedder.chanceMs).toBeGreaterThan(0);
    expect(t1.embedder.chanceMs).toBeLessThan(t1.embedder.ms);
    expect(t1.store.status).toBe("ingested");
    expect(t1.store.writeMs).toBeGreaterThan(0);
    const second = await runCli(args, { env: LOCAL });
    const t2 = (JSON.parse(second.stdout) as { timings: Timings }).timings;
    expect(t2.embedder.kind).toBe("lsa-load");
    expect(t2.embedder.chanceMs).toBeUndefined();
    expect(t2.store.status).toBe("up-to-date");
    const text = await runCli(args.slice(0, -1), { env: LOCAL });
    expect(text.stdout).toMatch(
      /already up to date; timings: LSA state loaded \d+\.\d\d s, store up to date \(checked in \d+\.\d\d s\)\n$/,
    );
  });

  it("SIGINT once the server is up: exits 130, nothing made current, no server left; the next run ingests", async () => {
    const dataDir = path.join(tmp.dir, "sigint");
    const run = spawnCli(ingestArgs(dataDir, "--batch-size", "1"));
    const started = await waitFor(() => /Chroma server started at/.test(run.stderr()), 20_000);
    expect(started, run.stderr()).toBe(true);
    expect(chromaPids(dataDir)).toHaveLength(1);
    run.child.kill("SIGINT");
    const { code, signal } = await run.exited;
    expect(code === 130 || signal === "SIGINT", `code ${code} signal ${signal}\n${run.stderr()}`).toBe(true);
    expect(run.stdout()).toBe("");
    expect(run.stderr()).toContain("interrupted by SIGINT");
    expect(chromaPids(dataDir)).toEqual([]);

    const again = await runCli(ingestArgs(dataDir, "--json"), { env: LOCAL });
    expect(again.exitCode).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ status: "ingested", removedStaging: [] });
    expect(chromaPids(dataDir)).toEqual([]);
  });

  it("rejects bad options with exit 2 before starting anything", async () => {
    const dataDir = path.join(tmp.dir, "bad");
    const batch = await runCli(ingestArgs(dataDir, "--batch-size", "0"), { env: LOCAL });
    expect(batch.exitCode).toBe(2);
    expect(batch.stderr).toContain('Expected `--batch-size` to be a positive integer, got "0"');
    const store = await runCli(ingestArgs(dataDir, "--store", "ftp://example"), { env: LOCAL });
    expect(store.exitCode).toBe(2);
    expect(store.stderr).toContain("--store");
    expect(chromaPids(dataDir)).toEqual([]);
  });
});

describe("retrace ingest with a remote store", () => {
  it("CHROMA_URL: ingests into that server and leaves it running", async () => {
    const r = await runCli(
      ["ingest", "--kb", MINI_KB, "--config", JSON.stringify({ retrieval: { embedder: "builtin" } }), "--json"],
      {
        env: { CHROMA_URL: server.url },
      },
    );
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      status: "ingested",
      store: { kind: "remote", url: server.url, state: "running" },
    });
    expect(r.stderr).not.toContain("Starting a local Chroma server");
    expect(await client.heartbeat()).toBeGreaterThan(0);
    const col = await client.getCollection({ name: expectedCollection, embeddingFunction: null as never });
    expect(await col.count()).toBe(chunkCount);
  });

  it("--store URL with credentials: --json names the server by its redacted URL, never the password", async () => {
    const withAuth = server.url.replace("http://", "http://someone:pa55word-xyz@");
    const r = await runCli(
      [
        "ingest",
        "--kb",
        MINI_KB,
        "--config",
        JSON.stringify({ retrieval: { embedder: "builtin" } }),
        "--json",
        "--store",
        withAuth,
      ],
      {
        env: { CHROMA_URL: "" },
      },
    );
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(r.stdout).store).toEqual({
      kind: "remote",
      url: server.url.replace("http://", "http://***@").replace(/\/$/, ""),
      state: "running",
    });
    expect(r.stdout + r.stderr).not.toContain("pa55word-xyz");
  });

  it("CHROMA_URL at a dead port → exit 3 and a clear message", async () => {
    const url = `http://127.0.0.1:${await findFreePort()}`;
    const r = await runCli(
      ["ingest", "--kb", MINI_KB, "--config", JSON.stringify({ retrieval: { embedder: "builtin" } })],
      { env: { CHROMA_URL: url } },
    );
    expect(r.exitCode).toBe(3);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(`retrace: Cannot reach Chroma at ${url}`);
    expect(r.stderr).toContain(
      `is a Chroma server listening at ${url}? use --store local or unset CHROMA_URL to let retrace start a local one`,
    );
  });

  it("--store URL at a dead port → exit 3", async () => {
    const url = `http://127.0.0.1:${await findFreePort()}`;
    const r = await runCli(
      ["ingest", "--kb", MINI_KB, "--config", JSON.stringify({ retrieval: { embedder: "builtin" } }), "--store", url],
      { env: LOCAL },
    );
    expect(r.exitCode).toBe(3);
    expect(r.stderr).toContain(`is a Chroma server listening at ${url}?`);
  });
});

describe("retrace ingest failing after its server started", () => {
  // Last in the file: it stops the shared server and reuses its data dir.
  it("exits 2 on a dimension clash and leaves no server behind", async () => {
    // A foreign collection squatting the target name with another dimension.
    await client.deleteCollection({ name: expectedCollection }).catch(() => undefined);
    await client.createCollection({
      name: expectedCollection,
      embeddingFunction: null,
      metadata: {
        retrace: 1,
        kbHash: "f".repeat(64),
        chunksHash: "h",
        embedder: "builtin-hashed-ngrams-384-v1",
        dimension: 12,
        chunks: 1,
        complete: true,
        startedAt: 1,
      },
    });
    await server.stop();
    const r = await runCli(ingestArgs(server.dataDir), { env: LOCAL });
    expect(r.stderr).toContain("Chroma local server ready");
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/Expected embeddings of dimension 12 .* got 384/);
    expect(chromaPids(server.dataDir)).toEqual([]);
  });
});
