/** The one text loader: strict UTF-8 with offset and line, BOM stripped, CRLF kept, regular files only, a size limit. */
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { firstInvalidUtf8, readTextFile, readTextFileOrThrow } from "../../src/kb/text.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "retrace-text-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const bytes = (...xs: number[]) => Uint8Array.from(xs);

describe("firstInvalidUtf8", () => {
  it("accepts ASCII, 2-, 3- and 4-byte sequences", () => {
    expect(firstInvalidUtf8(new TextEncoder().encode("aé€😀"))).toBe(-1);
  });
  it("finds a latin-1 byte, a truncated sequence, an overlong form and a surrogate", () => {
    expect(firstInvalidUtf8(bytes(0x61, 0xe9, 0x62))).toBe(1); // "aéb" in latin-1
    expect(firstInvalidUtf8(bytes(0x61, 0xe2, 0x82))).toBe(1); // € cut short
    expect(firstInvalidUtf8(bytes(0xc0, 0xaf))).toBe(0); // overlong "/"
    expect(firstInvalidUtf8(bytes(0xed, 0xa0, 0x80))).toBe(0); // U+D800
  });
});

describe("readTextFile", () => {
  it("strips a leading BOM and keeps CRLF for the caller to split", async () => {
    const f = path.join(dir, "bom.jsonl");
    await writeFile(f, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"a":1}\r\n{"b":2}\r\n')]));
    const text = await readTextFileOrThrow(f);
    expect(text.startsWith("{")).toBe(true);
    expect(text.split(/\r?\n/)).toEqual(['{"a":1}', '{"b":2}', ""]);
  });

  it("rejects invalid UTF-8 naming the byte offset and the line", async () => {
    const f = path.join(dir, "latin1.md");
    await writeFile(f, Buffer.concat([Buffer.from("---\nid: x\n"), Buffer.from([0x63, 0x61, 0x66, 0xe9]), Buffer.from("\n")]));
    const r = await readTextFile(f);
    expect(r).toEqual({ issue: { file: f, line: 3, message: "invalid UTF-8 at byte offset 13 (byte 0xe9); save the file as UTF-8" } });
  });

  it("rejects a directory, a symlink to a directory and a file over the limit, naming the path", async () => {
    const d = path.join(dir, "looks-like.md");
    await mkdir(d);
    expect(await readTextFile(d)).toEqual({ issue: { file: d, message: "expected a regular text file, got a directory" } });
    const link = path.join(dir, "link.md");
    await symlink(d, link);
    expect(await readTextFile(link)).toEqual({ issue: { file: link, message: "expected a regular text file, got a directory" } });
    const big = path.join(dir, "big.md");
    await writeFile(big, "x".repeat(2_000));
    expect(await readTextFile(big, { maxBytes: 1_000, limitOption: "--max-card-bytes" })).toEqual({
      issue: { file: big, message: "the file is 2000 bytes, over the limit of 1000 bytes; raise the limit with --max-card-bytes" },
    });
    await expect(readTextFileOrThrow(big, { maxBytes: 1_000 })).rejects.toMatchObject({ exitCode: 2 });
  });
});

describe("the KB and case loaders use it", () => {
  it("latin-1 card → exit 2 naming file, line and offset; BOM on cases.jsonl accepted; a directory named *.md → exit 2", async () => {
    const { copyKb, MINI_KB } = await import("../helpers/fixtures.js");
    const { loadKnowledgeBase } = await import("../../src/kb/cards.js");
    const { loadCases } = await import("../../src/kb/cases.js");
    const kb = await copyKb(MINI_KB);
    try {
      const casesFile = path.join(kb.dir, "eval", "cases.jsonl");
      const { readFile } = await import("node:fs/promises");
      await writeFile(casesFile, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), await readFile(casesFile)]));
      const loaded = await loadKnowledgeBase(kb.dir);
      expect((await loadCases(casesFile, loaded)).length).toBeGreaterThan(0);

      const card = path.join(kb.dir, "cards", "en", "card-freeze.md");
      await writeFile(card, Buffer.concat([await readFile(card), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a])]));
      await mkdir(path.join(kb.dir, "cards", "en", "folder.md"));
      const err = await loadKnowledgeBase(kb.dir).catch((e: unknown) => e);
      expect(err).toMatchObject({ exitCode: 2 });
      expect(String((err as Error).message)).toMatch(new RegExp(`${card.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}:\\d+: invalid UTF-8 at byte offset \\d+`));
      expect(String((err as Error).message)).toContain(`${path.join(kb.dir, "cards", "en", "folder.md")}: expected a regular text file, got a directory`);
      await expect(loadKnowledgeBase(kb.dir, { maxCardBytes: 10 })).rejects.toThrow(/over the limit of 10 bytes/);
    } finally {
      await kb.cleanup();
    }
  });
});
