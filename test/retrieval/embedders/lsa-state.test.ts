/**
 * The LSA state file carries its own checksum (issue 22, item 3): a file
 * with flipped bytes, a truncated one, a broken trailer and a format-1 file
 * (no checksum) are refitted to the same bytes and the same embedder id,
 * with one line on stderr; stale states are pruned (item 5).
 */
import { mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { OutputWriteError } from "../../../src/atomic.js";
import {
  LSA_FILE_FORMAT,
  loadOrFitLsa,
  lsaEmbedderId,
  lsaFileBytes,
  pruneLsaStates,
  readLsaFile,
  serializeLsa,
  fitLsa,
  type LsaChunk,
} from "../../../src/retrieval/embedders/lsa.js";
import { deadPid } from "../../helpers/chroma.js";

const SYLLABLES = ["ka", "lo", "mi", "nu", "pe", "ri", "so", "ta", "ve", "zu"];
/** 150 made-up words (three syllables each). */
const WORDS = Array.from(
  { length: 150 },
  (_, i) => `${SYLLABLES[i % 10]}${SYLLABLES[Math.floor(i / 10) % 10]}${SYLLABLES[(i * 3) % 10]}n`,
);
/** 60 chunks of 16 words each, drawn by a fixed rule: a state file of several kB. */
const CORPUS: LsaChunk[] = Array.from({ length: 60 }, (_, i) => ({
  id: `c${String(i).padStart(2, "0")}`,
  locale: "en",
  text: Array.from({ length: 16 }, (_, j) => WORDS[(i * 7 + j * j * 3 + j) % WORDS.length]).join(" "),
}));
const PARAMS = { dimension: 8 };

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});
async function tmp(): Promise<string> {
  const d = await mkdtemp(path.join(os.tmpdir(), "retrace-lsa-state-"));
  dirs.push(d);
  return d;
}

let stderr: string[] = [];
let savedLevel: string | undefined;
beforeEach(() => {
  stderr = [];
  savedLevel = process.env.RETRACE_LOG;
  process.env.RETRACE_LOG = "info";
  vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
    stderr.push(String(chunk));
    return true;
  });
});
afterEach(() => {
  vi.restoreAllMocks();
  if (savedLevel === undefined) delete process.env.RETRACE_LOG;
  else process.env.RETRACE_LOG = savedLevel;
});

/** XOR 0xff into `count` bytes of `file` from `at` (negative: from the end). */
async function flip(file: string, at: number, count: number): Promise<void> {
  const b = await readFile(file);
  const start = at < 0 ? b.length + at : at;
  for (let i = start; i < start + count; i++) b[i] = (b[i] as number) ^ 0xff;
  await writeFile(file, b);
}

describe("LSA state file checksum", () => {
  it("the file is the state bytes plus a sha256 trailer; the id hashes the state bytes only, as before", async () => {
    const dir = await tmp();
    const r = await loadOrFitLsa(CORPUS, { dir, params: PARAMS });
    const state = fitLsa(CORPUS, PARAMS);
    const stateBytes = serializeLsa(state);
    const file = await readFile(r.file as string);
    expect(file.equals(lsaFileBytes(stateBytes, state.chanceShare as number))).toBe(true);
    expect(file.subarray(stateBytes.length, stateBytes.length + 20).toString("latin1")).toBe("\nRETRACE-LSA-CHANCE\n");
    expect(file.readDoubleLE(stateBytes.length + 20)).toBe(state.chanceShare);
    expect(file.subarray(stateBytes.length + 28, file.length - 32).toString("latin1")).toBe(
      `\nRETRACE-LSA-SHA256 ${LSA_FILE_FORMAT}\n`,
    );
    expect(LSA_FILE_FORMAT).toBe(3);
    expect(r.embedder.id).toBe(lsaEmbedderId(stateBytes, r.embedder.dimension));
    const content = readLsaFile(file);
    expect(content.kind).toBe("ok");
    // the loaded state carries the chance share, so a loaded embedder has the same κ as a fresh fit
    const loaded = await loadOrFitLsa(CORPUS, { dir, params: PARAMS });
    expect(loaded.status).toBe("loaded");
    expect(loaded.embedder.structure).toBe(r.embedder.structure);
    expect(loaded.embedder.structure).toBeDefined();
    expect(file.length).toBeGreaterThan(2000);
  });

  it.each([
    ["~100 bytes flipped inside the vectors", (f: string) => flip(f, -32 - 22 - 400, 100), "checksum mismatch"],
    ["bytes flipped in the header", (f: string) => flip(f, 20, 4), "checksum mismatch"],
    ["a flipped checksum", (f: string) => flip(f, -5, 1), "checksum mismatch"],
    ["a broken trailer mark", (f: string) => flip(f, -40, 2), "no checksum trailer"],
    [
      "a truncated file",
      async (f: string) => writeFile(f, (await readFile(f)).subarray(0, 3000)),
      "no checksum trailer",
    ],
  ])("%s: one warning line, refitted to the same bytes and the same embedder id", async (_what, damage, why) => {
    const dir = await tmp();
    const first = await loadOrFitLsa(CORPUS, { dir, params: PARAMS });
    const file = first.file as string;
    const good = await readFile(file);
    await damage(file);
    expect((await readFile(file)).equals(good)).toBe(false);
    stderr = [];
    const again = await loadOrFitLsa(CORPUS, { dir, params: PARAMS });
    expect(again.status).toBe("refitted");
    expect(again.refitReason).toContain(why);
    expect(again.embedder.id).toBe(first.embedder.id);
    expect((await readFile(file)).equals(good)).toBe(true);
    const lines = stderr
      .join("")
      .split("\n")
      .filter((l) => l !== "");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toBe(
      `warning: state file ${file} is corrupt (${why}${why === "no checksum trailer" ? ": truncated or not an LSA state file" : ""}); refitting`,
    );
    // the next load reads the repaired file
    expect((await loadOrFitLsa(CORPUS, { dir, params: PARAMS })).status).toBe("loaded");
  });

  it("a format-1 file (no checksum) is stale: one info line, refitted, same id, rewritten with the trailer", async () => {
    const dir = await tmp();
    const first = await loadOrFitLsa(CORPUS, { dir, params: PARAMS });
    const file = first.file as string;
    const good = await readFile(file);
    await writeFile(file, serializeLsa(fitLsa(CORPUS, PARAMS)));
    expect(readLsaFile(await readFile(file)).kind).toBe("old");
    stderr = [];
    const again = await loadOrFitLsa(CORPUS, { dir, params: PARAMS });
    expect(again.status).toBe("refitted");
    expect(again.refitReason).toBe("no checksum (older format)");
    expect(again.embedder.id).toBe(first.embedder.id);
    expect((await readFile(file)).equals(good)).toBe(true);
    expect(stderr.join("")).toBe(`state file ${file} has no checksum (written by an older retrace); refitting\n`);
  });

  it("a format-2 file (checksum, no chance section) is stale: one info line, refitted, same id, rewritten in format 3", async () => {
    const dir = await tmp();
    const first = await loadOrFitLsa(CORPUS, { dir, params: PARAMS });
    const file = first.file as string;
    const good = await readFile(file);
    const stateBytes = serializeLsa(fitLsa(CORPUS, PARAMS));
    // format 2 as an earlier retrace wrote it: state bytes, "\nRETRACE-LSA-SHA256 2\n", sha256 of the state bytes
    const { createHash } = await import("node:crypto");
    await writeFile(
      file,
      Buffer.concat([
        stateBytes,
        Buffer.from("\nRETRACE-LSA-SHA256 2\n", "latin1"),
        createHash("sha256").update(stateBytes).digest(),
      ]),
    );
    expect(readLsaFile(await readFile(file))).toEqual({ kind: "old", why: "no chance baseline" });
    stderr = [];
    const again = await loadOrFitLsa(CORPUS, { dir, params: PARAMS });
    expect(again.status).toBe("refitted");
    expect(again.refitReason).toBe("no chance baseline (older format)");
    expect(again.embedder.id).toBe(first.embedder.id);
    expect((await readFile(file)).equals(good)).toBe(true);
    expect(stderr.join("")).toBe(
      `state file ${file} has no chance baseline (written by an older retrace); refitting\n`,
    );
  });

  it("a chance share outside [0, 1] under a valid checksum is corrupt, never used", async () => {
    const dir = await tmp();
    const first = await loadOrFitLsa(CORPUS, { dir, params: PARAMS });
    const state = fitLsa(CORPUS, PARAMS);
    await writeFile(first.file as string, lsaFileBytes(serializeLsa(state), 1.5));
    expect(readLsaFile(await readFile(first.file as string))).toEqual({
      kind: "corrupt",
      why: "chance share 1.5 outside [0, 1]",
    });
  });

  it("a state that cannot be saved is exit 3 naming the file (OutputWriteError), not an internal error", async () => {
    const dir = await tmp();
    const notADir = path.join(dir, "file");
    await writeFile(notADir, "x");
    const e = await loadOrFitLsa(CORPUS, { dir: path.join(notADir, "lsa"), params: PARAMS }).catch((x: unknown) => x);
    expect(OutputWriteError.isInstance(e)).toBe(true);
    expect((e as OutputWriteError).exitCode).toBe(3);
    expect((e as Error).message).toMatch(/^could not write .*\/file\/lsa\/lsa-[0-9a-f]{24}\.lsa: /);
  });
});

describe("pruneLsaStates", () => {
  it("removes states no collection uses, corrupt and format-1 files and dead writers' temp files; keeps the rest; reports the bytes", async () => {
    const dir = await tmp();
    const keep = await loadOrFitLsa(CORPUS, { dir, params: PARAMS });
    const unused = await loadOrFitLsa(CORPUS.slice(1), { dir, params: PARAMS });
    const corrupt = await loadOrFitLsa(CORPUS.slice(2), { dir, params: PARAMS });
    await flip(corrupt.file as string, 100, 10);
    const old = path.join(dir, "lsa-0123456789abcdef01234567.lsa");
    await writeFile(old, serializeLsa(fitLsa(CORPUS.slice(3), PARAMS)));
    const deadTmp = `${keep.file}.${await deadPid()}.0badf00d.tmp`;
    const liveTmp = `${keep.file}.${process.pid}.0badf00d.tmp`;
    const other = path.join(dir, "notes.txt");
    for (const f of [deadTmp, liveTmp, other]) await writeFile(f, "partial");
    const sizes = new Map<string, number>();
    for (const f of await readdir(dir)) sizes.set(path.join(dir, f), (await readFile(path.join(dir, f))).length);

    const r = await pruneLsaStates(dir, new Set([keep.embedder.id, "lsa-8-000000000000-v1"]));
    const gone = [unused.file, corrupt.file, old, deadTmp].map(String).sort();
    expect(r.removed).toEqual(gone);
    expect(r.bytes).toBe(gone.reduce((s, f) => s + (sizes.get(f) as number), 0));
    expect((await readdir(dir)).sort()).toEqual(
      [keep.file, liveTmp, other].map((f) => path.basename(f as string)).sort(),
    );
    expect(await pruneLsaStates(path.join(dir, "missing"), new Set())).toEqual({ removed: [], bytes: 0 });
  });
});
