/**
 * `cases import` reads recordings through the one trace reader of `eval
 * --traces` (src/app/cases-import.ts, src/eval/traces/; docs/recorded-traces.md):
 * the same recording as JSON Lines, a gzipped pretty-printed document or one
 * OTLP document imports the same cases, and those cases join every recorded
 * turn (no turn whose user text differs), also when the user messages are
 * content parts, which the import and the scorer used to read differently.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { importCases } from "../../src/app/cases-import.js";
import { readTraces } from "../../src/eval/traces/read.js";
import { joinTraces } from "../../src/eval/traces/join.js";
import type { EvalCase } from "../../src/kb/types.js";
import { ROOT } from "../helpers/cli.js";

const DIR = path.join(ROOT, "test", "fixtures", "traces");
const jsonl = (file: string) =>
  readFileSync(path.join(DIR, file), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

let tmp: string;
beforeAll(() => {
  tmp = mkdtempSync(path.join(os.tmpdir(), "retrace-import-traces-"));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const write = (name: string, data: string | Buffer) => {
  const file = path.join(tmp, name);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, data);
  return file;
};

/** Every user message of a root run's inputs as content parts: its text, then an image part (not text). */
function asContentParts(run: Record<string, unknown>): Record<string, unknown> {
  if (run.parent_run_id !== null && run.parent_run_id !== undefined) return run;
  const inputs = run.inputs as { messages?: Record<string, unknown>[] };
  const messages = (inputs.messages ?? []).map((m) =>
    (m.role === "user" || m.type === "human") && typeof m.content === "string"
      ? {
          ...m,
          content: [
            { type: "text", text: m.content },
            { type: "image_url", image_url: { url: "data:," } },
          ],
        }
      : m,
  );
  return { ...run, inputs: { ...inputs, messages } };
}

/** Imports `file`, then reads it as eval --traces does and joins the recording to the imported cases. */
async function importThenJoin(file: string) {
  const imported = await importCases(file, { locale: "en" });
  const read = await readTraces(file);
  // The join reads a case's id and its turns' user text, which an imported case carries.
  const join = joinTraces(read.conversations, imported.cases as unknown as EvalCase[]);
  const recordedTurns = read.conversations.reduce((n, c) => n + c.turns.length, 0);
  return { imported, join, recordedTurns };
}

describe("cases import reads through the reader of eval --traces", () => {
  it("LangSmith runs with content-part messages: JSONL and a gzipped pretty array import the same cases, and every recorded turn joins", async () => {
    const runs = jsonl("langsmith.runs.jsonl").map(asContentParts);
    const lines = write("runs.jsonl", runs.map((r) => JSON.stringify(r)).join("\n") + "\n");
    const pretty = write("export/runs.json", gzipSync(JSON.stringify(runs, null, 2)));
    const a = await importThenJoin(lines);
    const b = await importThenJoin(pretty);
    expect(b.imported.text).toBe(a.imported.text);
    expect(a.imported.cases.some((c) => c.turns.length > 1)).toBe(true);
    for (const r of [a, b]) {
      expect(r.join.mismatches).toEqual([]);
      expect(r.join.joined).toHaveLength(r.recordedTurns);
      expect(r.recordedTurns).toBeGreaterThan(4);
    }
  });

  it("an OTLP export as JSON Lines and as one pretty-printed gzipped document: the same cases, every turn joined", async () => {
    const records = jsonl("openinference.otlp.jsonl");
    const spans = records.flatMap((r) => (r.resourceSpans as unknown[]) ?? []);
    const lines = path.join(DIR, "openinference.otlp.jsonl");
    const doc = write("otlp.json", gzipSync(JSON.stringify({ resourceSpans: spans }, null, 2)));
    const a = await importThenJoin(lines);
    const b = await importThenJoin(doc);
    expect(b.imported.text).toBe(a.imported.text);
    for (const r of [a, b]) {
      expect(r.join.mismatches).toEqual([]);
      expect(r.join.joined).toHaveLength(r.recordedTurns);
      expect(r.recordedTurns).toBeGreaterThan(4);
    }
  });

  it("runs.query() v2 runs with only some fields selected (no metadata, no dotted_order, no is_root): the same cases as the listRuns() runs, every turn joined", async () => {
    const runs = jsonl("langsmith.runs.jsonl");
    const byId = new Map(runs.map((r) => [r.id as string, r]));
    const ancestors = (r: Record<string, unknown>): string[] => {
      const p = r.parent_run_id as string | null | undefined;
      return p === undefined || p === null ? [] : [...ancestors(byId.get(p)!), p];
    };
    // selects: ID, RUN_TYPE, START_TIME, END_TIME, INPUTS, OUTPUTS, PARENT_RUN_IDS, TRACE_ID, THREAD_ID.
    const v2 = runs.map((r) => {
      const thread = (r.extra as { metadata: Record<string, unknown> }).metadata.thread_id;
      return {
        id: r.id,
        run_type: String(r.run_type).toUpperCase(),
        start_time: r.start_time,
        end_time: typeof r.end_time === "number" ? new Date(r.end_time).toISOString() : r.end_time,
        inputs: r.inputs,
        outputs: r.outputs,
        parent_run_ids: ancestors(r),
        trace_id: r.trace_id,
        ...(typeof thread === "string" ? { thread_id: thread } : {}),
      };
    });
    const listed = await importThenJoin(path.join(DIR, "langsmith.runs.jsonl"));
    const queried = await importThenJoin(write("v2/runs.jsonl", v2.map((r) => JSON.stringify(r)).join("\n") + "\n"));
    expect(queried.imported.text).toBe(listed.imported.text);
    expect(queried.join.mismatches).toEqual([]);
    expect(queried.join.joined).toHaveLength(queried.recordedTurns);
    expect(queried.recordedTurns).toBe(listed.recordedTurns);
  });
});
