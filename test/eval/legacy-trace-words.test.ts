/**
 * A `--traces` report written before it recorded its header words
 * (`run.graph.traces.label` / `recordsName`, added within report version 5;
 * docs/schema-versions.md) gets them on read from the historical three
 * formats, just after `format`, and renders the header it rendered then; a
 * report of another format without them is refused naming the fields.
 */
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { graphHeaderLines } from "../../src/eval/report/graph-report.js";
import { parseReport } from "../../src/eval/report/schemas.js";

/** test/fixtures/schema/report-v4-traces.json (an OTLP recording, written by retrace before version 5) as a version 5 report written before the words: `run.source` added, `embedder` null, as version 5 wrote it. */
async function v5WithoutWords(format: string): Promise<Record<string, unknown>> {
  const old = JSON.parse(
    await readFile(fileURLToPath(new URL("../fixtures/schema/report-v4-traces.json", import.meta.url)), "utf8"),
  ) as { run: Record<string, unknown> & { graph: { traces: Record<string, unknown> } } };
  const { embedder: _e, ...run } = old.run;
  const traces = { ...old.run.graph.traces, format };
  expect(traces).not.toHaveProperty("label");
  return {
    ...old,
    schemaVersion: 5,
    run: { ...run, source: "traces", embedder: null, graph: { ...old.run.graph, traces } },
  };
}

describe("a --traces report written before its header words", () => {
  for (const [format, label, recordsName] of [
    ["otlp", "OTLP/JSON", "spans"],
    ["langsmith", "LangSmith runs", "runs"],
    ["langfuse", "Langfuse", "traces and observations"],
  ] as const)
    it(`${format}: gets "${label}" / "${recordsName}" just after format, the rest as written`, async () => {
      const written = await v5WithoutWords(format);
      const r = parseReport(written, "r.json");
      const t = r.run.graph!.traces!;
      expect(Object.keys(t).slice(0, 4)).toEqual(["format", "label", "recordsName", "files"]);
      const { label: l, recordsName: n, ...rest } = t;
      expect([l, n]).toEqual([label, recordsName]);
      expect(rest).toStrictEqual((written.run as { graph: { traces: unknown } }).graph.traces);
      expect(graphHeaderLines(r).join("\n")).toContain(
        `recorded traces (${label}): 1 file, ${t.records} ${recordsName}, ${t.conversations} conversations,`,
      );
    });

  it("a report that has them is read as written (the same object)", async () => {
    const written = await v5WithoutWords("otlp");
    const words = { ...(written.run as { graph: { traces: object } }).graph.traces, label: "X", recordsName: "y" };
    const withWords = {
      ...written,
      run: { ...(written.run as object), graph: { ...(written.run as { graph: object }).graph, traces: words } },
    };
    expect(parseReport(withWords, "r.json")).toBe(withWords);
  });

  it("a format retrace never read without them is refused, naming the fields (exit 2)", async () => {
    const written = await v5WithoutWords("zipkin");
    expect(() => parseReport(written, "z.json")).toThrow(
      /z\.json: field `run\.graph\.traces\.label` missing required field/,
    );
  });
});
