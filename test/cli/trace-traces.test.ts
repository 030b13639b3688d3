/**
 * `retrace trace CASE --traces PATH` (issue 50): a recorded turn traced with
 * the reader, join, id rule, call mode and scoring of `eval --traces`, on the
 * recordings the real clients made (test/fixtures/traces/: OpenInference
 * spans over OTLP, LangSmith runs):
 * - each traced turn's ids and scores are the ones `eval --traces` reports;
 * - every retrieval step of a turn is shown, scored or not, its calls
 *   numbered within the step: a copy of a turn's recorded retriever call is
 *   added as a later LangGraph step (its own step and task) with the gold
 *   card moved from rank 1 to rank 3, so the default `--retrieval-call last`
 *   scores the copy and the recorded call is the unscored step 1;
 * - the project file's `traces` is read, a turn the recording does not give
 *   is exit 2 naming it, and options that run a graph are refused.
 */
import { readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, runCli } from "../helpers/cli.js";

const DIR = path.join(ROOT, "test", "fixtures", "traces");
const OTLP = path.join(DIR, "openinference.otlp.jsonl");
const LANGSMITH = path.join(DIR, "langsmith.runs.jsonl");
const CATALOG = path.join(DIR, "catalog.tsv");
const CASES = path.join(DIR, "cases.jsonl");
const base = ["--catalog", CATALOG, "--cases", CASES, "-k", "3"];

type Turn = { caseId: string; turn: number; retrievedIds: string[] | null; results: { key: string; score: number }[] };

type Attr = { key: string; value: { stringValue?: string } };
type Span = { spanId: string; startTimeUnixNano: string; endTimeUnixNano: string; attributes: Attr[] };

/**
 * The OTLP recording with conv-freeze turn 0's retriever span copied as a
 * later step: new span id, after the original, langgraph_step + 1 and its own
 * checkpoint namespace, its three documents in reverse order (the gold
 * card-freeze from 1st to 3rd).
 */
function otlpWithSecondStep(): string {
  const lines = readFileSync(OTLP, "utf8").split("\n").filter(Boolean);
  let done = false;
  const out = lines.map((line) => {
    const doc = JSON.parse(line) as { resourceSpans: { scopeSpans: { spans: Span[] }[] }[] };
    for (const rs of doc.resourceSpans)
      for (const ss of rs.scopeSpans) {
        const at = ss.spans.findIndex(
          (s) =>
            !done &&
            s.attributes.some((a) => a.key === "openinference.span.kind" && a.value.stringValue === "RETRIEVER") &&
            s.attributes.some(
              (a) => a.key === "metadata" && a.value.stringValue!.includes('"thread_id":"conv-freeze"'),
            ),
        );
        if (at < 0) continue;
        const orig = ss.spans[at]!;
        const copy = JSON.parse(JSON.stringify(orig)) as Span;
        copy.spanId = "5e5e5e5e5e5e5e5e";
        copy.startTimeUnixNano = String(BigInt(orig.endTimeUnixNano) + 1_000_000n);
        copy.endTimeUnixNano = String(BigInt(orig.endTimeUnixNano) + 2_000_000n);
        const docAttr = /^retrieval\.documents\.(\d+)\.(.*)$/u;
        const n = copy.attributes.filter((a) => /^retrieval\.documents\.\d+\.document\.metadata$/u.test(a.key)).length;
        expect(n).toBe(3);
        copy.attributes = copy.attributes.map((a) => {
          const m = docAttr.exec(a.key);
          if (m !== null) return { ...a, key: `retrieval.documents.${n - 1 - Number(m[1])}.${m[2]}` };
          if (a.key !== "metadata") return a;
          const meta = JSON.parse(a.value.stringValue!) as Record<string, unknown>;
          meta.langgraph_step = (meta.langgraph_step as number) + 1;
          meta.langgraph_checkpoint_ns = "fallback:1";
          meta.checkpoint_ns = "fallback:1";
          return { key: a.key, value: { stringValue: JSON.stringify(meta) } };
        });
        ss.spans.splice(at + 1, 0, copy);
        done = true;
      }
    return JSON.stringify(doc);
  });
  expect(done).toBe(true);
  return out.map((l) => `${l}\n`).join("");
}

/** The LangSmith runs with conv-freeze turn 0's retriever run copied the same way (new id and dotted order, later step, reversed documents). */
function langsmithWithSecondStep(): string {
  const runs = readFileSync(LANGSMITH, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const at = runs.findIndex(
    (r) =>
      r.run_type === "retriever" &&
      (r.extra as { metadata: { thread_id: string } }).metadata.thread_id === "conv-freeze",
  );
  expect(at).toBeGreaterThanOrEqual(0);
  const orig = runs[at]!;
  const copy = JSON.parse(JSON.stringify(orig)) as Record<string, unknown> & {
    extra: { metadata: Record<string, unknown> };
    outputs: { documents: unknown[] };
  };
  const id = "01a2363e-b406-76de-8ed3-000000000002";
  copy.id = id;
  const end = orig.end_time as number;
  copy.start_time = new Date(end + 1).toISOString();
  copy.end_time = end + 2;
  copy.dotted_order = (orig.dotted_order as string).replace(
    /\.[^.]*$/u,
    `.${new Date(end + 1).toISOString().replace(/[-:.]/gu, "").replace("Z", "000Z")}${id}`,
  );
  copy.extra.metadata.langgraph_step = (copy.extra.metadata.langgraph_step as number) + 1;
  copy.extra.metadata.langgraph_checkpoint_ns = "fallback:1";
  copy.extra.metadata.checkpoint_ns = "fallback:1";
  expect(copy.outputs.documents).toHaveLength(3);
  copy.outputs.documents.reverse();
  runs.splice(at + 1, 0, copy);
  return runs.map((r) => `${JSON.stringify(r)}\n`).join("");
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "retrace-trace-traces-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The conv-freeze turns of `eval --traces FILE --json`. */
async function evalTurns(file: string): Promise<Turn[]> {
  const r = await runCli(["eval", "--traces", file, ...base, "--json", "--gate", "max-errors=1"]);
  expect(r.exitCode, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { turns: Turn[] }).turns.filter((t) => t.caseId === "conv-freeze");
}

describe("retrace trace --traces", () => {
  for (const [name, file, withSecondStep] of [
    ["OpenInference over OTLP", OTLP, otlpWithSecondStep],
    ["LangSmith runs", LANGSMITH, langsmithWithSecondStep],
  ] as const) {
    it(`${name}: each turn traced as eval --traces scores it`, async () => {
      const t = await runCli(["trace", "conv-freeze", "--traces", file, ...base, "--json"]);
      expect(t.exitCode, t.stderr).toBe(0);
      const traced = JSON.parse(t.stdout) as { case: { id: string; turns: number }; turns: { report: Turn }[] };
      expect(traced.case).toMatchObject({ id: "conv-freeze", turns: 2 });
      const scored = await evalTurns(file);
      expect(scored).toHaveLength(2);
      expect(traced.turns.map((x) => [x.report.turn, x.report.retrievedIds, x.report.results])).toEqual(
        scored.map((x) => [x.turn, x.retrievedIds, x.results]),
      );
      const text = await runCli(["trace", "conv-freeze", "--traces", file, ...base]);
      expect(text.exitCode, text.stderr).toBe(0);
      expect(text.stdout.match(/^retrieval: recorded retriever calls: KeywordRetriever /gmu)).toHaveLength(2);
      expect(text.stdout).toMatch(
        /^ {2}HIT {2}card-freeze: 1st after #1 KeywordRetriever \(no child runs\), retrieved at rank 1 of the top-3$/mu,
      );
    });

    it(`${name}: an unscored earlier step is shown with the gold's rank in it; each step's call is #1`, async () => {
      const rec = path.join(dir, `two-steps-${file === OTLP ? "otlp" : "langsmith"}.jsonl`);
      await writeFile(rec, withSecondStep());
      const r = await runCli(["trace", "conv-freeze", "--turn", "0", "--traces", rec, ...base]);
      expect(r.exitCode, r.stderr).toBe(0);
      const out = r.stdout;
      expect(out).toContain("retrieval: recorded retriever calls: 2 top-level calls in the turn, in 2 steps");
      const step1 = out.indexOf("  step 1 of 2, not scored (1 call):\n");
      const step2 = out.indexOf("  step 2 of 2, scored (1 call):\n");
      expect(step1, out).toBeGreaterThan(0);
      expect(step2).toBeGreaterThan(step1);
      // Step 1, the recorded call: the gold 1st. Step 2, the copy that is scored: the gold 3rd.
      expect(out.slice(step1, step2)).toMatch(
        / {4}#1 KeywordRetriever \(3 cards\):\n {8}1 {2}card-freeze {3}<- gold\n/u,
      );
      expect(out.slice(step2)).toMatch(
        / {4}#1 KeywordRetriever \(3 cards\):\n.*\n.*\n {8}3 {2}card-freeze {3}<- gold\n/u,
      );
      expect(out).toMatch(
        /^ {2}HIT {2}card-freeze: 3rd after #1 KeywordRetriever \(no child runs\), retrieved at rank 3 of the top-3$/mu,
      );
      // The scores are eval --traces's of the same recording (the last step scored).
      const scored = (await evalTurns(rec)).find((t) => t.turn === 0)!;
      expect(scored.retrievedIds).toEqual(["fees-abroad", "card-replace", "card-freeze"]);
      const ndcg = scored.results.find((x) => x.key === "retrieval_ndcg_at_k")!.score;
      expect(ndcg).toBeCloseTo(0.5, 12); // 1/log2(4)
      expect(out).toMatch(/^metrics: hit=1 recall=1 ndcg=0\.50 /mu);
    });
  }

  it("reads the project file's traces: `retrace trace CASE` with no flags", async () => {
    const project = path.join(dir, "project");
    await import("node:fs/promises").then((fs) => fs.mkdir(project, { recursive: true }));
    await writeFile(
      path.join(project, "retrace.config.json"),
      JSON.stringify({ traces: OTLP, catalog: CATALOG, cases: CASES, k: 3 }),
    );
    const r = await runCli(["trace", "conv-freeze", "--turn", "1"], { cwd: project });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^=== conv-freeze turn 1 of 2 /mu);
    expect(r.stdout).toContain("retrieval: recorded retriever calls: KeywordRetriever");
  });

  it("a case turn the recording does not give: --turn is exit 2 naming it; without --turn it is listed", async () => {
    const cases = path.join(dir, "cases-extra-turn.jsonl");
    const lines = readFileSync(CASES, "utf8").split("\n").filter(Boolean);
    const freeze = JSON.parse(lines[0]!) as { id: string; turns: unknown[] };
    expect(freeze.id).toBe("conv-freeze");
    freeze.turns.push({ user: "and can I unfreeze it later?", must_cite_one_of: ["card-freeze"], expect: "answer" });
    await writeFile(cases, [JSON.stringify(freeze), ...lines.slice(1)].join("\n") + "\n");
    const args = ["trace", "conv-freeze", "--traces", OTLP, "--catalog", CATALOG, "--cases", cases];
    const one = await runCli([...args, "--turn", "2"]);
    expect(one.exitCode).toBe(2);
    expect(one.stderr).toMatch(/case conv-freeze turn 2 is not in the recording.*gives: 0, 1/u);
    expect(one.stdout).toBe("");
    const all = await runCli(args);
    expect(all.exitCode, all.stderr).toBe(0);
    expect(all.stdout.match(/^=== conv-freeze turn \d of 3 /gmu)).toHaveLength(2);
    expect(all.stdout).toMatch(
      /^not in the recording \(or recorded with other user text; not traced\): turn 2 of 3$/mu,
    );
  });

  it("options that run a graph or retrace's own retriever are refused with --traces; --traces-format without --traces too", async () => {
    for (const extra of [
      ["--counterfactual", "on"],
      ["--store", "memory"],
      ["--graph", "agent.mjs"],
    ]) {
      const r = await runCli(["trace", "conv-freeze", "--traces", OTLP, ...base, ...extra]);
      expect(r.exitCode, `${extra.join(" ")}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(/with --traces/u);
    }
    const r = await runCli(["trace", "conv-freeze", "--traces-format", "otlp"]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/without --traces/u);
  });
});
