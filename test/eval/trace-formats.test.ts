/**
 * The trace format registry (docs/architecture.md §9, "…a trace format"):
 * every format module under src/eval/traces/formats/ is registered once,
 * implements the interface, claims its own records and no other's, and is
 * named by the recipe; and a fourth format, registered by this test alone,
 * is read, labelled, written back (or refused) and imported by the same code
 * that serves the three, no other file touched.
 */
import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { OutFormatModule, ReportSubject } from "../../src/cli/out/subject.js";
import type { TraceFormatModule } from "../../src/eval/traces/formats/format.js";
import {
  detectFormat,
  TRACE_FORMAT_MODULES,
  TRACE_FORMATS,
  traceFormat,
} from "../../src/eval/traces/formats/registry.js";
import { recordFormat } from "../../src/eval/traces/read.js";
import { ROOT } from "../helpers/cli.js";

const DIR = path.join(ROOT, "src", "eval", "traces", "formats");
/** The format modules: every file of the folder but the interface and the registry. */
const moduleFiles = readdirSync(DIR)
  .filter((f) => f.endsWith(".ts") && f !== "format.ts" && f !== "registry.ts")
  .sort();

/** One record of each format, as the real exports write them (fields trimmed to what detection reads). */
const SAMPLES: Record<string, Record<string, unknown>> = {
  otlp: { resourceSpans: [{ resource: { attributes: [] }, scopeSpans: [] }] },
  langsmith: { id: "r1", run_type: "retriever", trace_id: "t1", inputs: {} },
  langfuse: { id: "t1", timestamp: "2026-01-01T00:00:00Z", observations: [] },
};

describe("the trace format registry", () => {
  it("registers every format module, once, each exporting the one format it declares", async () => {
    expect(moduleFiles).toEqual(["langfuse.ts", "langsmith.ts", "otlp.ts"]);
    const exported: unknown[] = [];
    for (const f of moduleFiles) {
      const m = (await import(pathToFileURL(path.join(DIR, f)).href)) as Record<string, unknown>;
      const formats = Object.values(m).filter((v) => typeof v === "object" && v !== null && "detect" in v);
      expect(formats, `${f} exports one format`).toHaveLength(1);
      exported.push(formats[0]);
    }
    for (const x of exported) expect(TRACE_FORMAT_MODULES, "registered in formats/registry.ts").toContain(x);
    expect(TRACE_FORMAT_MODULES).toHaveLength(exported.length);
  });

  it("names the formats --traces-format offers, in the registry's order, each once", () => {
    expect(TRACE_FORMATS).toEqual(["otlp", "langsmith", "langfuse"]);
    expect(new Set(TRACE_FORMATS).size).toBe(TRACE_FORMATS.length);
    for (const f of TRACE_FORMAT_MODULES) {
      expect(traceFormat(f.name)).toBe(f);
      expect(f.label.length, f.name).toBeGreaterThan(0);
      expect(f.expected, f.name).toMatch(/^an? /);
      expect(f.one, f.name).toMatch(/^an? /);
      expect(["turns", "runs"]).toContain(f.casesImport.kind);
      expect(f.report.label.length, f.name).toBeGreaterThan(0);
      expect(f.report.recordsName.length, f.name).toBeGreaterThan(0);
    }
  });

  it("each format claims its own records and no other's; a record of none is no format", () => {
    expect(Object.keys(SAMPLES).sort()).toEqual([...TRACE_FORMATS].sort());
    for (const [name, record] of Object.entries(SAMPLES)) {
      expect(
        TRACE_FORMAT_MODULES.filter((f) => f.detect(record)).map((f) => f.name),
        name,
      ).toEqual([name]);
      expect(detectFormat(record)).toBe(name);
      expect(recordFormat(record)).toBe(name);
    }
    // A Langfuse observation that also carries LangSmith's fields stays Langfuse's (detection as before the registry).
    const both = { id: "o1", traceId: "t1", type: "RETRIEVER", startTime: "x", trace_id: "t1", run_type: "retriever" };
    expect(detectFormat(both)).toBe("langfuse");
    for (const v of [null, [], "x", { id: "a" }]) expect(detectFormat(v)).toBeNull();
  });

  it("the architecture recipe names the registry, the interface and every format module", () => {
    const doc = readFileSync(path.join(ROOT, "docs", "architecture.md"), "utf8");
    const recipe = doc.slice(doc.indexOf("### …a trace format"), doc.indexOf("### …a CLI command"));
    expect(recipe.length).toBeGreaterThan(100);
    expect(recipe).toContain("one module plus one registry line");
    expect(recipe).toContain("src/eval/traces/formats/registry.ts");
    expect(recipe).toContain("src/eval/traces/formats/format.ts");
    for (const f of moduleFiles) expect(recipe).toContain(`src/eval/traces/formats/${f}`);
  });

  it("the format modules stay light: their readers are imported when a recording is opened", () => {
    for (const f of [...moduleFiles, "format.ts", "registry.ts"]) {
      const text = readFileSync(path.join(DIR, f), "utf8");
      const statics = [...text.matchAll(/^import (?!type )[^;]*? from "([^"]+)";/gms)].map((m) => m[1]);
      for (const spec of statics) expect(spec, `${f} imports ${spec} statically`).toMatch(/^\.\/[a-z-]+\.js$/);
    }
  });
});

/**
 * A fourth format, registered here only: OTLP exports wrapped one a record
 * as `{"testSpans": …}`, read by the OTLP reader. Everything below reaches it
 * through the registry (`vi.doMock` adds its one line), so no other file
 * knows it: the report's header words, which write-back files take it, and
 * `cases import`.
 */
const testFormat: TraceFormatModule<"test-spans"> = {
  name: "test-spans",
  label: "Test spans",
  expected: 'a test-spans record ({"testSpans": …})',
  one: "a test-spans record",
  helpName: "test spans",
  helpSource: "test spans (a test's wrapped OTLP)",
  report: { label: "Test spans (wrapped OTLP)", recordsName: "wrapped records" },
  writeBack: { langfuse: "test-spans exports" },
  casesImport: { kind: "turns" },
  detect: (o) => "testSpans" in o,
  async open() {
    const { OtlpReader } = await import("../../src/eval/traces/otlp.js");
    const reader = new OtlpReader();
    return {
      add: (r) => reader.add({ ...r, value: (r.value as { testSpans: unknown }).testSpans }),
      finish: async () => ({
        turns: await reader.turnsInSteps(),
        records: reader.spanCount,
        unattached: reader.unattached,
      }),
    };
  },
};

/**
 * A fifth, of the other `cases import` kind: LangSmith runs wrapped one a
 * record as `{"testRun": …}`, imported beside chat records by LangSmith's own
 * import module (the run unwrapped). `--traces` reads it with LangSmith's reader.
 */
const testRunsFormat: TraceFormatModule<"test-runs"> = {
  name: "test-runs",
  label: "Test runs",
  expected: 'a test run ({"testRun": …})',
  one: "a test run",
  helpName: "test runs",
  helpSource: "test runs (a test's wrapped LangSmith runs)",
  report: { label: "Test runs (wrapped LangSmith)", recordsName: "wrapped runs" },
  writeBack: {},
  casesImport: {
    kind: "runs",
    conversation: "a test run (a LangSmith run in testRun)",
    linkOnly: "test child runs",
    localeField: "testRun.extra.metadata.locale",
    async open() {
      const { langsmithRunsImport } = await import("../../src/eval/traces/langsmith-import.js");
      const inner = langsmithRunsImport();
      return {
        add: (r, where, issues) => inner.add({ ...r, value: (r.value as { testRun: unknown }).testRun }, where, issues),
        finish: (issues, conversationsOf) => inner.finish(issues, conversationsOf),
      };
    },
  },
  detect: (o) => "testRun" in o,
  async open() {
    const { LangSmithReader } = await import("../../src/eval/traces/langsmith.js");
    const reader = new LangSmithReader();
    return {
      add: (r) => reader.add({ ...r, value: (r.value as { testRun: unknown }).testRun }),
      finish: () => Promise.resolve({ turns: reader.turns(), records: reader.runCount, unattached: reader.unattached }),
    };
  },
};

describe("a fourth trace format: one module plus one registry line", () => {
  const FIXTURES = path.join(ROOT, "test", "fixtures", "traces");
  const OTLP = path.join(FIXTURES, "openinference.otlp.jsonl");
  const run = { catalog: path.join(FIXTURES, "catalog.tsv"), cases: path.join(FIXTURES, "cases.jsonl"), k: 3 };
  let tmp: string;
  let wrapped: string;

  beforeAll(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), "retrace-fourth-format-"));
    wrapped = path.join(tmp, "wrapped.jsonl");
    const lines = readFileSync(OTLP, "utf8").split("\n").filter(Boolean);
    await writeFile(wrapped, lines.map((l) => `${JSON.stringify({ testSpans: JSON.parse(l) as unknown })}\n`).join(""));
    vi.resetModules();
    vi.doMock("../../src/eval/traces/formats/registry.js", async (importOriginal) => {
      const real = await importOriginal<typeof import("../../src/eval/traces/formats/registry.js")>();
      const modules: readonly TraceFormatModule<string>[] = [...real.TRACE_FORMAT_MODULES, testFormat, testRunsFormat];
      return { ...real, ...real.formatRegistry(modules) };
    });
  });
  afterAll(async () => {
    vi.doUnmock("../../src/eval/traces/formats/registry.js");
    vi.resetModules();
    await rm(tmp, { recursive: true, force: true });
  });

  /** The eval of `file` in this process (the mocked registry), with the recorded turns the write-back files read. */
  const evalOf = async (file: string) => {
    const { runGraphEval } = await import("../../src/app/sources/registry.js");
    const out = await runGraphEval({ ...run, traces: file });
    return { report: out.report, recorded: out.recorded! };
  };
  const subject = (o: Awaited<ReturnType<typeof evalOf>>): ReportSubject => ({
    kind: "report",
    report: o.report,
    comment: { reference: null, seed: 1, title: "t" },
    recorded: o.recorded,
  });
  const write = async (target: "langsmith" | "langfuse" | "phoenix", s: ReportSubject) => {
    const m: { render: OutFormatModule["render"] } =
      target === "langsmith"
        ? await import("../../src/cli/out/langsmith.js")
        : target === "langfuse"
          ? await import("../../src/cli/out/langfuse.js")
          : await import("../../src/cli/out/phoenix.js");
    return m.render.report!(s, `${target}.out`) as string;
  };

  it("is read by --traces, scored as the OTLP recording it wraps, and the report names it with the module's words", async () => {
    const [fourth, otlp] = [await evalOf(wrapped), await evalOf(OTLP)];
    const t = fourth.report.run.graph!.traces!;
    expect(t).toMatchObject({
      format: "test-spans",
      label: "Test spans (wrapped OTLP)",
      recordsName: "wrapped records",
    });
    expect(otlp.report.run.graph!.traces).toMatchObject({ format: "otlp", label: "OTLP/JSON", recordsName: "spans" });
    expect(t.records).toBe(otlp.report.run.graph!.traces!.records);
    expect(fourth.report.turns.map((x) => x.retrievedIds)).toEqual(otlp.report.turns.map((x) => x.retrievedIds));
    const { graphHeaderLines } = await import("../../src/eval/report/graph-report.js");
    expect(graphHeaderLines(fourth.report).join("\n")).toContain(
      `recorded traces (Test spans (wrapped OTLP)): 1 file, ${t.records} wrapped records, 4 conversations, 8 turns;`,
    );
    // The report's schema takes any format name: the report reads back as written.
    const { parseReport } = await import("../../src/eval/report/schemas.js");
    const json = JSON.parse(JSON.stringify(fourth.report)) as unknown;
    expect(parseReport(json, "r.json")).toBe(json);
  });

  it("the write-back files it declares take it, the others refuse it naming the recordings they take", async () => {
    const [fourth, otlp] = [await evalOf(wrapped), await evalOf(OTLP)];
    // Langfuse scores: the same bodies as for the OTLP spans it wraps (Langfuse keeps OTel's ids).
    const scores = await write("langfuse", subject(fourth));
    expect(scores.split("\n").filter(Boolean).length).toBeGreaterThan(0);
    expect(scores).toBe(await write("langfuse", subject(otlp)));
    await expect(write("langsmith", subject(fourth))).rejects.toThrow(
      'Expected `--out langsmith:` to be LangSmith run exports (feedback attaches to LangSmith runs; for OTLP spans write --out phoenix:FILE), got "test-spans traces"',
    );
    await expect(write("phoenix", subject(fourth))).rejects.toThrow(
      'Expected `--out phoenix:` to be OTLP/JSON traces (Phoenix annotates OpenTelemetry spans; for LangSmith runs write --out langsmith:FILE), got "test-spans traces"',
    );
    // A refusal by a file that takes it names it among the recordings it takes.
    const asLangsmith = {
      ...fourth.report,
      run: {
        ...fourth.report.run,
        graph: { ...fourth.report.run.graph!, traces: { ...fourth.report.run.graph!.traces!, format: "langsmith" } },
      },
    };
    await expect(write("langfuse", { ...subject(fourth), report: asLangsmith })).rejects.toThrow(
      "to be Langfuse trace exports or OTLP/JSON spans or test-spans exports (Langfuse scores attach",
    );
  });

  it("the write-back files' --out help names it where it is taken, and the check before the run reads it from the first record", async () => {
    const { OUT_FORMATS } = await import("../../src/cli/out-formats.js");
    const summary = (name: string) => OUT_FORMATS.find((f) => f.name === name)!.summary;
    expect(summary("langfuse")).toMatch(/, with --traces of Langfuse exports or OTLP spans or test spans$/);
    expect(summary("phoenix")).toMatch(/, with --traces of OTLP spans$/);
    expect(summary("langsmith")).toMatch(/, with --traces of LangSmith runs$/);
    // cases import takes every format: its help names them all.
    const { Command } = await import("commander");
    const program = new Command();
    (await import("../../src/cli/commands/cases.js")).register(program);
    const imp = program.commands.find((c) => c.name() === "cases")!.commands.find((c) => c.name() === "import")!;
    expect(imp.description()).toBe(
      "Turn conversations (chat-message JSONL, or recorded traces: OTLP spans, LangSmith runs, Langfuse exports, test spans or test runs) into cases to label",
    );
    // eval --traces and label --traces read every format: their help names them all too.
    const { addTracesOptions } = await import("../../src/cli/eval-options.js");
    const traces = addTracesOptions(new Command("eval")).options.find((o) => o.long === "--traces")!;
    expect(traces.description).toBe(
      "score recorded traces instead of running a graph: an OTLP/JSON export (OpenInference / OTel GenAI / Langfuse spans), LangSmith runs (listRuns() output), Langfuse traces (trace.get() output), test spans (a test's wrapped OTLP) or test runs (a test's wrapped LangSmith runs), a file or a folder of them; conversations join cases by id (docs/recorded-traces.md)",
    );
    (await import("../../src/cli/commands/label.js")).register(program);
    const label = program.commands.find((c) => c.name() === "label")!;
    expect(label.options.find((o) => o.long === "--traces")!.description).toMatch(
      /^recorded traces \(OTLP spans, LangSmith runs, Langfuse exports, test spans or test runs, as eval --traces\): /,
    );
    const { firstRecordFormat } = await import("../../src/eval/traces/first-format.js");
    expect(await firstRecordFormat(wrapped)).toBe("test-spans");
    const { checkWriteBackEarly } = await import("../../src/cli/out/write-back.js");
    const target = (format: string) => [{ format, file: "x", option: `--out ${format}:` }];
    expect(() => checkWriteBackEarly(target("langfuse"), "test-spans")).not.toThrow();
    expect(() => checkWriteBackEarly(target("langsmith"), "test-spans")).toThrow(
      'Expected `--out langsmith:` to be LangSmith run exports (feedback attaches to LangSmith runs; for OTLP spans write --out phoenix:FILE), got "test-spans traces"',
    );
  });

  it("cases import takes it as its module says (turns): the cases of the OTLP recording it wraps", async () => {
    const { importCases } = await import("../../src/app/cases-import.js");
    const [fourth, otlp] = [await importCases(wrapped, { locale: "en" }), await importCases(OTLP, { locale: "en" })];
    expect(fourth.cases).toHaveLength(4);
    expect(fourth.text).toBe(otlp.text);
    // One import reads one format: a record of another format after it is refused, named by the module's words.
    const mixed = path.join(tmp, "mixed.jsonl");
    await writeFile(mixed, `${readFileSync(wrapped, "utf8")}${readFileSync(OTLP, "utf8")}`);
    await expect(importCases(mixed, { locale: "en" })).rejects.toThrow(/not a test-spans record, while .*:1 was one/);
  });

  it("cases import takes a format of the runs kind through its own import, with its words", async () => {
    const { importCases } = await import("../../src/app/cases-import.js");
    const LANGSMITH = path.join(FIXTURES, "langsmith.runs.jsonl");
    const runs = path.join(tmp, "runs.jsonl");
    const lines = readFileSync(LANGSMITH, "utf8").split("\n").filter(Boolean);
    await writeFile(runs, lines.map((l) => `${JSON.stringify({ testRun: JSON.parse(l) as unknown })}\n`).join(""));
    const [fifth, langsmith] = [
      await importCases(runs, { locale: "en" }),
      await importCases(LANGSMITH, { locale: "en" }),
    ];
    expect(fifth.cases).toHaveLength(4);
    expect(fifth.text).toBe(langsmith.text);
    expect(langsmith.leftOut).toEqual([{ count: 32, words: "LangSmith child runs" }]);
    expect(fifth.leftOut).toEqual([{ count: 32, words: "test child runs" }]);
    // Its words in the messages: where its records name a locale, and what a record of no format was expected to be.
    await expect(importCases(runs)).rejects.toThrow(
      "give the conversation a `locale` field (LangSmith: extra.metadata.locale) (Test runs: testRun.extra.metadata.locale)",
    );
    const stray = path.join(tmp, "stray.jsonl");
    await writeFile(stray, `${lines[0]!}\n{"hello": 1}\n`);
    await expect(importCases(stray, { locale: "en" })).rejects.toThrow(
      'not a conversation: expected {"messages": [{"role": "user", "content": …}, …]} or a LangSmith run (with inputs.messages) or a test run (a LangSmith run in testRun)',
    );
  });

  it("a format no write-back file takes is refused by each, exit 2", async () => {
    const { runGraphEval } = await import("../../src/app/sources/registry.js");
    const LANGSMITH = path.join(FIXTURES, "langsmith.runs.jsonl");
    const runs = path.join(tmp, "runs-eval.jsonl");
    const lines = readFileSync(LANGSMITH, "utf8").split("\n").filter(Boolean);
    await writeFile(runs, lines.map((l) => `${JSON.stringify({ testRun: JSON.parse(l) as unknown })}\n`).join(""));
    const out = await runGraphEval({ ...run, traces: runs });
    expect(out.report.run.graph!.traces).toMatchObject({ format: "test-runs", label: "Test runs (wrapped LangSmith)" });
    const s = subject({ report: out.report, recorded: out.recorded! });
    for (const target of ["langsmith", "langfuse", "phoenix"] as const)
      await expect(write(target, s), target).rejects.toMatchObject({
        code: "INVALID_ARGUMENT",
        exitCode: 2,
        message: expect.stringContaining('got "test-runs traces"') as unknown,
      });
  });
});
