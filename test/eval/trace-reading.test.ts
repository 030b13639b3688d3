/**
 * The one reader of recorded traces (src/eval/traces/records.ts, read.ts;
 * docs/recorded-traces.md, "Files and formats" and "Bad recordings"), on
 * the recordings the real clients made (test/fixtures/traces/):
 * - the same recording as JSON Lines, a pretty-printed JSON document (a
 *   LangSmith array, one OTLP export document), one line, gzip (recognised
 *   by content, whatever the name), a `.gz` in a folder: the same turns,
 *   calls and documents;
 * - a malformed document names file, line and column and what was expected;
 * - parent cycles, self-parents and runaway depth are DataValidationErrors
 *   naming the spans / runs (no endless walk);
 * - LangSmith parents from `parent_run_ids` (runs.query() v2 Run objects) or
 *   `dotted_order` when `parent_run_id` is missing; with no link at all, the
 *   turns are unattached: listed, never joined (so never scored as misses);
 * - the `services` filter matches what each LangSmith shape carries;
 * - LangGraph's step decides: two calls of one `langgraph_step` started 25 ms
 *   apart are one step, without it the time rule splits them.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { gzipSync } from "node:zlib";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readTraces, type ReadTraces } from "../../src/eval/traces/read.js";
import { joinTraces } from "../../src/eval/traces/join.js";
import { DataValidationError } from "../../src/errors.js";
import { RecordedCapture } from "../../src/eval/sweep/recorded.js";
import { retrievalSteps } from "../../src/eval/sweep/capture.js";
import type { RecordedRun } from "../../src/eval/traces/types.js";
import { ROOT } from "../helpers/cli.js";

const DIR = path.join(ROOT, "test", "fixtures", "traces");
const OTLP = path.join(DIR, "openinference.otlp.jsonl");
const LANGSMITH = path.join(DIR, "langsmith.runs.jsonl");
const jsonl = (file: string) =>
  readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

let tmp: string;
beforeAll(() => {
  tmp = mkdtempSync(path.join(os.tmpdir(), "retrace-trace-reading-"));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const write = (name: string, data: string | Buffer) => {
  const file = path.join(tmp, name);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, data);
  return file;
};

/** What scoring reads of a recording: conversations, turns, calls and their documents (not where they were read). */
function scored(read: ReadTraces) {
  return read.conversations.map((c) => ({
    id: c.id,
    turns: c.turns.map((t) => ({
      root: t.rootId,
      user: t.user,
      runs: t.runs.map((r) => ({
        id: r.runId,
        parent: r.retrieverParentRunId,
        step: r.langgraphStep,
        docs: r.documents?.map((d) => [d.id, d.pageContent, d.metadata]) ?? null,
        error: r.error,
      })),
    })),
  }));
}

/** The DataValidationError a read throws, as one text (its message and issues). */
async function errorOf(file: string): Promise<string> {
  try {
    await readTraces(file);
  } catch (e) {
    expect(e).toBeInstanceOf(DataValidationError);
    return JSON.stringify((e as DataValidationError).issues);
  }
  throw new Error(`${file} was read without an error`);
}

describe("every file shape of one recording reads the same", () => {
  it("LangSmith runs: JSONL, a pretty JSON array, one line, gzip under any name, a .gz in a folder", async () => {
    const runs = jsonl(LANGSMITH);
    const base = scored(await readTraces(LANGSMITH));
    expect(base.flatMap((c) => c.turns).filter((t) => t.runs.length > 0).length).toBeGreaterThan(4); // not vacuous
    const pretty = write("ls/pretty.json", JSON.stringify(runs, null, 2));
    const gz = write("ls/runs.json", gzipSync(JSON.stringify(runs, null, 2))); // gzip, named .json
    const folder = path.join(tmp, "ls-folder");
    write(
      "ls-folder/a.jsonl.gz",
      gzipSync(
        runs
          .slice(0, 20)
          .map((r) => JSON.stringify(r))
          .join("\n"),
      ),
    );
    write(
      "ls-folder/b.jsonl",
      runs
        .slice(20)
        .map((r) => JSON.stringify(r))
        .join("\n"),
    );
    for (const file of [pretty, write("ls/one.json", JSON.stringify(runs)), gz, folder])
      expect(scored(await readTraces(file)), file).toEqual(base);
    // Where a record of a pretty array was read: its line and index.
    const where = (await readTraces(pretty)).conversations[0]!.turns[0]!.where;
    expect(where).toMatch(/pretty\.json:\d+ \[\d+\]$/);
  });

  it("OTLP: one pretty-printed export document (spans streamed one by one), one line, gzip", async () => {
    const records = jsonl(OTLP);
    const doc = { resourceSpans: records.flatMap((r) => r.resourceSpans as unknown[]) };
    const base = scored(await readTraces(OTLP));
    for (const file of [
      write("otlp/pretty.json", JSON.stringify(doc, null, 2)),
      write("otlp/one.json", JSON.stringify(doc)),
      write("otlp/export.bin", gzipSync(JSON.stringify(doc, null, 2))),
      write("otlp/array.json", JSON.stringify(records, null, 1)),
    ])
      expect(scored(await readTraces(file)), file).toEqual(base);
  });

  it("a malformed document names file, line and column and what was expected", async () => {
    const runs = jsonl(LANGSMITH);
    const lines = JSON.stringify(runs, null, 2).split("\n");
    const at = lines.findIndex((l, i) => i > 30 && l.trim().endsWith(","));
    lines[at] = lines[at]!.replace(/,$/, ""); // a comma dropped
    const file = write("bad/pretty.json", lines.join("\n"));
    const issues = JSON.parse(await errorOf(file)) as { file: string; line: number; column: number; message: string }[];
    expect(issues[0]).toMatchObject({ file, line: at + 2 });
    expect(issues[0]!.column).toBeGreaterThan(1);
    expect(issues[0]!.message).toMatch(/expected "," or the closing bracket, got/);
    const cut = write("bad/cut.json", JSON.stringify(runs, null, 2).slice(0, 5000));
    expect(await errorOf(cut)).toMatch(/got the end of the input.*truncated export/);
  });
});

describe("bad parent links are named, not walked forever", () => {
  const otlpSpans = () => {
    const records = jsonl(OTLP);
    return records.flatMap((r) =>
      (r.resourceSpans as { scopeSpans: { spans: Record<string, unknown>[] }[] }[]).flatMap((rs) =>
        rs.scopeSpans.flatMap((ss) => ss.spans),
      ),
    );
  };
  const otlpFile = (name: string, spans: Record<string, unknown>[]) =>
    write(name, spans.map((s) => JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: [s] }] }] })).join("\n"));

  it("OTLP: two spans that are each other's parent, and a span that is its own", async () => {
    const spans = otlpSpans();
    const [a, b] = spans.filter((s) => typeof s.parentSpanId === "string" && s.parentSpanId !== "");
    a!.parentSpanId = b!.spanId;
    b!.parentSpanId = a!.spanId;
    const cycle = await errorOf(otlpFile("cycle/otlp.jsonl", spans));
    expect(cycle).toMatch(/parent cycle/);
    expect(cycle).toContain(String(a!.spanId));
    expect(cycle).toContain(String(b!.spanId));
    const self = otlpSpans();
    const c = self.find((s) => typeof s.parentSpanId === "string" && s.parentSpanId !== "")!;
    c.parentSpanId = c.spanId;
    expect(await errorOf(otlpFile("cycle/self.jsonl", self))).toMatch(
      new RegExp(`span ${String(c.spanId)} names itself as its parent`),
    );
  });

  it("LangSmith: a parent cycle names the runs", async () => {
    const runs = jsonl(LANGSMITH);
    const [a, b] = runs.filter((r) => typeof r.parent_run_id === "string");
    a!.parent_run_id = b!.id;
    b!.parent_run_id = a!.id;
    const text = await errorOf(write("cycle/runs.jsonl", runs.map((r) => JSON.stringify(r)).join("\n")));
    expect(text).toMatch(/are each other's parents \(a parent cycle\)/);
    expect(text).toContain(String(a!.id));
    expect(text).toContain(String(b!.id));
  });

  it("a runaway chain of parents is named by its depth", async () => {
    const spans = Array.from({ length: 10_050 }, (_, i) => ({
      traceId: "t".repeat(32),
      spanId: `s${i}`,
      ...(i > 0 ? { parentSpanId: `s${i - 1}` } : {}),
      name: "n",
      startTimeUnixNano: "1",
      endTimeUnixNano: "2",
    }));
    expect(await errorOf(otlpFile("deep/otlp.jsonl", spans.reverse()))).toMatch(
      /more than 10000 levels below its root/,
    );
  });

  it("a runaway chain written from its root down (each walk one level long) is named by its depth too, OTLP and LangSmith", async () => {
    const spans = Array.from({ length: 10_050 }, (_, i) => ({
      traceId: "t".repeat(32),
      spanId: `s${i}`,
      ...(i > 0 ? { parentSpanId: `s${i - 1}` } : {}),
      name: "n",
      startTimeUnixNano: "1",
      endTimeUnixNano: "2",
    }));
    expect(await errorOf(otlpFile("deep/down.jsonl", spans))).toMatch(
      /span s10001 is 10001 levels below its root s0 \(a runaway chain of parents/,
    );
    const runs = Array.from({ length: 10_050 }, (_, i) => ({
      id: `r${i}`,
      run_type: "chain",
      trace_id: "r0",
      parent_run_id: i > 0 ? `r${i - 1}` : null,
      start_time: "2026-01-01T00:00:00Z",
      inputs: {},
    }));
    const file = write("deep/runs.json", JSON.stringify(runs, null, 2));
    expect(await errorOf(file)).toMatch(/run r10001 is 10001 levels below its root r0/);
  });
});

describe("LangSmith shapes of today", () => {
  it("runs exported without parent_run_id keep their place through dotted_order", async () => {
    const runs = jsonl(LANGSMITH).map(({ parent_run_id: _, ...r }) => r);
    expect(
      scored(await readTraces(write("noparent/dotted.jsonl", runs.map((r) => JSON.stringify(r)).join("\n")))),
    ).toEqual(scored(await readTraces(LANGSMITH)));
  });

  it("with no parent link at all, the turns with retriever calls are unattached: listed and never joined", async () => {
    const runs = jsonl(LANGSMITH).map(({ parent_run_id: _, dotted_order: __, ...r }) => r);
    const read = await readTraces(write("noparent/none.jsonl", runs.map((r) => JSON.stringify(r)).join("\n")));
    const retrieverTraces = new Set(
      jsonl(LANGSMITH)
        .filter((r) => r.run_type === "retriever")
        .map((r) => r.trace_id),
    );
    expect(read.unattached.turns).toBe(retrieverTraces.size);
    expect(read.unattached.calls).toBe(jsonl(LANGSMITH).filter((r) => r.run_type === "retriever").length);
    expect(read.unattached.examples[0]).toMatch(/with no parent link/);
    const turns = read.conversations.flatMap((c) => c.turns);
    expect(turns.every((t) => t.runs.length === 0)).toBe(true);
    // Joined to cases made of every recorded turn: the unattached ones are not joined (not scored), the others are.
    const cases = read.conversations.map((c) => ({
      id: c.id,
      locale: "en",
      kind: "golden",
      turns: c.turns.map((t) => ({ user: t.user, must_cite_one_of: ["x"] })),
    }));
    const join = joinTraces(read.conversations, cases as never);
    expect(join.joined.length).toBe(turns.length - read.unattached.turns);
    expect(join.joined.every((j) => (j.recorded.unattachedCalls ?? 0) === 0)).toBe(true);
  });

  it("runs.query() v2 Run objects (parent_run_ids, project_id, top-level thread_id and metadata, RUN_TYPE) read as listRuns() runs", async () => {
    const runs = jsonl(LANGSMITH);
    const byId = new Map(runs.map((r) => [r.id as string, r]));
    const ancestors = (r: Record<string, unknown>): string[] => {
      const p = r.parent_run_id as string | undefined;
      return p === undefined || p === null ? [] : [...ancestors(byId.get(p)!), p];
    };
    const v2 = runs.map((r) => {
      const meta = (r.extra as { metadata: Record<string, unknown> }).metadata;
      return {
        id: r.id,
        name: r.name,
        run_type: String(r.run_type).toUpperCase(),
        status: r.error ? "ERROR" : "SUCCESS",
        start_time: r.start_time,
        end_time: typeof r.end_time === "number" ? new Date(r.end_time).toISOString() : r.end_time,
        inputs: r.inputs,
        outputs: r.outputs,
        ...(r.error ? { error: r.error } : {}),
        parent_run_ids: ancestors(r),
        project_id: "5d3a2b1c-0000-4000-8000-000000000001",
        trace_id: r.trace_id,
        ...(typeof meta.thread_id === "string" ? { thread_id: meta.thread_id } : {}),
        metadata: meta,
      };
    });
    const file = write("v2/runs.json", JSON.stringify(v2, null, 2));
    const strip = (x: ReturnType<typeof scored>) =>
      x.map((c) => ({
        ...c,
        turns: c.turns.map((t) => ({ ...t, runs: t.runs.map((r) => ({ ...r, error: r.error !== null })) })),
      }));
    expect(strip(scored(await readTraces(file)))).toEqual(strip(scored(await readTraces(LANGSMITH))));
    // The services filter matches the project each shape carries: v2 project_id, listRuns() session_id.
    const v2read = await readTraces(file, { filters: { services: ["5d3a2b1c-0000-4000-8000-000000000001"] } });
    expect(v2read.filteredOut).toBe(0);
    const sessionId = runs[0]!.session_id as string;
    const listed = runs.map(({ session_name: _, ...r }) => r);
    const lsFile = write("v2/listruns.jsonl", listed.map((r) => JSON.stringify(r)).join("\n"));
    const byId2 = await readTraces(lsFile, { filters: { services: [sessionId] } });
    expect(byId2.filteredOut).toBe(0);
    expect(byId2.conversations.length).toBeGreaterThan(0);
  });
});

describe("OTLP retriever spans without their parent link", () => {
  it("a RETRIEVER span without parentSpanId beside its trace's root is no turn: the root is unattached, not scored", async () => {
    const records = jsonl(OTLP);
    const spans = records.flatMap((r) =>
      (r.resourceSpans as { scopeSpans: { spans: Record<string, unknown>[] }[] }[]).flatMap((rs) =>
        rs.scopeSpans.flatMap((ss) => ss.spans),
      ),
    );
    const kind = (s: Record<string, unknown>) =>
      (s.attributes as { key: string; value: { stringValue?: string } }[]).find(
        (a) => a.key === "openinference.span.kind",
      )?.value.stringValue;
    const retriever = spans.find((s) => kind(s) === "RETRIEVER")!;
    delete retriever.parentSpanId;
    const file = write("otlp-noparent/spans.jsonl", JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans }] }] }));
    const read = await readTraces(file);
    const turns = read.conversations.flatMap((c) => c.turns);
    expect(turns.map((t) => t.rootId)).not.toContain(retriever.spanId);
    expect(turns.length).toBe(scored(await readTraces(OTLP)).flatMap((c) => c.turns).length);
    expect(read.unattached).toMatchObject({ turns: 1, calls: 1 });
    const unattached = turns.find((t) => (t.unattachedCalls ?? 0) > 0)!;
    expect(unattached.traceId).toBe(retriever.traceId);
  });
});

describe("LangGraph's own step decides what a step is", () => {
  const run = (id: string, startMs: number, step?: number): RecordedRun => ({
    runId: id,
    parentRunId: "root",
    retrieverParentRunId: null,
    name: id,
    tags: [],
    query: "q",
    startUs: startMs * 1000,
    endUs: (startMs + 20) * 1000,
    ...(step !== undefined ? { langgraphStep: step } : {}),
    documents: [],
    error: null,
  });
  it("two calls of one langgraph_step started 25 ms apart are one step; without the step, two", () => {
    const stepped = retrievalSteps(new RecordedCapture([run("a", 0, 3), run("b", 25, 3)]).topLevel());
    expect(stepped.map((s) => s.map((r) => r.runId))).toEqual([["a", "b"]]);
    const timed = retrievalSteps(new RecordedCapture([run("a", 0), run("b", 25)]).topLevel());
    expect(timed.map((s) => s.map((r) => r.runId))).toEqual([["a"], ["b"]]);
    // Two steps that overlap in time stay two steps.
    const two = retrievalSteps(new RecordedCapture([run("a", 0, 3), run("b", 5, 4)]).topLevel());
    expect(two.map((s) => s.map((r) => r.runId))).toEqual([["a"], ["b"]]);
  });
  it("calls of one checkpoint namespace (one task) are one step", () => {
    const ns = (r: RecordedRun): RecordedRun => ({ ...r, langgraphNamespace: "retrieve:1" });
    const steps = retrievalSteps(new RecordedCapture([ns(run("a", 0)), ns(run("b", 25))]).topLevel());
    expect(steps.map((s) => s.map((r) => r.runId))).toEqual([["a", "b"]]);
  });
});
