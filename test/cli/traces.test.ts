/**
 * `retrace eval --traces` end to end with the real bin
 * (docs/recorded-traces.md), on traces the real clients recorded
 * (test/fixtures/traces/: the OpenInference LangChain instrumentation over
 * OTLP/HTTP, and the LangSmith tracer read back with `listRuns()`):
 * - each turn's retrieved ids and hit / recall / nDCG equal what this test
 *   computes itself from the raw files (its own parsing, its own formulas:
 *   trec_eval's nDCG with binary gains), and the two formats agree;
 * - the empty retrieval is a scored miss, the errored retriever an error turn naming its span;
 * - bad input — a truncated export, a span whose parent is missing, two formats in one folder,
 *   documents with no id under the id rule, no conversation joining a case — is exit 2 naming
 *   file and line (or span), and nothing is written;
 * - a turn whose user text differs from its case is listed, not scored;
 * - the write-back files validate against Phoenix's span-annotation body and LangSmith's
 *   feedback fields (zod schemas written from their docs) and name every scored turn.
 */
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, mkdir, readFile, rm, writeFile, copyFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { ROOT, runCli } from "../helpers/cli.js";

const DIR = path.join(ROOT, "test", "fixtures", "traces");
const OTLP = path.join(DIR, "openinference.otlp.jsonl");
const LANGSMITH = path.join(DIR, "langsmith.runs.jsonl");
const base = ["--catalog", path.join(DIR, "catalog.tsv"), "--cases", path.join(DIR, "cases.jsonl"), "-k", "3"];
const K = 3;

type Turn = {
  caseId: string;
  turn: number;
  user: string;
  retrievedIds: string[] | null;
  error?: string;
  results: { key: string; score: number }[];
  goldLostAt?: Record<string, { at: string; text: string }>;
};

// ---------------------------------------------------------------- the independent reading of the raw files

interface RawTurn {
  conversation: string;
  user: string;
  start: bigint;
  ids: string[] | "error";
}

/** OTLP: root spans are turns; a RETRIEVER span's documents' metadata.doc_id in attribute order. */
function rawOtlp(file: string): RawTurn[] {
  const spans: {
    traceId: string;
    parentSpanId?: string;
    startTimeUnixNano: string;
    status?: { code?: number };
    attributes: { key: string; value: { stringValue?: string } }[];
  }[] = [];
  for (const line of readFileSync(file, "utf8").split("\n").filter(Boolean))
    for (const rs of JSON.parse(line).resourceSpans) for (const ss of rs.scopeSpans) spans.push(...ss.spans);
  const attr = (s: (typeof spans)[number], k: string) => s.attributes.find((a) => a.key === k)?.value.stringValue;
  const turns: RawTurn[] = [];
  for (const root of spans.filter((s) => !s.parentSpanId)) {
    const retr = spans.filter((s) => s.traceId === root.traceId && attr(s, "openinference.span.kind") === "RETRIEVER");
    expect(retr).toHaveLength(1); // the fixture graph calls its retriever once a turn
    const r = retr[0]!;
    const ids: string[] = [];
    for (let i = 0; attr(r, `retrieval.documents.${i}.document.metadata`) !== undefined; i++)
      ids.push(JSON.parse(attr(r, `retrieval.documents.${i}.document.metadata`)!).doc_id);
    const messages = JSON.parse(attr(root, "input.value")!).messages;
    turns.push({
      conversation: attr(root, "session.id")!,
      user: messages[messages.length - 1].content,
      start: BigInt(root.startTimeUnixNano),
      ids: r.status?.code === 2 ? "error" : ids,
    });
  }
  return turns;
}

/** LangSmith: root runs are turns; the retriever run's outputs.documents[].metadata.doc_id. */
function rawLangSmith(file: string): RawTurn[] {
  const runs = readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  return runs
    .filter((r) => r.parent_run_id == null)
    .map((root) => {
      const r = runs.find((x) => x.trace_id === root.trace_id && x.run_type === "retriever");
      const messages = root.inputs.messages;
      return {
        conversation: root.extra.metadata.thread_id,
        user: messages[messages.length - 1].content,
        start:
          BigInt(Date.parse(root.start_time)) * 1000n +
          BigInt(Number(/\.(\d+)Z$/.exec(root.start_time)?.[1]?.padEnd(6, "0").slice(3, 6) ?? 0)),
        ids: r.error ? "error" : r.outputs.documents.map((d: { metadata: { doc_id: string } }) => d.metadata.doc_id),
      };
    });
}

const gold: Record<string, string[][]> = Object.fromEntries(
  readFileSync(path.join(DIR, "cases.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l))
    .map((c: { id: string; turns: { must_cite_one_of: string[] }[] }) => [
      c.id,
      c.turns.map((t) => t.must_cite_one_of),
    ]),
);

/** hit@k, recall@k and trec_eval's nDCG@k (binary gain 1, discount log2(rank + 1), ideal over min(|gold|, k) ranks). */
function expected(ids: string[], g: string[]) {
  const top = ids.slice(0, K);
  const dcg = top.reduce((s, id, i) => s + (g.includes(id) ? 1 / Math.log2(i + 2) : 0), 0);
  let idcg = 0;
  for (let i = 0; i < Math.min(g.length, K); i++) idcg += 1 / Math.log2(i + 2);
  return {
    hit: top.some((id) => g.includes(id)) ? 1 : 0,
    recall: top.filter((id) => g.includes(id)).length / g.length,
    ndcg: dcg / idcg,
  };
}

/** Raw turns → `caseId#turn` → { ids, user }: conversations by id, turns by start time. */
function byTurn(raw: RawTurn[]): Map<string, RawTurn> {
  const out = new Map<string, RawTurn>();
  const convs = [...new Set(raw.map((t) => t.conversation))];
  for (const c of convs)
    raw
      .filter((t) => t.conversation === c)
      .sort((a, b) => (a.start < b.start ? -1 : 1))
      .forEach((t, i) => out.set(`${c}#${i}`, t));
  return out;
}

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), "retrace-traces-"));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

const score = (t: Turn, key: string) => t.results.find((r) => r.key === key)?.score;

describe("eval --traces scores each recorded turn as the raw spans say", () => {
  for (const [name, file, raw] of [
    ["OpenInference over OTLP", OTLP, () => rawOtlp(OTLP)],
    ["LangSmith runs", LANGSMITH, () => rawLangSmith(LANGSMITH)],
  ] as const) {
    it(`${name}: ids and hit / recall / nDCG per turn`, async () => {
      const r = await runCli(["eval", "--traces", file, ...base, "--json"]);
      // The errored retriever turn fails the gate (--max-errors 0): exit 1, the report complete.
      expect(r.exitCode, r.stderr).toBe(1);
      const report = JSON.parse(r.stdout) as {
        turns: Turn[];
        run: { graph: { retrievers: string[]; traces: { scoredTurns: number; conversations: number } } };
      };
      const want = byTurn(raw());
      expect(report.turns.map((t) => `${t.caseId}#${t.turn}`).sort()).toEqual([...want.keys()].sort());
      expect(report.run.graph.traces).toMatchObject({ scoredTurns: 8, conversations: 4 });
      // The header's retrievers, from the turns' captures (each let go once its turn is scored): the fixture graph's one retriever.
      expect(report.run.graph.retrievers).toEqual(["KeywordRetriever"]);
      for (const t of report.turns) {
        const w = want.get(`${t.caseId}#${t.turn}`)!;
        expect(t.user).toBe(w.user);
        if (w.ids === "error") {
          expect(t.error).toMatch(
            /the scored retriever call KeywordRetriever \(span or run [0-9a-f-]+\) failed: the keyword index is unavailable/,
          );
          expect(t.retrievedIds).toBeNull();
          continue;
        }
        const e = expected(w.ids, gold[t.caseId]![t.turn]!);
        expect(t.retrievedIds).toEqual(w.ids.slice(0, K));
        expect(score(t, "retrieval_hit_at_k")).toBe(e.hit);
        expect(score(t, "retrieval_recall_at_k")).toBeCloseTo(e.recall, 12);
        expect(score(t, "retrieval_ndcg_at_k")).toBeCloseTo(e.ndcg, 12);
        // Where each missed gold card was lost, recorded in the report (one retriever call a turn): listed below k by
        // the call → cut at k; not listed at all → not retrieved. A card in the top-k has no entry.
        const lost = Object.fromEntries(
          gold[t.caseId]![t.turn]!.flatMap((g) =>
            w.ids.slice(0, K).includes(g)
              ? []
              : [
                  [
                    g,
                    w.ids.includes(g)
                      ? { at: "final", text: "cut at k" }
                      : { at: "retrieval", text: "not retrieved (no retriever call listed it)" },
                  ],
                ],
          ),
        );
        expect(t.goldLostAt).toEqual(Object.keys(lost).length === 0 ? undefined : lost);
      }
      // conv-transfer#1 and conv-empty#1 missed their gold: the check above is not vacuous.
      expect(report.turns.filter((t) => t.goldLostAt !== undefined).map((t) => `${t.caseId}#${t.turn}`)).toEqual([
        "conv-transfer#1",
        "conv-empty#1",
      ]);
      // The empty retrieval (no document attributes at all) is a scored miss.
      expect(report.turns.find((t) => t.caseId === "conv-empty" && t.turn === 1)).toMatchObject({
        retrievedIds: [],
        results: expect.arrayContaining([{ key: "retrieval_hit_at_k", score: 0, comment: expect.any(String) }]),
      });
    });
  }

  it("the two formats give the same per-turn scores", async () => {
    const [a, b] = await Promise.all([OTLP, LANGSMITH].map((f) => runCli(["eval", "--traces", f, ...base, "--json"])));
    const view = (s: string) =>
      (JSON.parse(s) as { turns: Turn[] }).turns.map((t) => [t.caseId, t.turn, t.retrievedIds, t.results]);
    expect(view(a!.stdout)).toEqual(view(b!.stdout));
  });
});

const annotationBody = z.object({
  data: z.array(
    z.object({
      span_id: z.string().regex(/^[0-9a-f]{16}$/),
      name: z.string().min(1),
      annotator_kind: z.enum(["LLM", "CODE", "HUMAN"]),
      result: z.object({
        label: z.string().nullable().optional(),
        score: z.number().nullable().optional(),
        explanation: z.string().nullable().optional(),
      }),
      metadata: z.record(z.unknown()).optional(),
      identifier: z.string().optional(),
    }),
  ),
});
const feedback = z
  .object({ run_id: z.string().uuid(), key: z.string().min(1), score: z.number(), comment: z.string().optional() })
  .passthrough();

describe("write-back", () => {
  it("--out phoenix:FILE: Phoenix span annotations on each scored turn's root span, one per metric", async () => {
    const out = path.join(tmp, "annotations.json");
    const r = await runCli([
      "eval",
      "--traces",
      OTLP,
      ...base,
      "--gate",
      "max-errors=1",
      "--out",
      `phoenix:${out}`,
      "--json",
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    const body = annotationBody.parse(JSON.parse(await readFile(out, "utf8")));
    const roots = new Set(
      readFileSync(OTLP, "utf8")
        .split("\n")
        .filter(Boolean)
        .flatMap((l) =>
          JSON.parse(l).resourceSpans.flatMap(
            (rs: { scopeSpans: { spans: { spanId: string; parentSpanId?: string }[] }[] }) =>
              rs.scopeSpans.flatMap((ss) => ss.spans),
          ),
        )
        .filter((s: { parentSpanId?: string }) => !s.parentSpanId)
        .map((s: { spanId: string }) => s.spanId),
    );
    // 7 scored turns (the errored one is not scored) × 5 retrieval metrics.
    expect(body.data).toHaveLength(35);
    expect(new Set(body.data.map((a) => a.span_id)).size).toBe(7);
    for (const a of body.data) expect(roots.has(a.span_id)).toBe(true);
    expect(
      body.data
        .filter((a) => a.name === "retrieval_hit_at_k")
        .map((a) => a.result.label)
        .sort(),
    ).toEqual(["hit", "hit", "hit", "hit", "hit", "hit", "miss"]);
  });

  it("--out langsmith:FILE: LangSmith feedback records on each scored turn's root run", async () => {
    const out = path.join(tmp, "feedback.jsonl");
    const r = await runCli([
      "eval",
      "--traces",
      LANGSMITH,
      ...base,
      "--gate",
      "max-errors=1",
      "--out",
      `langsmith:${out}`,
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    const lines = (await readFile(out, "utf8"))
      .trim()
      .split("\n")
      .map((l) => feedback.parse(JSON.parse(l)));
    expect(lines).toHaveLength(35);
    const roots = new Set(rawRootRuns());
    for (const f of lines) expect(roots.has(f.run_id)).toBe(true);
  });

  it("the HTML page says it holds recorded user text, and the Next: lines repeat --traces", async () => {
    const html = path.join(tmp, "report.html");
    const r = await runCli(["eval", "--traces", LANGSMITH, ...base, "--gate", "max-errors=1", "--out", "html:" + html]);
    expect(r.exitCode, r.stderr).toBe(0);
    const page = await readFile(html, "utf8");
    const data = /id="retrace-data" data-encoding="gzip\+base64">([^<]*)</.exec(page)![1]!;
    const { gunzipSync } = await import("node:zlib");
    const header: string[] = JSON.parse(gunzipSync(Buffer.from(data.trim(), "base64")).toString("utf8")).run.graph
      .header;
    expect(header).toContain(
      "note: this report holds user text recorded in production or staging traces (the turns, queries and documents shown); share it as you would share the traces",
    );
    expect(r.stderr).toContain(`--traces ${LANGSMITH}`);
    // The missed recorded turn is traced from the recording (retrace trace --traces), with the run's recording and data.
    expect(r.stderr).toMatch(/npx retrace trace \S+ --turn \d+ --traces /);
  });

  it("a write-back the format cannot take is exit 2 and nothing is written", async () => {
    const out = path.join(tmp, "wrong.json");
    const json = path.join(tmp, "report-wrong.json");
    const r = await runCli([
      "eval",
      "--traces",
      LANGSMITH,
      ...base,
      "--gate",
      "max-errors=1",
      "--out",
      `phoenix:${out}`,
      "--out",
      "json:" + json,
    ]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/--out phoenix:/);
    expect(existsSync(out)).toBe(false);
    expect(existsSync(json)).toBe(false);
  });
});

function rawRootRuns(): string[] {
  return readFileSync(LANGSMITH, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l))
    .filter((r) => r.parent_run_id == null)
    .map((r) => r.id);
}

describe("bad or partial traces are exit 2, named", () => {
  it("a truncated export names the file and the line", async () => {
    const lines = readFileSync(OTLP, "utf8").split("\n").filter(Boolean);
    const file = path.join(tmp, "truncated.jsonl");
    await writeFile(file, [...lines.slice(0, -1), lines[lines.length - 1]!.slice(0, 200)].join("\n") + "\n");
    const r = await runCli(["eval", "--traces", file, ...base]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(`${file}:${lines.length}`);
    expect(r.stderr).toMatch(/truncated export/);
  });

  it("a span whose parent is in none of the files names the span and its line", async () => {
    const lines = readFileSync(OTLP, "utf8").split("\n").filter(Boolean);
    const file = path.join(tmp, "partial.jsonl");
    await writeFile(file, `${lines[0]}\n`); // the first export batch alone: its spans' parents were exported later
    const r = await runCli(["eval", "--traces", file, ...base]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(
      new RegExp(
        `${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:1.*span [0-9a-f]{16} names the parent span [0-9a-f]{16}, which is in none of the files read`,
      ),
    );
  });

  it("a folder mixing the two formats is refused", async () => {
    const dir = path.join(tmp, "mixed");
    await mkdir(dir, { recursive: true });
    await copyFile(OTLP, path.join(dir, "a.jsonl"));
    await copyFile(LANGSMITH, path.join(dir, "b.jsonl"));
    const r = await runCli(["eval", "--traces", dir, ...base]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(`${path.join(dir, "b.jsonl")}:1`);
    expect(r.stderr).toMatch(/one run reads one format/);
  });

  it("ids naming no card are exit 2 naming the recorded documents' metadata keys (summed up while each turn's capture is let go)", async () => {
    // Every document mapped to an id the catalog does not list.
    const idMap = path.join(tmp, "elsewhere-id-map.mjs");
    await writeFile(idMap, 'export default (doc) => "elsewhere-" + doc.metadata.doc_id;\n');
    const r = await runCli(["eval", "--traces", OTLP, ...base, "--id-map", idMap]);
    expect(r.exitCode, r.stderr).toBe(2);
    // The keys of every scored document's metadata, read here from the raw RETRIEVER spans.
    const keys = new Set<string>();
    for (const line of readFileSync(OTLP, "utf8").split("\n").filter(Boolean))
      for (const rs of JSON.parse(line).resourceSpans)
        for (const ss of rs.scopeSpans)
          for (const sp of ss.spans as { attributes: { key: string; value: { stringValue?: string } }[] }[])
            for (const a of sp.attributes)
              if (/^retrieval\.documents\.\d+\.document\.metadata$/.test(a.key))
                for (const k of Object.keys(JSON.parse(a.value.stringValue!))) keys.add(k);
    expect(keys.size).toBeGreaterThan(0);
    expect(r.stderr).toMatch(/name no card of the catalog .*catalog\.tsv/);
    expect(r.stderr).toContain(`; metadata keys present: ${[...keys].sort().join(", ")}.`);
  });

  it("documents with no id under the id rule name the turn's root and the keys tried", async () => {
    const r = await runCli(["eval", "--traces", OTLP, ...base, "--id-key", "card"]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(
      /case conv-\w+ turn \d \(recorded root [0-9a-f]{16}, .*openinference\.otlp\.jsonl:\d+\): document 1 has no card id; tried metadata\.card; metadata keys present: doc_id, title/,
    );
  });

  it("no conversation joining a case is exit 2; a turn whose text differs is listed and not scored", async () => {
    const cases = readFileSync(path.join(DIR, "cases.jsonl"), "utf8").replace(
      "how do I freeze my card?",
      "how do I freeze my debit card?",
    );
    const changed = path.join(tmp, "changed-cases.jsonl");
    await writeFile(changed, cases);
    const r = await runCli([
      "eval",
      "--traces",
      OTLP,
      "--catalog",
      path.join(DIR, "catalog.tsv"),
      "--cases",
      changed,
      "-k",
      "3",
      "--gate",
      "max-errors=1",
      "--json",
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.turns.some((t: Turn) => t.caseId === "conv-freeze" && t.turn === 0)).toBe(false);
    expect(report.run.graph.traces).toMatchObject({
      mismatches: 1,
      scoredTurns: 7,
      mismatchExamples: [
        {
          case: "conv-freeze",
          turn: 0,
          recorded: "how do I freeze my card?",
          expected: "how do I freeze my debit card?",
        },
      ],
    });

    const other = path.join(tmp, "other-cases.jsonl");
    await writeFile(other, cases.replaceAll('"id": "conv-', '"id": "other-'));
    const none = await runCli([
      "eval",
      "--traces",
      OTLP,
      "--catalog",
      path.join(DIR, "catalog.tsv"),
      "--cases",
      other,
      "-k",
      "3",
    ]);
    expect(none.exitCode).toBe(2);
    expect(none.stderr).toMatch(
      /no recorded turn joins a case \(4 conversations, 8 turns read; 4 conversations have no case of their id/,
    );
  });

  it("options that run a graph are refused with --traces; --traces-format without --traces too", async () => {
    const a = await runCli(["eval", "--traces", OTLP, ...base, "--repeat", "2"]);
    expect(a.exitCode).toBe(2);
    expect(a.stderr).toMatch(/option '--repeat' is not used with --traces/);
    const b = await runCli(["eval", "--traces-format", "otlp"]);
    expect(b.exitCode).toBe(2);
    expect(b.stderr).toMatch(/option '--traces-format' is not used without --traces/);
  });

  it("a missing baseline's advice repeats the recording's command, not a --graph one", async () => {
    const missing = path.join(tmp, "no-such-baseline.json");
    const r = await runCli(["eval", "--traces", OTLP, ...base, "--baseline", missing, "--gate", "max-drop=0.05"]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(
      `create one with \`retrace eval --traces ${OTLP} ${base.join(" ")} --baseline ${missing} --update-baseline\``,
    );
    expect(r.stderr).not.toContain("--graph");
  });
});

describe("the traces section of --config filters turns", () => {
  it("by service and time window", async () => {
    const cfg = path.join(tmp, "filters.json");
    await writeFile(cfg, JSON.stringify({ version: 1, traces: { services: ["another-service"] } }));
    const r = await runCli(["eval", "--traces", OTLP, ...base, "--config", cfg]);
    expect(r.exitCode).toBe(2); // every turn filtered out: nothing joins
    expect(r.stderr).toMatch(/0 conversations, 0 turns read/);
    const start = rawOtlp(OTLP)
      .map((t) => t.start)
      .sort((a, b) => (a < b ? -1 : 1));
    // From the 3rd turn's start on: the first two recorded turns are left out.
    await writeFile(
      cfg,
      JSON.stringify({
        version: 1,
        traces: { services: ["traces-agent"], from: new Date(Number(start[2]! / 1_000_000n)).toISOString() },
      }),
    );
    const w = await runCli(["eval", "--traces", OTLP, ...base, "--config", cfg, "--gate", "max-errors=1", "--json"]);
    expect(w.exitCode, w.stderr).toBe(0);
    expect(JSON.parse(w.stdout).run.graph.traces).toMatchObject({ filteredOut: 2, turns: 6 });
  });

  it("a bad traces section names the file and field", async () => {
    const cfg = path.join(tmp, "bad-filters.json");
    await writeFile(cfg, JSON.stringify({ version: 1, traces: { from: "yesterday" } }));
    const r = await runCli(["eval", "--traces", OTLP, ...base, "--config", cfg]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(`${cfg}: field \`traces.from\` expected a valid datetime, got "yesterday"`);
  });
});

/** The last AI message of a root span's `output.value` (LangChain's serialized messages), read here on its own. */
function rawOtlpAnswers(file: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of readFileSync(file, "utf8").split("\n").filter(Boolean))
    for (const rs of JSON.parse(line).resourceSpans)
      for (const ss of rs.scopeSpans)
        for (const s of ss.spans as {
          spanId: string;
          parentSpanId?: string;
          attributes: { key: string; value: { stringValue?: string } }[];
        }[]) {
          if (s.parentSpanId) continue;
          const value = s.attributes.find((a) => a.key === "output.value")?.value.stringValue;
          const ai = (JSON.parse(value!).messages as { id: string[]; kwargs: { content: string } }[]).filter(
            (m) => m.id.at(-1) === "AIMessage",
          );
          out.set(s.spanId, ai.at(-1)!.kwargs.content);
        }
  return out;
}

describe("record → cases import → label → eval --traces is one loop", () => {
  it("cases import of the OTLP export gives each conversation its session id as case id, and eval --traces joins every turn on it", async () => {
    const imported = path.join(tmp, "imported-otlp.jsonl");
    const imp = await runCli(["cases", "import", OTLP, "--locale", "en", "--out", imported]);
    expect(imp.exitCode, imp.stderr).toBe(0);
    expect(imp.stderr).toMatch(/Imported 4 conversations \(8 turns to label\)/);
    const cases = (await readFile(imported, "utf8"))
      .trim()
      .split("\n")
      .map(
        (l) =>
          JSON.parse(l) as {
            id: string;
            locale: string;
            turns: { user: string; context?: { role: string; content: string }[]; must_cite_one_of?: string[] }[];
          },
      );

    // The raw spans, read by this test: session.id → the user texts in start order, and each turn's context is the answer the turn before gave.
    const raw = rawOtlp(OTLP);
    const answers = rawOtlpAnswers(OTLP);
    const rootIds: string[] = [];
    for (const line of readFileSync(OTLP, "utf8").split("\n").filter(Boolean))
      for (const rs of JSON.parse(line).resourceSpans)
        for (const ss of rs.scopeSpans) for (const s of ss.spans) if (!s.parentSpanId) rootIds.push(s.spanId);
    const sessions = [...new Set(raw.map((t) => t.conversation))];
    expect(sessions.sort()).toEqual(["conv-empty", "conv-error", "conv-freeze", "conv-transfer"]);
    const want = new Map(
      sessions.map((c) => {
        const turns = raw
          .map((t, i) => ({ ...t, root: rootIds[i]! }))
          .filter((t) => t.conversation === c)
          .sort((a, b) => (a.start < b.start ? -1 : 1));
        return [
          c,
          turns.map((t, i) => ({
            user: t.user,
            ...(i > 0 ? { context: [{ role: "assistant", content: answers.get(turns[i - 1]!.root)! }] } : {}),
          })),
        ];
      }),
    );
    expect(new Map(cases.map((c) => [c.id, c.turns]))).toEqual(want);
    // conv-transfer's second turn follows "what are my daily transfer limits?", answered from the transfer-limits document alone.
    expect(cases.find((c) => c.id === "conv-transfer")!.turns[1]!.context).toEqual([
      { role: "assistant", content: "See: Transfer limits" },
    ]);

    // Unlabelled, every recorded turn joins its case turn: nothing without a case, no case without a trace, no text mismatch.
    const cat = ["--catalog", path.join(DIR, "catalog.tsv"), "-k", "3", "--gate", "max-errors=1", "--json"];
    const toLabel = await runCli(["eval", "--traces", OTLP, "--cases", imported, ...cat]);
    expect(toLabel.exitCode, toLabel.stderr).toBe(0);
    const tl = JSON.parse(toLabel.stdout) as {
      turns: (Turn & { toLabel?: boolean })[];
      run: { graph: { traces: Record<string, unknown> } };
    };
    expect(tl.run.graph.traces).toMatchObject({
      conversations: 4,
      turns: 8,
      scoredTurns: 8,
      mismatches: 0,
      conversationsWithoutCase: 0,
      casesWithoutTrace: 0,
      turnsWithoutCaseTurn: 0,
      caseTurnsWithoutTrace: 0,
      anonymousConversations: 0,
    });
    expect(tl.turns).toHaveLength(8);
    for (const t of tl.turns) {
      expect(t.toLabel).toBe(true);
      expect(t.results).toEqual([]);
    }

    // Labelled (the fixture's gold copied onto the imported cases by id and turn): the scores of the fixture cases, turn for turn.
    const labelled = path.join(tmp, "labelled-otlp.jsonl");
    await writeFile(
      labelled,
      cases
        .map((c) =>
          JSON.stringify({
            ...c,
            turns: c.turns.map((t, i) => ({ ...t, must_cite_one_of: gold[c.id]![i]!, expect: "answer" })),
          }),
        )
        .join("\n") + "\n",
    );
    const [mine, theirs] = await Promise.all([
      runCli(["eval", "--traces", OTLP, "--cases", labelled, ...cat]),
      runCli(["eval", "--traces", OTLP, "--cases", path.join(DIR, "cases.jsonl"), ...cat]),
    ]);
    expect(mine!.exitCode, mine!.stderr).toBe(0);
    const view = (s: string) =>
      (JSON.parse(s) as { turns: Turn[] }).turns
        .map((t) => [t.caseId, t.turn, t.retrievedIds, t.results] as const)
        .sort((a, b) => (`${a[0]}#${a[1]}` < `${b[0]}#${b[1]}` ? -1 : 1));
    expect(view(mine!.stdout)).toEqual(view(theirs!.stdout));
    expect(view(mine!.stdout).filter((t) => t[3].length > 0)).toHaveLength(7); // the errored turn scores nothing
  });

  it("a root run with no thread key is its own conversation: cases import names it by its run id, the id eval --traces joins on", async () => {
    const runs = readFileSync(LANGSMITH, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    const root = runs.find((r) => r.parent_run_id == null && r.extra.metadata.thread_id === "conv-error");
    delete root.extra.metadata.thread_id;
    const file = path.join(tmp, "anonymous.runs.jsonl");
    await writeFile(file, runs.map((r) => JSON.stringify(r)).join("\n") + "\n");
    const imported = path.join(tmp, "imported-anonymous.jsonl");
    const imp = await runCli(["cases", "import", file, "--locale", "en", "--out", imported]);
    expect(imp.exitCode, imp.stderr).toBe(0);
    const ids = (await readFile(imported, "utf8"))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l).id);
    expect(ids.sort()).toEqual(["conv-empty", "conv-freeze", "conv-transfer", root.id].sort());
    const r = await runCli([
      "eval",
      "--traces",
      file,
      "--cases",
      imported,
      "--catalog",
      path.join(DIR, "catalog.tsv"),
      "-k",
      "3",
      "--gate",
      "max-errors=1",
      "--json",
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).run.graph.traces).toMatchObject({
      scoredTurns: 8,
      anonymousConversations: 1,
      anonymousExamples: [root.id],
      conversationsWithoutCase: 0,
      casesWithoutTrace: 0,
    });
  });

  it("cases import of the LangSmith runs gives the same cases as of the OTLP export: ids (the thread_id of extra.metadata), user turns, and the previous answer as context", async () => {
    const [a, b] = await Promise.all([
      runCli(["cases", "import", OTLP, "--locale", "en"]),
      runCli(["cases", "import", LANGSMITH, "--locale", "en"]),
    ]);
    expect(a!.exitCode, a!.stderr).toBe(0);
    expect(b!.exitCode, b!.stderr).toBe(0);
    const users = (s: string) =>
      new Map(
        s
          .trim()
          .split("\n")
          .map((l) => JSON.parse(l) as { id: string; turns: { user: string }[] })
          .map((c) => [c.id, c.turns.map((t) => t.user)]),
      );
    const fromRuns = new Map<string, string[]>();
    for (const t of rawLangSmith(LANGSMITH).sort((x, y) => (x.start < y.start ? -1 : 1)))
      fromRuns.set(t.conversation, [...(fromRuns.get(t.conversation) ?? []), t.user]);
    expect(users(b!.stdout)).toEqual(fromRuns);
    expect(users(a!.stdout)).toEqual(fromRuns);
    // The runs' inputs hold the new user message alone: each later turn's context is the previous run's last AIMessage in outputs.
    const whole = (s: string) =>
      new Map(
        s
          .trim()
          .split("\n")
          .map((l) => JSON.parse(l) as { id: string; turns: unknown[] })
          .map((c) => [c.id, c.turns]),
      );
    expect(whole(b!.stdout)).toEqual(whole(a!.stdout));
    expect((whole(b!.stdout).get("conv-transfer") as { context?: unknown }[]).map((t) => t.context)).toEqual([
      undefined,
      [{ role: "assistant", content: "See: Transfer limits" }],
      [{ role: "assistant", content: "See: Pix keys" }],
    ]);
  });
});

describe("--shard i/n splits a traces run by conversation, and retrace merge gives the unsharded report", () => {
  it("the merged report equals the unsharded one byte for byte outside timings, for 2 and 3 shards", async () => {
    // The fixture's cases with one turn's text changed (a mismatch), conv-transfer's case left out (a conversation with no case)
    // and a case nothing recorded: every list of the traces section has something in it. conv-error's turn is an error turn.
    const fixture = readFileSync(path.join(DIR, "cases.jsonl"), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { id: string; turns: { user: string }[] });
    const changed = fixture
      .filter((c) => c.id !== "conv-transfer")
      .map((c) =>
        c.id === "conv-freeze"
          ? { ...c, turns: c.turns.map((t, i) => (i === 0 ? { ...t, user: "how do I freeze my debit card?" } : t)) }
          : c,
      );
    changed.push({
      id: "conv-unrecorded",
      locale: "en",
      kind: "golden",
      turns: [{ user: "where is my statement?", must_cite_one_of: ["fees-abroad"], expect: "answer" }],
    } as never);
    const cases = path.join(tmp, "shard-cases.jsonl");
    await writeFile(cases, changed.map((c) => JSON.stringify(c)).join("\n") + "\n");
    const args = ["eval", "--traces", OTLP, "--catalog", path.join(DIR, "catalog.tsv"), "--cases", cases, "-k", "3"];
    const whole = path.join(tmp, "unsharded.json");
    const u = await runCli([...args, "--gate", "max-errors=1", "--out", "json:" + whole]);
    expect(u.exitCode, u.stderr).toBe(0);
    const withoutTimings = (file: string) => {
      const r = JSON.parse(readFileSync(file, "utf8"));
      delete r.timings;
      return JSON.stringify(r, null, 2);
    };
    const unsharded = JSON.parse(readFileSync(whole, "utf8"));
    // By hand: conv-freeze turn 1, conv-empty's 2 turns and conv-error's turn joined (4); conv-freeze turn 0 differs.
    expect(unsharded.run.graph.traces).toMatchObject({
      scoredTurns: 4,
      mismatches: 1,
      conversationsWithoutCase: 1,
      conversationsWithoutCaseExamples: ["conv-transfer"],
      casesWithoutTrace: 1,
      casesWithoutTraceExamples: ["conv-unrecorded"],
    });
    for (const n of [2, 3]) {
      const files: string[] = [];
      for (let i = 1; i <= n; i++) {
        const f = path.join(tmp, `shard-${i}-of-${n}.json`);
        const s = await runCli([...args, "--shard", `${i}/${n}`, "--out", "json:" + f]);
        expect(s.exitCode, s.stderr).toBe(0);
        files.push(f);
      }
      const shards = files.map((f) => JSON.parse(readFileSync(f, "utf8")));
      // Whole conversations per shard: each case's recorded turns are in exactly one shard, and the shards' scored turns add up.
      expect(shards.reduce((k, s) => k + s.run.graph.traces.scoredTurns, 0)).toBe(4);
      const owners = new Map<string, Set<number>>();
      shards.forEach((s, i) =>
        s.turns.forEach((t: Turn) => owners.set(t.caseId, (owners.get(t.caseId) ?? new Set<number>()).add(i))),
      );
      expect([...owners.values()].map((o) => o.size)).toEqual([...owners.keys()].map(() => 1));
      const merged = path.join(tmp, `merged-${n}.json`);
      const m = await runCli(["merge", ...files, "--gate", "max-errors=1", "--out", "json:" + merged]);
      expect(m.exitCode, m.stderr).toBe(0);
      expect(withoutTimings(merged)).toBe(withoutTimings(whole));
    }
  });
});

describe("retrace label --traces", () => {
  it("pools the recorded retrieval as the `recorded` system, with the recorded documents' text (record → import → label → score)", async () => {
    const html = path.join(tmp, "label.html");
    const r = await runCli([
      "label",
      path.join(DIR, "cases.jsonl"),
      "--traces",
      OTLP,
      "--pool",
      "recorded",
      "--catalog",
      path.join(DIR, "catalog.tsv"),
      "--depth",
      "3",
      "--out",
      `html:${html}`,
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    const page = await readFile(html, "utf8");
    const data = /id="retrace-data" data-encoding="gzip\+base64">([^<]*)</.exec(page)![1]!;
    const { gunzipSync } = await import("node:zlib");
    const label = JSON.parse(gunzipSync(Buffer.from(data.trim(), "base64")).toString("utf8")) as {
      systems: string[];
      cases: {
        id: string;
        turns: { pool: { id: string; ranks: Record<string, number>; passage: unknown[] }[] }[];
      }[];
    };
    expect(label.systems).toEqual(["recorded"]);
    // Expected from the raw spans: each conversation's turns in start order, the retriever's doc_ids, first 3 distinct.
    const raw = rawOtlp(OTLP).sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
    let checked = 0;
    for (const c of label.cases) {
      const turns = raw.filter((t) => t.conversation === c.id);
      c.turns.forEach((t, i) => {
        const rec = turns[i];
        if (rec === undefined || rec.ids === "error") return;
        const want = [...new Set(rec.ids)].slice(0, 3);
        const got = t.pool
          .filter((p) => p.ranks.recorded !== undefined)
          .sort((a, b) => a.ranks.recorded! - b.ranks.recorded!)
          .map((p) => p.id);
        expect(got, `${c.id}#${i}`).toEqual(want);
        for (const p of t.pool)
          expect(p.passage.length, `${c.id}#${i} ${p.id} has the recorded text`).toBeGreaterThan(0);
        checked++;
      });
    }
    expect(checked).toBeGreaterThan(3);
  });

  it("--pool recorded without --traces, and --traces without recorded in --pool, are exit 2 naming the fix", async () => {
    const cases = path.join(DIR, "cases.jsonl");
    const cat = ["--catalog", path.join(DIR, "catalog.tsv"), "--out", `html:${path.join(tmp, "never.html")}`];
    const a = await runCli(["label", cases, "--pool", "recorded", "--out", `html:${path.join(tmp, "never.html")}`]);
    expect(a.exitCode).toBe(2);
    expect(a.stderr).toContain("recorded only with --traces PATH");
    const b = await runCli(["label", cases, "--traces", OTLP, "--pool", "graph", ...cat]);
    expect(b.exitCode).toBe(2);
    expect(existsSync(path.join(tmp, "never.html"))).toBe(false);
  });
});
