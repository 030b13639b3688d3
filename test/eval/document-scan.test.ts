/**
 * The fast path of reading one JSON document (src/eval/traces/document-scan.ts):
 * each record's bounds found by a byte scanner, each record parsed whole. Its
 * records are checked against the document parsed in one piece (the
 * independent reading: array elements, or each OTLP span with its resource
 * and scope), whatever the chunking (a chunk of a few bytes cuts keys,
 * strings and escapes); anything it does not read is a ScanFailure, after
 * which the reader (forEachRecord) reads the file again with the token parser
 * and names file, line and column.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ScanFailure, scanDocument, type ScannedRecord } from "../../src/eval/traces/document-scan.js";
import { forEachRecord, type TraceRecord } from "../../src/eval/traces/records.js";
import { DataValidationError } from "../../src/errors.js";
import { ROOT } from "../helpers/cli.js";

const DIR = path.join(ROOT, "test", "fixtures", "traces");
const jsonl = (file: string) =>
  readFileSync(path.join(DIR, file), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

let tmp: string;
beforeAll(() => {
  tmp = mkdtempSync(path.join(os.tmpdir(), "retrace-scan-"));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

async function* chunked(text: string, size: number): AsyncGenerator<Buffer> {
  const bytes = Buffer.from(text, "utf8");
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

async function scan(text: string, size: number): Promise<unknown[]> {
  const out: ScannedRecord[] = [];
  await scanDocument(chunked(text, size), (r) => out.push(r));
  return out.map((r) => r.value);
}

/** The records of an OTLP export document, read from the whole document: each span with its resource and scope. */
const otlpRecords = (doc: {
  resourceSpans: { resource?: unknown; scopeSpans: { scope?: unknown; spans: unknown[] }[] }[];
}) =>
  doc.resourceSpans.flatMap((rs) =>
    rs.scopeSpans.flatMap((ss) =>
      ss.spans.map((span) => ({
        resourceSpans: [
          {
            ...(rs.resource !== undefined ? { resource: rs.resource } : {}),
            scopeSpans: [{ ...(ss.scope !== undefined ? { scope: ss.scope } : {}), spans: [span] }],
          },
        ],
      })),
    ),
  );

const runs = jsonl("langsmith.runs.jsonl");
const otlp = {
  resourceSpans: jsonl("openinference.otlp.jsonl").flatMap((r) => r.resourceSpans as never[]),
};
// Strings the scanner must walk through: escaped quotes and backslashes, brackets, a unicode escape, non-ASCII text.
const tricky = JSON.parse(
  JSON.stringify([
    {
      id: "a",
      run_type: "chain",
      trace_id: "a",
      inputs: { q: 'say "hi" \\ [then] {go} \\"', e: "\u00e9\u4e2d\ud83d\ude00 \\u0041" },
    },
    { id: "b", run_type: "tool", trace_id: "a", parent_run_id: "a", inputs: { n: [1, 2.5e-3, -0, true, false, null] } },
  ]),
) as Record<string, unknown>[];

describe("scanDocument", () => {
  for (const size of [1, 7, 64, 1 << 20])
    it(`reads the records a whole-document parse gives, in chunks of ${size} bytes`, async () => {
      expect(await scan(JSON.stringify(runs, null, 2), size)).toEqual(runs);
      expect(await scan(JSON.stringify(runs), size)).toEqual(runs);
      expect(await scan(JSON.stringify(tricky, null, 2), size)).toEqual(tricky);
      expect(await scan(JSON.stringify(otlp, null, 2), size)).toEqual(otlpRecords(otlp));
      expect(await scan(JSON.stringify(otlp), size)).toEqual(otlpRecords(otlp));
      // Several documents one after another; a top-level object that is not OTLP is one record.
      const two = `${JSON.stringify(otlp, null, 1)}\n${JSON.stringify(runs[0], null, 2)}\n${JSON.stringify(runs.slice(0, 3))}`;
      expect(await scan(two, size)).toEqual([...otlpRecords(otlp), runs[0], ...runs.slice(0, 3)]);
    });

  it("gives each record the line it starts on and its index in the array", async () => {
    const out: ScannedRecord[] = [];
    await scanDocument(chunked(JSON.stringify(tricky, null, 2), 5), (r) => out.push(r));
    const lines = JSON.stringify(tricky, null, 2).split("\n");
    expect(out.map((r) => [r.index, lines[r.line - 1]])).toEqual([
      [0, "  {"],
      [1, "  {"],
    ]);
  });

  it("stops with ScanFailure on what it does not read", async () => {
    const text = JSON.stringify(runs.slice(0, 2), null, 2);
    for (const bad of [
      text.replace(/},\n {2}{/, "}\n  {"), // a missing comma between elements
      text.replace('"run_type"', '"run_type" "x"'), // inside a record
      text.slice(0, text.length - 20), // cut short
      `${text}]`, // a bracket that closes nothing
      '["a string"]',
    ])
      await expect(scan(bad, 64)).rejects.toBeInstanceOf(ScanFailure);
  });
});

describe("forEachRecord over a document file", () => {
  it("reads a pretty OTLP document and a pretty LangSmith array as their records", async () => {
    const got = async (name: string, text: string) => {
      const file = path.join(tmp, name);
      writeFileSync(file, text);
      const out: TraceRecord[] = [];
      await forEachRecord(file, (r) => out.push(r));
      return out.map((r) => r.value);
    };
    expect(await got("otlp.json", JSON.stringify(otlp, null, 2))).toEqual(otlpRecords(otlp));
    expect(await got("runs.json", JSON.stringify(runs, null, 2))).toEqual(runs);
  });

  it("a malformed record after good ones: the token parser names file, line and column, and the records before it are handed on once", async () => {
    const text = JSON.stringify(runs.slice(0, 4), null, 2);
    const lines = text.split("\n");
    const at = lines.findIndex((l, i) => i > lines.length / 2 && l.includes('"name"'));
    lines[at] = lines[at]!.replace('"name":', '"name"');
    const file = path.join(tmp, "bad.json");
    writeFileSync(file, lines.join("\n"));
    const seen: string[] = [];
    const error = await forEachRecord(file, (r) => seen.push((r.value as { id: string }).id)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DataValidationError);
    const issue = (error as DataValidationError).issues[0]!;
    expect([issue.file, issue.line]).toEqual([file, at + 1]);
    expect(issue.message).toMatch(/malformed JSON \(expected "?:"? after a property name/);
    expect(seen).toEqual([...new Set(seen)]);
  });
});
