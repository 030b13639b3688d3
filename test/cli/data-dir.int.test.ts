/**
 * The data dir through the CLI (issue 22, items 3 and 5; docs/reliability.md):
 * `ingest --prune` gives back the disk space of what it deletes and says how
 * much; a corrupt LSA state is refitted to the same embedder (the collection
 * stays up to date); a truncated chroma.sqlite3 is exit 3 naming the cause.
 */
import { lstat, readdir, readFile, stat, truncate, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromaPids, tempDir } from "../helpers/chroma.js";
import { runCli } from "../helpers/cli.js";
import { MINI_KB } from "../helpers/fixtures.js";

let tmp: { dir: string; cleanup: () => Promise<void> };
beforeAll(async () => {
  tmp = await tempDir("cli-data-dir");
});
afterAll(async () => {
  const left = chromaPids(tmp.dir);
  await tmp?.cleanup();
  expect(left).toEqual([]);
});

const env = { CHROMA_URL: "" };
const ingestCli = (dataDir: string, embedder: string, ...more: string[]) =>
  runCli(
    [
      "ingest",
      "--kb",
      MINI_KB,
      "--config",
      JSON.stringify({ retrieval: { embedder: embedder } }),
      "--data-dir",
      dataDir,
      ...more,
    ],
    { env },
  );

/** Every file under `dir` with its size (paths relative to `dir`). */
async function files(dir: string, rel = ""): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const e of await readdir(path.join(dir, rel), { withFileTypes: true })) {
    const r = path.join(rel, e.name);
    if (e.isDirectory()) for (const [k, v] of await files(dir, r)) out.set(k, v);
    else out.set(r, (await lstat(path.join(dir, r))).size);
  }
  return out;
}
/** Bytes of the files under `dir` except Chroma's database (which never shrinks without VACUUM) and the lock. */
function bytesOutsideDatabase(f: Map<string, number>): number {
  let n = 0;
  for (const [k, v] of f) if (!k.startsWith("chroma.sqlite3") && k !== "retrace.lock") n += v;
  return n;
}
/** Bytes of the files at or under `abs` (a removed path, absolute) as measured in `f`. */
function bytesUnder(f: Map<string, number>, dataDir: string, abs: string): number {
  const rel = path.relative(dataDir, abs);
  let n = 0;
  for (const [k, v] of f) if (k === rel || k.startsWith(`${rel}${path.sep}`)) n += v;
  return n;
}

describe("retrace ingest --prune gives the disk space back", () => {
  it("two embedders ingested, one pruned: its segment folder and LSA state are removed, the bytes reported are the bytes removed", async () => {
    const dataDir = path.join(tmp.dir, "prune");
    const builtin = await ingestCli(dataDir, "builtin", "--json");
    expect(builtin.exitCode, builtin.stderr).toBe(0);
    const onlyBuiltin = await files(dataDir);
    const lsa = await ingestCli(dataDir, "lsa", "--json");
    expect(lsa.exitCode, lsa.stderr).toBe(0);
    const lsaCollection = JSON.parse(lsa.stdout).collection as string;
    const both = await files(dataDir);
    expect(bytesOutsideDatabase(both)).toBeGreaterThan(bytesOutsideDatabase(onlyBuiltin));

    const pruned = await ingestCli(dataDir, "builtin", "--prune", "--json");
    expect(pruned.exitCode, pruned.stderr).toBe(0);
    const p = JSON.parse(pruned.stdout);
    expect(p.removed).toEqual([lsaCollection]);
    expect(p.reclaimed.segmentFolders).toHaveLength(1);
    expect(p.reclaimed.lsaStates).toHaveLength(1);
    expect(p.reclaimed.lsaStates[0]).toMatch(/[/\\]lsa[/\\]lsa-[0-9a-f]{24}\.lsa$/);
    const removed = [...p.reclaimed.segmentFolders, ...p.reclaimed.lsaStates] as string[];
    const measured = removed.reduce((s, r) => s + bytesUnder(both, dataDir, r), 0);
    expect(p.reclaimed.segmentBytes + p.reclaimed.lsaBytes).toBe(p.reclaimed.bytes);
    expect(p.reclaimed.bytes).toBe(measured);
    expect(p.reclaimed.segmentBytes).toBeGreaterThan(100_000);

    const after = await files(dataDir);
    for (const r of removed) expect(bytesUnder(after, dataDir, r)).toBe(0);
    await expect(stat(removed[0] as string)).rejects.toThrow(/ENOENT/);
    // The drop outside the database is exactly what was reported; the data dir is back to the builtin-only size.
    expect(bytesOutsideDatabase(both) - bytesOutsideDatabase(after)).toBe(p.reclaimed.bytes);
    expect(bytesOutsideDatabase(after)).toBe(bytesOutsideDatabase(onlyBuiltin));

    // Text form; nothing left to reclaim.
    const again = await ingestCli(dataDir, "builtin", "--prune");
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.stdout).toMatch(
      /^removed 0 collection\(s\); kept \S+; reclaimed 0\.0 kB \(0 bytes: 0 segment folder\(s\), 0 LSA state\(s\)\)$/m,
    );

    // A pruned LSA state is refitted to the same embedder when used again.
    const back = await ingestCli(dataDir, "lsa", "--json");
    expect(back.exitCode, back.stderr).toBe(0);
    expect(JSON.parse(back.stdout).collection).toBe(lsaCollection);
  }, 300_000);
});

describe("corrupt state in the data dir", () => {
  it("~100 flipped bytes in the LSA state: one line says corrupt and refitting; same embedder, the collection is still up to date", async () => {
    const dataDir = path.join(tmp.dir, "flip");
    const first = await ingestCli(dataDir, "lsa", "--json");
    expect(first.exitCode, first.stderr).toBe(0);
    const lsaDir = path.join(dataDir, "lsa");
    const [name] = (await readdir(lsaDir)).filter((f) => f.endsWith(".lsa"));
    const file = path.join(lsaDir, name as string);
    const good = await readFile(file);
    const bad = Buffer.from(good);
    const at = Math.floor(bad.length * 0.6);
    for (let i = at; i < at + 100; i++) bad[i] = (bad[i] as number) ^ 0x5a;
    await writeFile(file, bad);

    const again = await ingestCli(dataDir, "lsa", "--json");
    expect(again.exitCode, again.stderr).toBe(0);
    const j = JSON.parse(again.stdout);
    expect(j.status).toBe("up-to-date");
    expect(j.collection).toBe(JSON.parse(first.stdout).collection);
    expect(j.embedder).toBe(JSON.parse(first.stdout).embedder);
    const lines = again.stderr.split("\n").filter((l) => l.includes("state file"));
    expect(lines).toEqual([`warning: state file ${file} is corrupt (checksum mismatch); refitting`]);
    expect((await readFile(file)).equals(good)).toBe(true);
  }, 300_000);

  it("a truncated chroma.sqlite3: exit 3, nothing on stdout, the first line names the cause", async () => {
    const dataDir = path.join(tmp.dir, "truncated");
    expect((await ingestCli(dataDir, "builtin")).exitCode).toBe(0);
    const db = path.join(dataDir, "chroma.sqlite3");
    await truncate(db, Math.floor((await stat(db)).size / 2));
    const r = await ingestCli(dataDir, "builtin");
    expect(r.exitCode).toBe(3);
    expect(r.stdout).toBe("");
    const firstError = r.stderr.split("\n").find((l) => l.startsWith("retrace: "));
    expect(firstError).toMatch(
      /^retrace: Could not start a local Chroma server \(data dir .*\): database disk image is malformed; /,
    );
    expect(r.stderr).toContain(`Full server output: ${path.join(path.resolve(dataDir), "retrace-chroma-start.log")}`);
    expect(r.stderr).not.toMatch(/^\s+\d+: /m); // no backtrace frames
    expect(chromaPids(dataDir)).toEqual([]);
  }, 300_000);
});
