/**
 * A large OTLP/JSON Lines recording read by two threads (src/eval/traces/read.ts
 * `readOtlpInTwo`; docs/recorded-traces.md, "Scale"): what it reads is what
 * one thread reading line by line reads — the same turns, calls, documents,
 * conversations and `file:line`s — and a recording it cannot read in two
 * (a line that is not JSON, a span read twice across the cut, a LangSmith
 * export) is read on one thread, with that thread's error. The export is
 * the recorded fixture multiplied with fresh ids (bench/traces.bench.ts
 * `generate`), the worker run from the TypeScript source through tsx.
 */
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generate } from "../../bench/traces.bench.js";
import { readTraces } from "../../src/eval/traces/read.js";
import { OtlpReader } from "../../src/eval/traces/otlp.js";
import { DataValidationError } from "../../src/errors.js";

let dir: string;
let traces: string;
const ONE = { splitMinBytes: Number.POSITIVE_INFINITY };
const TWO = { splitMinBytes: 0 };

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), "retrace-read-threads-"));
  traces = (await generate(dir, 25)).traces;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The error a read throws, as text (its message and issues). */
async function errorOf(file: string, opts: { splitMinBytes: number; partBatch?: number }): Promise<string> {
  try {
    await readTraces(file, opts);
  } catch (e) {
    expect(e).toBeInstanceOf(DataValidationError);
    return JSON.stringify({ message: (e as Error).message, issues: (e as DataValidationError).issues });
  }
  throw new Error(`${file} was read without an error`);
}

describe("reading an OTLP/JSON Lines export in two parts", () => {
  it("gives exactly what one thread gives, and says it used two", async () => {
    const one = await readTraces(traces, ONE);
    const two = await readTraces(traces, TWO);
    expect(one.threads).toBe(1);
    expect(two.threads).toBe(2);
    expect({ ...two, threads: 1 }).toEqual(one);
    // Not vacuous: 25 copies of the fixture's 8 turns, with calls, documents and lines from both halves.
    const turns = two.conversations.flatMap((c) => c.turns);
    expect(turns).toHaveLength(200);
    expect(turns.filter((t) => t.runs.some((r) => (r.documents ?? []).length > 0)).length).toBeGreaterThan(100);
    const lines = readFileSync(traces, "utf8").split("\n").filter(Boolean).length;
    expect(turns.some((t) => Number(t.where.split(":").pop()) > lines / 2 + 1)).toBe(true);
  });

  it("the second part posted in many small batches gives the same; a bad line after some batches falls back to one thread", async () => {
    const one = await readTraces(traces, ONE);
    const batched = await readTraces(traces, { ...TWO, partBatch: 3 });
    expect(batched.threads).toBe(2);
    expect({ ...batched, threads: 1 }).toEqual(one);
    const bad = path.join(dir, "bad-late.jsonl");
    writeFileSync(bad, readFileSync(traces));
    appendFileSync(bad, '{"resourceSpans": [\n');
    expect(await errorOf(bad, { ...TWO, partBatch: 3 })).toBe(await errorOf(bad, ONE));
  });

  it("a line that is not JSON in the second half: one thread reads it and names that line", async () => {
    const bad = path.join(dir, "bad.jsonl");
    writeFileSync(bad, readFileSync(traces));
    appendFileSync(bad, '{"resourceSpans": [\n');
    const expected = await errorOf(bad, ONE);
    expect(expected).toContain("a truncated export?");
    expect(await errorOf(bad, TWO)).toBe(expected);
  });

  it("a span exported twice, once in each half: the same error as one thread's, naming both lines", async () => {
    const twice = path.join(dir, "twice.jsonl");
    const lines = readFileSync(traces, "utf8").split("\n").filter(Boolean);
    writeFileSync(twice, [...lines, lines[0]].join("\n") + "\n");
    const expected = await errorOf(twice, ONE);
    expect(expected).toContain("appears twice");
    expect(await errorOf(twice, TWO)).toBe(expected);
  });

  it("a LangSmith export is read on one thread, as before", async () => {
    const ls = path.join(import.meta.dirname, "..", "fixtures", "traces", "langsmith.runs.jsonl");
    const two = await readTraces(ls, TWO);
    expect(two.format).toBe("langsmith");
    expect(two.threads).toBe(1);
    expect(two).toEqual(await readTraces(ls, ONE));
  });
});

describe("a large recording's assembly returns to the event loop (an interrupt is heard mid-assembly)", () => {
  it("turnsInSteps over 40,000 spans lets the event loop run between steps and gives what turns() gives", async () => {
    const big = (await generate(dir, 1000)).traces; // 40,000 spans: a pause after 32,768
    const [stepped, whole] = [new OtlpReader(), new OtlpReader()];
    readFileSync(big, "utf8")
      .split("\n")
      .forEach((l, i) => {
        if (l === "") return;
        for (const reader of [stepped, whole])
          reader.add({ value: JSON.parse(l) as Record<string, unknown>, file: big, line: i + 1 });
      });
    // The reader is filled: only a pause of the assembly lets these callbacks run before it resolves.
    let ticks = 0;
    let assembling = true;
    const tick = () => {
      ticks++;
      if (assembling) setImmediate(tick);
    };
    setImmediate(tick);
    const turns = await stepped.turnsInSteps();
    assembling = false;
    expect(ticks).toBeGreaterThanOrEqual(1);
    expect(turns).toHaveLength(8_000);
    expect(JSON.stringify(turns)).toBe(JSON.stringify(whole.turns()));
  }, 120_000);
});
