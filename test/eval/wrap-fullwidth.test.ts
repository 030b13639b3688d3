/**
 * Full-width text in the terminal (src/eval/report/render/wrap.ts, on
 * string-width and wrap-ansi): a Japanese character takes two columns, so a
 * Japanese-locale table aligns on its columns as a terminal (or `cat` of a
 * piped run) shows it, and a wrapped line is no wider than the width in
 * columns. Counting code points (the hand-written wrapper before) put the
 * second column of a Japanese group one column early per character and let
 * wrapped Japanese lines run past the width.
 */
import stringWidth from "string-width";
import { describe, expect, it } from "vitest";
import { allEvaluators } from "../../src/eval/measures/evaluators.js";
import { buildReport } from "../../src/eval/report/aggregate.js";
import { buildComparison, runSideOf } from "../../src/eval/gate/compare.js";
import { renderTable } from "../../src/eval/report/render.js";
import { renderComparison } from "../../src/eval/report/render/compare-text.js";
import { fitText, padVisible, visibleLength, wrapLine } from "../../src/eval/report/render/wrap.js";
import { fixtureReport, K, runInfo, turnReports } from "./report-fixture.js";

/** The terminal column each character of `line` starts at. */
function columnOf(line: string, index: number): number {
  return stringWidth(line.slice(0, index));
}

describe("full-width characters count two columns", () => {
  it("visibleLength and padVisible count columns, not code points", () => {
    expect(visibleLength("請求")).toBe(4);
    expect(visibleLength("\x1b[31m返金\x1b[0m a")).toBe(6);
    expect(visibleLength("¿cuánto?")).toBe(8);
    expect(padVisible("請求", 6)).toBe("請求  ");
    expect(padVisible("abc", 6)).toBe("abc   ");
  });

  it("a wrapped Japanese line is no wider than the width, and loses nothing", () => {
    const line = "missed: 二重に請求されました 返金はいつ頃になりますか 注文番号は１２３４５です";
    for (const width of [12, 20, 31, 40]) {
      const lines = wrapLine(line, width);
      for (const l of lines) expect(stringWidth(l), `${width}: ${l}`).toBeLessThanOrEqual(width);
      expect(lines.join("").replace(/\s+/g, "")).toBe(line.replace(/\s+/g, ""));
    }
    // A word with no space, wider than a line: cut between characters, never through one.
    expect(wrapLine("id: 日本語のテキストです", 10)).toEqual(["id:", "  日本語の", "  テキスト", "  です"]);
    expect(fitText("日本語 日本語 日本語\n", 14)).toBe("日本語 日本語\n  日本語\n");
  });
});

describe("a Japanese-locale report table", () => {
  const rows = [
    { caseId: "請求-1", turn: 0, user: "二重に請求されました", gold: ["a"], retrievedIds: ["a", "b", "c"] },
    { caseId: "請求-1", turn: 1, user: "返金はいつですか", gold: ["b"], retrievedIds: ["c", "d", "e"] },
    { caseId: "配送-2", turn: 0, user: "荷物が届きません", gold: ["c"], retrievedIds: ["d", "c", "e"] },
    { caseId: "配送-2", turn: 1, user: "追跡番号を教えて", gold: ["d"], retrievedIds: ["f", "g", "h"] },
  ].map((r) => ({
    ...r,
    locale: "ja",
    kind: "golden" as const,
    expect: "answer" as const,
    citedIds: r.gold,
    refused: false,
  }));

  async function jaReport() {
    const evaluators = allEvaluators({ k: K });
    const turns = await turnReports(rows, evaluators);
    // A split whose groups are named in Japanese (the topic of each case): its table has Japanese column heads.
    const topic = { name: "topic", groupOf: (caseId: string) => (caseId.startsWith("請求") ? "請求の問題" : "配送") };
    return buildReport({ run: runInfo(), turns, evaluators, extraSplits: [topic] });
  }

  it("piped (no width): every row of the Japanese-headed table has its columns at the header's columns", async () => {
    const text = renderTable(await jaReport(), { color: false });
    const lines = text.split("\n");
    const head = lines.findIndex((l) => l.startsWith("metric (topic)"));
    expect(head).toBeGreaterThan(-1);
    const header = lines[head]!;
    // The columns start where the header's group names start, in terminal columns.
    const starts = ["請求の問題", "配送"].map((g) => columnOf(header, header.indexOf(g)));
    const block = lines.slice(head + 1, lines.indexOf("", head));
    expect(block.length).toBeGreaterThan(3);
    for (const row of block) {
      // Each figure cell starts with a mean (0.000) or a text cell ("—", "not measured").
      const cells = [...row.matchAll(/(?<=\s{2})(\d\.\d{3}|—|not )/g)].map((m) => columnOf(row, m.index));
      expect(cells.slice(0, 2), row).toEqual(starts);
    }
  });

  it("at a width, every line of the report fits it in terminal columns", async () => {
    const report = await jaReport();
    for (const width of [40, 60, 80]) {
      const text = renderTable(report, { color: false, width });
      for (const l of text.split("\n")) expect(stringWidth(l), `${width}: ${l}`).toBeLessThanOrEqual(width);
      expect(text.replace(/\s+/g, "")).toContain("追跡番号を教えて"); // the missed turn, wrapped or not
    }
  });
});

describe("retrace compare's table with a Japanese metric name", () => {
  it("piped: every right-aligned column ends at its header's column, in terminal columns", async () => {
    const r = await fixtureReport();
    const c = buildComparison(runSideOf("a.json", r), runSideOf("b.json", r));
    // A graph's own evaluator named in Japanese (its key is its label): the label column is full-width.
    const named = { ...c, comparisons: c.comparisons.map((x, i) => (i === 1 ? { ...x, key: "根拠性スコア" } : x)) };
    const lines = renderComparison(named).split("\n");
    const head = lines.findIndex((l) => l.startsWith("metric"));
    const block = lines.slice(head, lines.indexOf("", head));
    expect(block.some((l) => l.startsWith("根拠性スコア"))).toBe(true);
    // Cells are separated by two or more spaces; each cell's last column.
    const ends = (l: string) => [...l.matchAll(/\S+(?: \S+)*/g)].map((m) => columnOf(l, m.index + m[0].length));
    const header = ends(block[0]!);
    for (const row of block.slice(1)) expect(ends(row).slice(1, 9), row).toEqual(header.slice(1, 9));
  });
});
