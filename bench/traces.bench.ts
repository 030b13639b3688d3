/**
 * `retrace eval --traces` at scale (docs/recorded-traces.md#scale; issue 35
 * item 6): a day of a busy agent, RETRACE_BENCH_TRACE_SPANS spans (default
 * 1,000,000), scored in one run.
 *
 * The export is the recorded fixture (test/fixtures/traces/openinference.otlp.jsonl,
 * made by the real OpenInference instrumentation: 40 spans, 8 turns, 4
 * conversations) multiplied: copy j gets fresh trace and span ids (the id's
 * first 6 hex digits are j), its conversations the session and thread ids
 * `conv-…-j`, and its times shifted past copy j − 1's, written line by line
 * to a temporary file; the cases are the fixture's, one per copy and
 * conversation (`conv-…-j`). `retrace eval --traces` then runs in its own
 * process under /usr/bin/time (peak RSS), through bin/retrace.mjs (dist/
 * when built, else the TypeScript source through tsx, whose start-up is
 * counted).
 *
 * `RETRACE_BENCH_TRACE_DATA=real` builds a real-shaped recording instead
 * (`generateRealShaped`: ids, document texts and metadata varied per copy),
 * and `RETRACE_BENCH_TRACE_INPUTS=jsonl,pretty,gzip,stdin` measures the same
 * recording as JSON Lines, one pretty-printed OTLP document (streamed by the
 * reader), gzip (level 1) and JSON Lines on standard input (`--traces -`).
 *
 * Printed: spans, turns, the export's size, the time to write it, per input
 * the run's wall time, CPU time (user + system) and peak RSS against the
 * targets (< 60 s, < 2 GB on this machine), and the scored-turn count the
 * run reports. Never asserted.
 */
import { spawnSync } from "node:child_process";
import { closeSync, createReadStream, createWriteStream, existsSync, openSync, readFileSync, statSync } from "node:fs";
import { createInterface } from "node:readline";
import { createGzip } from "node:zlib";
import { pipeline } from "node:stream/promises";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { REPO_ROOT } from "./lib/eval-set.js";
import { print, printTable } from "./lib/report.js";

const FIXTURES = path.join(REPO_ROOT, "test", "fixtures", "traces");
const OTLP = path.join(FIXTURES, "openinference.otlp.jsonl");
const CASES = path.join(FIXTURES, "cases.jsonl");
const CATALOG = path.join(FIXTURES, "catalog.tsv");
const TARGET_S = 60;
const TARGET_MB = 2048;

function envInt(name: string, fallback: number): number {
  const raw = process.env[name];
  const n = raw === undefined || raw === "" ? fallback : Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be a positive integer, got ${JSON.stringify(raw)}`);
  return n;
}

type Part = string | { id: string } | { time: bigint } | { conv: string };

/** One export line cut at what a copy changes: span and trace ids, start and end times, conversation ids. */
function template(line: string): Part[] {
  const re =
    /("(?:traceId|spanId|parentSpanId)":")([0-9a-f]+)"|("(?:startTimeUnixNano|endTimeUnixNano)":")(\d+)"|(conv-[a-z]+)/g;
  const parts: Part[] = [];
  let at = 0;
  for (let m = re.exec(line); m !== null; m = re.exec(line)) {
    if (m[1] !== undefined) parts.push(line.slice(at, m.index) + m[1], { id: m[2]! }, '"');
    else if (m[3] !== undefined) parts.push(line.slice(at, m.index) + m[3], { time: BigInt(m[4]!) }, '"');
    else parts.push(line.slice(at, m.index), { conv: m[5]! });
    at = m.index + m[0].length;
  }
  parts.push(line.slice(at));
  return parts;
}

function render(parts: readonly Part[], j: number, shiftNs: bigint): string {
  const prefix = j.toString(16).padStart(6, "0");
  let s = "";
  for (const p of parts) {
    if (typeof p === "string") s += p;
    else if ("id" in p) s += prefix + p.id.slice(6);
    else if ("time" in p) s += String(p.time + shiftNs * BigInt(j));
    else s += `${p.conv}-${j}`;
  }
  return s;
}

/** Writes `copies` copies of the fixture export and its cases; returns the spans written. */
export async function generate(dir: string, copies: number): Promise<{ traces: string; cases: string; spans: number }> {
  const lines = readFileSync(OTLP, "utf8").split("\n").filter(Boolean);
  let spans = 0;
  let [min, max] = [BigInt(Number.MAX_SAFE_INTEGER) * 1_000_000n, 0n];
  for (const l of lines)
    for (const rs of JSON.parse(l).resourceSpans as {
      scopeSpans: { spans: { startTimeUnixNano: string; endTimeUnixNano: string }[] }[];
    }[])
      for (const ss of rs.scopeSpans)
        for (const s of ss.spans) {
          spans++;
          if (BigInt(s.startTimeUnixNano) < min) min = BigInt(s.startTimeUnixNano);
          if (BigInt(s.endTimeUnixNano) > max) max = BigInt(s.endTimeUnixNano);
        }
  const shiftNs = max - min + 1_000_000n; // each copy starts 1 ms after the previous one ends
  const parts = lines.map(template);
  const traces = path.join(dir, "traces.jsonl");
  const out = createWriteStream(traces);
  for (let j = 0; j < copies; j++) {
    const chunk = parts.map((p) => render(p, j, shiftNs)).join("\n") + "\n";
    if (!out.write(chunk)) await new Promise<void>((r) => out.once("drain", () => r()));
  }
  await new Promise<void>((resolve, reject) => out.end((e?: Error | null) => (e ? reject(e) : resolve())));
  const fixtureCases = readFileSync(CASES, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { id: string });
  const cases = path.join(dir, "cases.jsonl");
  const caseLines: string[] = [];
  for (let j = 0; j < copies; j++)
    for (const c of fixtureCases) caseLines.push(JSON.stringify({ ...c, id: `${c.id}-${j}` }));
  await writeFile(cases, caseLines.join("\n") + "\n");
  return { traces, cases, spans: spans * copies };
}

/**
 * A real-shaped recording (issue 51 item 5): the recorded fixture multiplied
 * as `generate` does, but with what a real day varies varied in every copy,
 * so that neither the reader's one-copy-per-text interning nor the repeated
 * bytes flatter it: trace and span ids (8 hex digits of a bijective hash of
 * the copy, not a counter), each document's text (the recorded text rotated
 * by a per-copy amount: the same, real, length, a different string), each
 * document's metadata JSON (a chunk id, an offset and a source URL per copy
 * beside the recorded `doc_id`, which scoring maps to a card), and each
 * span's LangGraph metadata (its checkpoint namespaces per copy). Written
 * through JSON.stringify per line, so every escape stays valid.
 */
export async function generateRealShaped(
  dir: string,
  copies: number,
): Promise<{ traces: string; cases: string; spans: number }> {
  const records = readFileSync(OTLP, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { resourceSpans: { scopeSpans: { spans: Span[] }[] }[] });
  type Attr = { key: string; value: { stringValue?: string } };
  type Span = {
    traceId: string;
    spanId: string;
    parentSpanId?: string;
    startTimeUnixNano: string;
    endTimeUnixNano: string;
    attributes?: Attr[];
  };
  const spans = records.flatMap((r) => r.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans)));
  const original = spans.map((s) => ({
    traceId: s.traceId,
    spanId: s.spanId,
    parentSpanId: s.parentSpanId,
    start: BigInt(s.startTimeUnixNano),
    end: BigInt(s.endTimeUnixNano),
    attributes: (s.attributes ?? []).map((a) => ({ ...a.value })),
  }));
  const min = original.reduce((m, s) => (s.start < m ? s.start : m), original[0]!.start);
  const max = original.reduce((m, s) => (s.end > m ? s.end : m), 0n);
  const shiftNs = max - min + 1_000_000n;
  const uuid = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
  const traces = path.join(dir, "traces.jsonl");
  const out = createWriteStream(traces);
  for (let j = 0; j < copies; j++) {
    const tag = (Math.imul(j + 1, 0x9e3779b1) >>> 0).toString(16).padStart(8, "0");
    const id = (x: string) => tag + x.slice(8);
    spans.forEach((s, i) => {
      const o = original[i]!;
      s.traceId = id(o.traceId);
      s.spanId = id(o.spanId);
      if (o.parentSpanId !== undefined && o.parentSpanId !== "") s.parentSpanId = id(o.parentSpanId);
      s.startTimeUnixNano = String(o.start + shiftNs * BigInt(j));
      s.endTimeUnixNano = String(o.end + shiftNs * BigInt(j));
      (s.attributes ?? []).forEach((a, k) => {
        const v = o.attributes[k]!.stringValue;
        if (v === undefined) return;
        if (a.key === "session.id") a.value.stringValue = `${v}-${j}`;
        else if (a.key === "metadata")
          a.value.stringValue = v.replace(/"(conv-[a-z]+)"/g, `"$1-${j}"`).replace(uuid, (u) => tag + u.slice(8));
        else if (/^retrieval\.documents\.\d+\.document\.content$/.test(a.key) && v.length > 1) {
          const r = (j * 31) % v.length;
          a.value.stringValue = v.slice(r) + v.slice(0, r);
        } else if (/^retrieval\.documents\.\d+\.document\.metadata$/.test(a.key)) {
          const m = JSON.parse(v) as Record<string, unknown>;
          a.value.stringValue = JSON.stringify({
            ...m,
            chunk_id: `${String(m.doc_id)}#${j}`,
            offset: (j * 512) % 1_000_000,
            source: `https://kb.example.com/${String(m.doc_id)}?rev=${tag}`,
          });
        }
      });
    });
    const chunk = records.map((r) => JSON.stringify(r)).join("\n") + "\n";
    if (!out.write(chunk)) await new Promise<void>((r) => out.once("drain", () => r()));
  }
  await new Promise<void>((resolve, reject) => out.end((e?: Error | null) => (e ? reject(e) : resolve())));
  const fixtureCases = readFileSync(CASES, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { id: string });
  const cases = path.join(dir, "cases.jsonl");
  const caseLines: string[] = [];
  for (let j = 0; j < copies; j++)
    for (const c of fixtureCases) caseLines.push(JSON.stringify({ ...c, id: `${c.id}-${j}` }));
  await writeFile(cases, caseLines.join("\n") + "\n");
  return { traces, cases, spans: spans.length * copies };
}

/** The same recording as one pretty-printed OTLP export document (`{"resourceSpans": [...]}`, two-space indent), streamed out. */
async function writePretty(jsonl: string, out: string): Promise<void> {
  const w = createWriteStream(out);
  const put = async (s: string) => {
    if (!w.write(s)) await new Promise<void>((r) => w.once("drain", () => r()));
  };
  await put('{\n  "resourceSpans": [\n');
  let first = true;
  const rl = createInterface({ input: createReadStream(jsonl), crlfDelay: Infinity });
  for await (const line of rl) {
    if (line === "") continue;
    for (const rs of (JSON.parse(line) as { resourceSpans: unknown[] }).resourceSpans) {
      await put((first ? "" : ",\n") + JSON.stringify(rs, null, 2).replace(/^/gm, "    "));
      first = false;
    }
  }
  await put("\n  ]\n}\n");
  await new Promise<void>((resolve, reject) => w.end((e?: Error | null) => (e ? reject(e) : resolve())));
}

/** Runs the CLI in its own process under GNU time (peak RSS), as bench/graph-sweep.bench.ts does. */
function retrace(
  args: string[],
  stdinFile?: string,
): {
  status: number | null;
  wallMs: number;
  maxRssMb: number | null;
  cpuS: number | null;
  stdout: string;
  stderr: string;
} {
  const timeBin = existsSync("/usr/bin/time") ? "/usr/bin/time" : null;
  const cli = [process.execPath, path.join(REPO_ROOT, "bin", "retrace.mjs"), ...args];
  // CPU time (user + system) beside the wall time: on a shared machine the wall time also measures the other processes.
  const cmd = timeBin !== null ? [timeBin, "-f", "retrace-bench-maxrss-kb=%M retrace-bench-cpu-s=%U+%S", ...cli] : cli;
  const t0 = performance.now();
  const stdin = stdinFile !== undefined ? openSync(stdinFile, "r") : undefined;
  const r = spawnSync(cmd[0]!, cmd.slice(1), {
    cwd: REPO_ROOT,
    ...(stdin !== undefined ? { stdio: [stdin, "pipe", "pipe"] } : {}),
    env: { ...process.env, NO_COLOR: "1", RETRACE_LOG: "warn" },
    encoding: "utf8",
    maxBuffer: 1 << 28,
  });
  if (stdin !== undefined) closeSync(stdin);
  const rss = /retrace-bench-maxrss-kb=(\d+)/.exec(r.stderr);
  const cpu = /retrace-bench-cpu-s=([\d.]+)\+([\d.]+)/.exec(r.stderr);
  return {
    status: r.status,
    wallMs: performance.now() - t0,
    maxRssMb: rss ? Number(rss[1]) / 1024 : null,
    cpuS: cpu ? Number(cpu[1]) + Number(cpu[2]) : null,
    stdout: r.stdout,
    stderr: r.stderr,
  };
}

/** The inputs measured (RETRACE_BENCH_TRACE_INPUTS, comma-separated; default the JSON Lines file alone). */
const INPUTS = ["jsonl", "pretty", "gzip", "stdin"] as const;
type Input = (typeof INPUTS)[number];

export async function run(): Promise<void> {
  const want = envInt("RETRACE_BENCH_TRACE_SPANS", 1_000_000);
  // RETRACE_BENCH_TRACE_DATA=real: the real-shaped recording (`generateRealShaped`); default the repeated fixture (`generate`).
  const real = process.env.RETRACE_BENCH_TRACE_DATA === "real";
  const inputs = (process.env.RETRACE_BENCH_TRACE_INPUTS ?? "jsonl").split(",").map((x) => x.trim()) as Input[];
  for (const i of inputs)
    if (!INPUTS.includes(i))
      throw new Error(`RETRACE_BENCH_TRACE_INPUTS: expected some of ${INPUTS.join(", ")}, got ${i}`);
  const dir = await mkdtemp(path.join(tmpdir(), "retrace-bench-traces-"));
  try {
    const copies = Math.ceil(want / 40);
    const t0 = performance.now();
    const g = real ? await generateRealShaped(dir, copies) : await generate(dir, copies);
    const genS = (performance.now() - t0) / 1000;
    const mb = statSync(g.traces).size / (1 << 20);
    print(
      `\nexport: ${g.spans.toLocaleString("en")} spans (${copies.toLocaleString("en")} copies of the recorded fixture${real ? ", real-shaped: ids, document texts and metadata varied per copy" : ""}), ${(8 * copies).toLocaleString("en")} turns, ${(4 * copies).toLocaleString("en")} conversations, ${mb.toFixed(0)} MiB, written in ${genS.toFixed(1)} s`,
    );
    const rows: string[][] = [];
    for (const input of inputs) {
      let file = g.traces;
      if (input === "pretty") {
        file = path.join(dir, "traces.pretty.json");
        await writePretty(g.traces, file);
      } else if (input === "gzip") {
        file = path.join(dir, "traces.jsonl.gz");
        await pipeline(createReadStream(g.traces), createGzip({ level: 1 }), createWriteStream(file));
      }
      const size = statSync(file).size / (1 << 20);
      const reportJson = path.join(dir, "report.json");
      // Every copy's conv-error turn errored in its retriever: allowed, so the gate passes on the scores alone.
      const r = retrace(
        [
          "eval",
          "--traces",
          input === "stdin" ? "-" : file,
          "--catalog",
          CATALOG,
          "--cases",
          g.cases,
          "-k",
          "3",
          "--gate",
          `max-errors=${copies}`,
          "--out",
          `json:${reportJson}`,
        ],
        input === "stdin" ? file : undefined,
      );
      if (r.status !== 0)
        throw new Error(`retrace eval --traces (${input}) exited ${r.status}: ${r.stderr.slice(-2000)}`);
      const traces = (
        JSON.parse(readFileSync(reportJson, "utf8")) as {
          run: { graph: { traces: { records: number; turns: number; scoredTurns: number } } };
        }
      ).run.graph.traces;
      const wallS = r.wallMs / 1000;
      rows.push([
        input,
        `${size.toFixed(0)} MiB`,
        traces.records.toLocaleString("en"),
        traces.scoredTurns.toLocaleString("en"),
        wallS.toFixed(1),
        r.cpuS === null ? "n/a" : r.cpuS.toFixed(1),
        r.maxRssMb === null ? "n/a (no /usr/bin/time)" : `${r.maxRssMb.toFixed(0)} MB`,
        `${(r.cpuS ?? wallS) < TARGET_S ? "CPU yes" : "CPU NO"}, ${r.maxRssMb === null ? "memory n/a" : r.maxRssMb < TARGET_MB ? "memory yes" : "memory NO"}`,
      ]);
      if (input === "pretty" || input === "gzip") await rm(file, { force: true });
    }
    printTable(
      `retrace eval --traces over ${g.spans.toLocaleString("en")} spans (own process; targets < ${TARGET_S} s, < ${TARGET_MB / 1024} GB)`,
      [
        { header: "input" },
        { header: "size", align: "right" },
        { header: "spans read", align: "right" },
        { header: "turns scored", align: "right" },
        { header: "wall s", align: "right" },
        { header: "CPU s", align: "right" },
        { header: "peak RSS", align: "right" },
        { header: "within targets" },
      ],
      rows,
    );
    print(
      `runner: ${existsSync(path.join(REPO_ROOT, "dist", "cli", "run.js")) ? "dist/ (compiled)" : "src/ through tsx (dist/ not built: start-up included)"}`,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
