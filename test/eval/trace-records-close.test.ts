/**
 * src/eval/traces/records.ts `forEachRecord` lets its file go however the
 * read ends: at the end, on a malformed line, or when the caller's
 * `onRecord` throws to stop early (src/eval/traces/first-format.ts stops at
 * the first record that way). Before, a stopped read left the file's
 * descriptor open until the process ended. Counted through /proc/self/fd
 * (Linux, the machines retrace runs on).
 */
import { readdirSync, readlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { forEachRecord } from "../../src/eval/traces/records.js";
import { firstRecordFormat } from "../../src/eval/traces/first-format.js";
import { tempDir } from "../helpers/chroma.js";

/** How many of this process's descriptors are open on `file`. */
function openOn(file: string): number {
  let n = 0;
  for (const fd of readdirSync("/proc/self/fd")) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`) === file) n++;
    } catch {
      // closed while listed
    }
  }
  return n;
}

/** Lets the event loop run, so that a destroyed stream's close reaches the descriptor. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

const span = (i: number) => ({
  resourceSpans: [
    {
      scopeSpans: [{ spans: [{ traceId: `t${i}`, spanId: `s${i}`, name: "retrieve", startTimeUnixNano: "1" }] }],
    },
  ],
});

let dir: string;
let cleanup: () => Promise<void>;
const files: Record<string, string> = {};

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir("records-close"));
  // Enough lines that a read stopped at the first record is far from the end (more than one 1 MiB chunk).
  const lines = Array.from({ length: 20_000 }, (_, i) => JSON.stringify(span(i)));
  files.lines = path.join(dir, "spans.jsonl");
  writeFileSync(files.lines, lines.join("\n") + "\n");
  files.gzip = path.join(dir, "spans.bin");
  writeFileSync(files.gzip, gzipSync(lines.join("\n") + "\n"));
  files.document = path.join(dir, "spans.json");
  writeFileSync(
    files.document,
    JSON.stringify(
      lines.map((l) => JSON.parse(l) as unknown),
      null,
      2,
    ),
  );
  files.malformed = path.join(dir, "malformed.jsonl");
  writeFileSync(files.malformed, [...lines.slice(0, 10), "{ not json", ...lines].join("\n") + "\n");
});

afterAll(async () => cleanup());

describe("forEachRecord lets its file go", () => {
  for (const kind of ["lines", "gzip", "document"] as const)
    it(`when onRecord throws at the first record (${kind})`, async () => {
      const file = files[kind]!;
      let seen = 0;
      await expect(
        forEachRecord(file, () => {
          seen++;
          throw new Error("stop");
        }),
      ).rejects.toThrow();
      expect(seen).toBe(1);
      await settle();
      expect(openOn(file)).toBe(0);
    });

  it("on a malformed line, and at the end of a whole read", async () => {
    await expect(forEachRecord(files.malformed!, () => {})).rejects.toThrow(/malformed\.jsonl/);
    let n = 0;
    await forEachRecord(files.lines!, () => void n++);
    expect(n).toBe(20_000);
    await settle();
    expect(openOn(files.malformed!)).toBe(0);
    expect(openOn(files.lines!)).toBe(0);
  });

  it("after the write-back check has read the first record's format", async () => {
    expect(await firstRecordFormat(files.lines!)).toBe("otlp");
    await settle();
    expect(openOn(files.lines!)).toBe(0);
  });
});
