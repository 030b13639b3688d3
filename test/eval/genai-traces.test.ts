/**
 * OTel GenAI retrieval spans (issue 52, item 1; docs/recorded-traces.md):
 * a recording with only GenAI spans (test/fixtures/traces/genai.generated.otlp.jsonl,
 * written by make-genai.mjs from the conventions' text) scores with
 * `eval --traces` and imports with `cases import`, with the user text of the
 * GenAI input messages (the root's, else the chat span's below it) and the
 * documents of `gen_ai.retrieval.documents` in both of its forms: structured
 * (OTLP `kvlistValue`s) and a JSON string. Each turn's retrieved ids are
 * checked against this test's own reading of the raw file. A retrieval span
 * without the (opt-in) documents attribute is exit 2 naming the span.
 */
import { readFileSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, runCli } from "../helpers/cli.js";

const DIR = path.join(ROOT, "test", "fixtures", "traces");
const GENAI = path.join(DIR, "genai.generated.otlp.jsonl");
const base = ["--catalog", path.join(DIR, "catalog.tsv"), "--cases", path.join(DIR, "cases.jsonl"), "-k", "3"];

type AnyValue = {
  stringValue?: string;
  intValue?: string;
  doubleValue?: number;
  arrayValue?: { values: AnyValue[] };
  kvlistValue?: { values: { key: string; value: AnyValue }[] };
};
interface Span {
  spanId: string;
  parentSpanId?: string;
  traceId: string;
  startTimeUnixNano: string;
  status?: { code?: number };
  attributes: { key: string; value: AnyValue }[];
}

/** This test's own reading: per trace, the conversation, the start, and the retrieval's ids (or "error"). */
function rawTurns(): { conversation: string; start: bigint; ids: string[] | "error" }[] {
  const spans: Span[] = readFileSync(GENAI, "utf8")
    .split("\n")
    .filter(Boolean)
    .flatMap((l) => JSON.parse(l).resourceSpans[0].scopeSpans[0].spans as Span[]);
  const attr = (s: Span, k: string) => s.attributes.find((a) => a.key === k)?.value;
  const out: { conversation: string; start: bigint; ids: string[] | "error" }[] = [];
  for (const root of spans.filter((s) => s.parentSpanId === undefined)) {
    const r = spans.find(
      (s) => s.traceId === root.traceId && attr(s, "gen_ai.operation.name")?.stringValue === "retrieval",
    )!;
    let ids: string[] | "error";
    if (r.status?.code === 2) ids = "error";
    else {
      const docs = attr(r, "gen_ai.retrieval.documents")!;
      ids =
        docs.stringValue !== undefined
          ? (JSON.parse(docs.stringValue) as { id: string }[]).map((d) => d.id)
          : docs.arrayValue!.values.map((v) => v.kvlistValue!.values.find((kv) => kv.key === "id")!.value.stringValue!);
    }
    out.push({
      conversation: attr(root, "gen_ai.conversation.id")!.stringValue!,
      start: BigInt(root.startTimeUnixNano),
      ids,
    });
  }
  return out.sort((a, b) =>
    a.conversation < b.conversation ? -1 : a.conversation > b.conversation ? 1 : Number(a.start - b.start),
  );
}

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), "retrace-genai-"));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe("OTel GenAI retrieval spans", () => {
  it("the fixture has both forms of gen_ai.retrieval.documents, and roots with and without input messages", () => {
    const text = readFileSync(GENAI, "utf8");
    expect(text).toContain('"key":"gen_ai.retrieval.documents","value":{"arrayValue"');
    expect(text).toContain('"key":"gen_ai.retrieval.documents","value":{"stringValue"');
    expect(text).not.toMatch(/openinference|"input\.value"/);
  });

  it("eval --traces scores every turn with the documents recorded, joined by the GenAI user text", async () => {
    const json = path.join(tmp, "report.json");
    const r = await runCli(["eval", "--traces", GENAI, ...base, "--gate", "max-errors=1", "--out", `json:${json}`]);
    expect(r.exitCode, r.stderr).toBe(0);
    const report = JSON.parse(await readFile(json, "utf8")) as {
      turns: { caseId: string; turn: number; retrievedIds: string[] | null; error?: string }[];
      run: { graph: { traces: { scoredTurns: number; mismatches: number } } };
    };
    expect(report.run.graph.traces.mismatches).toBe(0);
    const raw = rawTurns();
    const turns = [...report.turns].sort((a, b) =>
      a.caseId < b.caseId ? -1 : a.caseId > b.caseId ? 1 : a.turn - b.turn,
    );
    expect(turns.map((t) => `${t.caseId}#${t.turn}`)).toEqual(
      raw.map((t, i) => `${t.conversation}#${raw.slice(0, i).filter((u) => u.conversation === t.conversation).length}`),
    );
    for (const [i, t] of turns.entries()) {
      const want = raw[i]!.ids;
      if (want === "error") expect(t.error).toMatch(/fixture-kb .* failed: the keyword index is unavailable/);
      else expect(t.retrievedIds).toEqual(want.slice(0, 3));
    }
    // conv-freeze (structured documents) and conv-transfer (JSON strings, user text from the chat span) are both scored.
    expect(turns.filter((t) => t.caseId === "conv-freeze" && t.retrievedIds !== null)).toHaveLength(2);
    expect(turns.filter((t) => t.caseId === "conv-transfer" && t.retrievedIds !== null)).toHaveLength(3);
  });

  it("cases import makes cases with the real user text and the previous answer as context", async () => {
    const out = path.join(tmp, "cases.jsonl");
    const r = await runCli(["cases", "import", GENAI, "--locale", "en", "--out", out]);
    expect(r.exitCode, r.stderr).toBe(0);
    const cases = (await readFile(out, "utf8"))
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { id: string; turns: { user: string; context?: { content: string }[] }[] });
    const byId = new Map(cases.map((c) => [c.id, c]));
    // The user messages of the fixture's conversations, as the hand-written cases hold them.
    const CONVERSATIONS = Object.fromEntries(
      readFileSync(path.join(DIR, "cases.jsonl"), "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { id: string; turns: { user: string }[] })
        .map((c) => [c.id, c.turns.map((t) => t.user)]),
    );
    for (const [id, users] of Object.entries(CONVERSATIONS))
      expect(byId.get(id)?.turns.map((t) => t.user)).toEqual(users);
    expect(byId.get("conv-freeze")!.turns[1]!.context?.[0]?.content).toMatch(/^See: Freeze or unfreeze your card/);
  });

  it("a retrieval span without gen_ai.retrieval.documents (opt-in: not recorded) is exit 2 naming the span", async () => {
    const lines = readFileSync(GENAI, "utf8").split("\n").filter(Boolean);
    const first = JSON.parse(lines[0]!) as { resourceSpans: { scopeSpans: { spans: Span[] }[] }[] };
    const spans = first.resourceSpans[0]!.scopeSpans[0]!.spans;
    const r0 = spans.find((s) => s.attributes.some((a) => a.key === "gen_ai.retrieval.documents"))!;
    r0.attributes = r0.attributes.filter((a) => a.key !== "gen_ai.retrieval.documents");
    const file = path.join(tmp, "no-documents.jsonl");
    await writeFile(file, [JSON.stringify(first), ...lines.slice(1)].join("\n") + "\n");
    const r = await runCli(["eval", "--traces", file, ...base, "--gate", "max-errors=1"]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(`no-documents.jsonl:1`);
    expect(r.stderr).toContain(`span ${r0.spanId}: a retrieval span without gen_ai.retrieval.documents`);
  });
});
