/**
 * Langfuse both ways (issue 52, item 3; docs/recorded-traces.md):
 * - Langfuse trace exports (test/fixtures/traces/langfuse.generated.traces.jsonl,
 *   generated with @langfuse/core's own API types) score with `eval --traces`
 *   — each turn's ids checked against this test's own reading of the raw
 *   file — and import with `cases import` with the real user text; the
 *   `trace.list()` shape with the observations exported beside it reads the
 *   same, and a trace whose listed observation was not exported is
 *   unattached, not a miss;
 * - the documented export, run as written with the real `@langfuse/client`
 *   against a local stand-in of Langfuse's API, writes what retrace reads;
 * - `--out langfuse:FILE` writes score bodies whose type is the SDK's
 *   `ScoreBody` (checked by tsc below), on each scored turn's trace and root
 *   observation, and the documented upload, with the real client against the
 *   stand-in, sends every field of every score; on LangSmith runs it is exit 2.
 */
import { readFileSync } from "node:fs";
import { mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { ScoreBody } from "@langfuse/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LangfuseScore } from "../../src/app/langfuse-scores.js";
import { ROOT, runCli } from "../helpers/cli.js";
import { docBlock } from "../helpers/doc-block.js";
import { runNode, startRecordingStub } from "../helpers/record-stub.js";

// The type check of item 3: a retrace score body is a Langfuse SDK ScoreBody (a compile error otherwise).
const asScoreBody = (s: LangfuseScore): ScoreBody => s;

const DIR = path.join(ROOT, "test", "fixtures", "traces");
const LANGFUSE = path.join(DIR, "langfuse.generated.traces.jsonl");
const base = ["--catalog", path.join(DIR, "catalog.tsv"), "--cases", path.join(DIR, "cases.jsonl"), "-k", "3"];
const TSX = path.join(ROOT, "node_modules", "tsx", "dist", "cli.mjs");

interface RawObservation {
  id: string;
  traceId: string;
  type: string;
  parentObservationId: string | null;
  output?: { metadata: { doc_id: string } }[];
  level: string;
}
interface RawTrace {
  id: string;
  timestamp: string;
  sessionId: string;
  observations: RawObservation[];
}
const rawTraces = (): RawTrace[] =>
  readFileSync(LANGFUSE, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as RawTrace);

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), "retrace-langfuse-"));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

type ReportTurn = { caseId: string; turn: number; retrievedIds: string[] | null; error?: string };
async function evalTurns(
  file: string,
  extra: string[] = [],
): Promise<{ turns: ReportTurn[]; traces: Record<string, unknown> }> {
  const json = path.join(tmp, `report-${path.basename(file)}.json`);
  const r = await runCli([
    "eval",
    "--traces",
    file,
    ...base,
    "--gate",
    "max-errors=1",
    "--out",
    `json:${json}`,
    ...extra,
  ]);
  expect(r.exitCode, r.stderr).toBe(0);
  const report = JSON.parse(await readFile(json, "utf8")) as {
    turns: ReportTurn[];
    run: { graph: { traces: Record<string, unknown> } };
  };
  return { turns: report.turns, traces: report.run.graph.traces };
}

/** The ids the raw file's retriever observations hold per conversation turn (in timestamp order), "error" for a failed one. */
function rawIds(): Map<string, string[] | "error"> {
  const out = new Map<string, string[] | "error">();
  const traces = rawTraces().sort((a, b) =>
    a.sessionId < b.sessionId ? -1 : a.sessionId > b.sessionId ? 1 : a.timestamp < b.timestamp ? -1 : 1,
  );
  const seen = new Map<string, number>();
  for (const t of traces) {
    const n = seen.get(t.sessionId) ?? 0;
    seen.set(t.sessionId, n + 1);
    const r = t.observations.find((o) => o.type === "RETRIEVER")!;
    out.set(`${t.sessionId}#${n}`, r.level === "ERROR" ? "error" : r.output!.map((d) => d.metadata.doc_id).slice(0, 3));
  }
  return out;
}

describe("reading Langfuse exports", () => {
  it("eval --traces scores each trace's retriever observation, joined by the trace's input", async () => {
    const { turns, traces } = await evalTurns(LANGFUSE);
    expect(traces.format).toBe("langfuse");
    expect(traces.mismatches).toBe(0);
    const want = rawIds();
    expect(turns).toHaveLength(want.size);
    for (const t of turns) {
      const w = want.get(`${t.caseId}#${t.turn}`);
      if (w === "error") expect(t.error).toMatch(/KeywordRetriever .* failed: the keyword index is unavailable/);
      else expect(t.retrievedIds).toEqual(w);
    }
  });

  it("the header names the recording as Langfuse and counts its traces and observations (not 'LangSmith runs')", async () => {
    const r = await runCli(["eval", "--traces", LANGFUSE, ...base, "--gate", "max-errors=1", "--verbose"]);
    expect(r.exitCode, r.stderr).toBe(0);
    const records = rawTraces().reduce((n, t) => n + 1 + t.observations.length, 0);
    expect(r.stdout).toContain(`recorded traces (Langfuse): 1 file, ${records} traces and observations,`);
    expect(r.stdout).not.toContain("LangSmith");
  });

  it("the trace.list() shape with the observations exported beside it reads the same; a lost observation makes its turn unattached", async () => {
    const lines: string[] = [];
    for (const t of rawTraces()) {
      lines.push(JSON.stringify({ ...t, observations: t.observations.map((o) => o.id) }));
      for (const o of t.observations) lines.push(JSON.stringify(o));
    }
    const split = path.join(tmp, "list.jsonl");
    await writeFile(split, lines.join("\n") + "\n");
    const whole = await evalTurns(LANGFUSE);
    const listed = await evalTurns(split);
    expect(listed.turns.map((t) => [t.caseId, t.turn, t.retrievedIds])).toEqual(
      whole.turns.map((t) => [t.caseId, t.turn, t.retrievedIds]),
    );
    // Drop conv-freeze#0's retriever observation from the export.
    const first = rawTraces().find((t) => t.sessionId === "conv-freeze")!;
    const lost = first.observations.find((o) => o.type === "RETRIEVER")!.id;
    const cut = path.join(tmp, "cut.jsonl");
    await writeFile(cut, lines.filter((l) => (JSON.parse(l) as { id: string }).id !== lost).join("\n") + "\n");
    const r = await evalTurns(cut);
    expect(r.traces.unattachedTurns).toBe(1);
    expect(r.turns.some((t) => t.caseId === "conv-freeze" && t.turn === 0)).toBe(false);
  });

  it("cases import makes the cases with the recorded user text", async () => {
    const out = path.join(tmp, "cases.jsonl");
    const r = await runCli(["cases", "import", LANGFUSE, "--locale", "en", "--out", out]);
    expect(r.exitCode, r.stderr).toBe(0);
    const got = new Map(
      (await readFile(out, "utf8"))
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { id: string; turns: { user: string }[] })
        .map((c) => [c.id, c.turns.map((t) => t.user)]),
    );
    const want = new Map(
      readFileSync(path.join(DIR, "cases.jsonl"), "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { id: string; turns: { user: string }[] })
        .map((c) => [c.id, c.turns.map((t) => t.user)]),
    );
    expect(got).toEqual(want);
  });

  it("the documented export, run with the real @langfuse/client against a stand-in of the API, writes what is read", async () => {
    const traces = rawTraces();
    const stub = await startRecordingStub((r) => {
      if (r.method === "GET" && r.path === "/api/public/traces")
        return {
          status: 200,
          body: {
            data: traces.map((t) => ({ ...t, observations: t.observations.map((o) => o.id) })),
            meta: { page: 1, limit: 100, totalItems: traces.length, totalPages: 1 },
          },
        };
      const m = /^\/api\/public\/traces\/([0-9a-f]+)$/.exec(r.path);
      const t = m !== null ? traces.find((x) => x.id === m[1]) : undefined;
      return t !== undefined ? { status: 200, body: t } : { status: 404, body: { message: "stub: not found" } };
    });
    try {
      const dir = await mkdtemp(path.join(tmp, "export-"));
      await symlink(path.join(ROOT, "node_modules"), path.join(dir, "node_modules"), "dir");
      await writeFile(path.join(dir, "export.mts"), docBlock("docs/recorded-traces.md", "// export Langfuse traces"));
      const run = await runNode([TSX, "export.mts"], {
        cwd: dir,
        env: {
          ...process.env,
          LANGFUSE_BASE_URL: stub.url,
          LANGFUSE_PUBLIC_KEY: "pk-lf-test",
          LANGFUSE_SECRET_KEY: "sk-lf-test",
        },
      });
      expect(run.status, run.stderr).toBe(0);
      const written = path.join(dir, "langfuse-traces.jsonl");
      expect(await readFile(written, "utf8")).toBe(readFileSync(LANGFUSE, "utf8"));
    } finally {
      await stub.close();
    }
  }, 90_000);
});

describe("writing Langfuse scores", () => {
  let scores: LangfuseScore[];
  let file: string;
  beforeAll(async () => {
    file = path.join(tmp, "scores.jsonl");
    const r = await runCli([
      "eval",
      "--traces",
      LANGFUSE,
      ...base,
      "--gate",
      "max-errors=1",
      "--out",
      `langfuse:${file}`,
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    scores = (await readFile(file, "utf8"))
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as LangfuseScore);
  }, 60_000);

  it("one score per scored turn and metric, on its trace and root observation", () => {
    expect(scores).toHaveLength(35); // 7 scored turns (the errored one is not) × 5 metrics
    const roots = new Map(
      rawTraces().map((t) => [t.id, t.observations.find((o) => o.parentObservationId === null)!.id]),
    );
    for (const s of scores) {
      expect(roots.get(s.traceId)).toBe(s.observationId);
      expect(asScoreBody(s).name).toMatch(/^retrieval_/);
      expect(s.dataType).toBe(s.name === "retrieval_hit_at_k" ? "BOOLEAN" : "NUMERIC");
      if (s.dataType === "BOOLEAN") expect([0, 1]).toContain(s.value);
    }
    expect(new Set(scores.map((s) => s.id)).size).toBe(35);
  });

  it("the documented upload, with the real @langfuse/client, sends every field of every score", async () => {
    const stub = await startRecordingStub((r) =>
      r.path === "/api/public/ingestion" ? { status: 207, body: { successes: [], errors: [] } } : undefined,
    );
    try {
      const dir = await mkdtemp(path.join(tmp, "upload-"));
      await symlink(path.join(ROOT, "node_modules"), path.join(dir, "node_modules"), "dir");
      await writeFile(
        path.join(dir, "upload.mts"),
        docBlock("docs/recorded-traces.md", "// upload retrace's Langfuse scores"),
      );
      await writeFile(path.join(dir, "scores.jsonl"), readFileSync(file));
      const run = await runNode([TSX, "upload.mts"], {
        cwd: dir,
        env: {
          ...process.env,
          LANGFUSE_BASE_URL: stub.url,
          LANGFUSE_PUBLIC_KEY: "pk-lf-test",
          LANGFUSE_SECRET_KEY: "sk-lf-test",
        },
      });
      expect(run.status, run.stderr).toBe(0);
      const events = stub.requests
        .filter((r) => r.method === "POST" && r.path === "/api/public/ingestion")
        .flatMap((r) => (r.body as { batch: { type: string; body: Record<string, unknown> }[] }).batch);
      expect(events.map((e) => e.type)).toEqual(scores.map(() => "score-create"));
      const byId = new Map(events.map((e) => [e.body.id as string, e.body]));
      for (const s of scores) expect(byId.get(s.id)).toMatchObject(s as unknown as Record<string, unknown>);
    } finally {
      await stub.close();
    }
  }, 90_000);

  it("on LangSmith runs --out langfuse: is exit 2", async () => {
    const out = path.join(tmp, "wrong.jsonl");
    const r = await runCli([
      "eval",
      "--traces",
      path.join(DIR, "langsmith.runs.jsonl"),
      ...base,
      "--gate",
      "max-errors=1",
      "--out",
      `langfuse:${out}`,
    ]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/--out langfuse:/);
  });
});

describe("OTLP as Langfuse ingests it (test/fixtures/traces/langfuse.otlp.jsonl: Langfuse's LangChain handler and span processor)", () => {
  const OTLP = path.join(DIR, "langfuse.otlp.jsonl");
  interface Span {
    traceId: string;
    spanId: string;
    name: string;
    parentSpanId?: string;
    startTimeUnixNano: string;
    attributes: { key: string; value: { stringValue?: string } }[];
  }
  const spans = (): Span[] =>
    readFileSync(OTLP, "utf8")
      .split("\n")
      .filter(Boolean)
      .flatMap((l) =>
        (JSON.parse(l) as { resourceSpans: { scopeSpans: { spans: Span[] }[] }[] }).resourceSpans.flatMap((rs) =>
          rs.scopeSpans.flatMap((ss) => ss.spans),
        ),
      );
  const attr = (s: Span, k: string) => s.attributes.find((a) => a.key === k)?.value.stringValue;

  it("the handler marks no retriever: its runs are read by their plain query input and documents output", () => {
    const all = spans();
    expect(all.some((s) => attr(s, "openinference.span.kind") !== undefined)).toBe(false);
    expect(new Set(all.map((s) => attr(s, "langfuse.observation.type")))).toEqual(new Set(["span"]));
  });

  it("eval --traces scores each turn with the documents the retriever spans hold", async () => {
    const all = spans();
    // This test's own reading: per root, its thread, start, and the doc_ids of the KeywordRetriever span's output.
    const want = new Map<string, string[] | "error">();
    const roots = all
      .filter((s) => s.parentSpanId === undefined)
      .map((r) => ({ r, thread: attr(r, "langfuse.observation.metadata.thread_id")! }))
      .sort((a, b) =>
        a.thread < b.thread
          ? -1
          : a.thread > b.thread
            ? 1
            : BigInt(a.r.startTimeUnixNano) < BigInt(b.r.startTimeUnixNano)
              ? -1
              : 1,
      );
    const seen = new Map<string, number>();
    for (const { r, thread } of roots) {
      const n = seen.get(thread) ?? 0;
      seen.set(thread, n + 1);
      const ret = all.find((s) => s.traceId === r.traceId && s.name === "KeywordRetriever")!;
      const out = attr(ret, "langfuse.observation.output");
      want.set(
        `${thread}#${n}`,
        out === undefined
          ? "error"
          : (JSON.parse(out) as { metadata: { doc_id: string } }[]).map((d) => d.metadata.doc_id).slice(0, 3),
      );
    }
    const { turns, traces } = await evalTurns(OTLP);
    expect(traces.mismatches).toBe(0);
    expect(turns).toHaveLength(want.size);
    for (const t of turns) {
      const w = want.get(`${t.caseId}#${t.turn}`);
      if (w === "error") expect(t.error).toMatch(/KeywordRetriever .* failed: Error: the keyword index is unavailable/);
      else expect(t.retrievedIds).toEqual(w);
    }
  });

  it("--out langfuse: scores attach to the OTel trace and root span ids Langfuse keeps", async () => {
    const out = path.join(tmp, "otlp-scores.jsonl");
    const r = await runCli(["eval", "--traces", OTLP, ...base, "--gate", "max-errors=1", "--out", `langfuse:${out}`]);
    expect(r.exitCode, r.stderr).toBe(0);
    const roots = new Map(
      spans()
        .filter((s) => s.parentSpanId === undefined)
        .map((s) => [s.traceId, s.spanId]),
    );
    const scores = (await readFile(out, "utf8"))
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as LangfuseScore);
    expect(scores).toHaveLength(35);
    for (const s of scores) expect(roots.get(s.traceId)).toBe(s.observationId);
  });
});
