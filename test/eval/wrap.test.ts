/**
 * Text that fits the terminal (src/eval/render/wrap.ts) and the report table
 * at a width (src/eval/render/table.ts): no line wider, nothing lost, the
 * same text for the same width.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { renderTable } from "../../src/eval/report/render.js";
import { fitText, visibleLength, wrapLine } from "../../src/eval/report/render/wrap.js";
import type { Aggregate } from "../../src/eval/report/types.js";
import { fixtureReport, storelessReport } from "./report-fixture.js";

const ANSI = /\x1b\[[0-9;]*m/g;
const codePoints = (s: string) => [...s.replace(ANSI, "")].length;
const squash = (s: string) => s.replace(ANSI, "").replace(/\s+/g, "");

function fmtAgg(a: Aggregate): string {
  const ci = a.ci95 === undefined ? "(no CI)" : `[${a.ci95[0].toFixed(3)}, ${a.ci95[1].toFixed(3)}]`;
  const cases = a.nCases === undefined ? "" : ` (${a.nCases} case${a.nCases === 1 ? "" : "s"})`;
  const chance = a.chance === undefined ? "" : ` chance ${a.chance.toFixed(3)}`;
  return `${a.mean.toFixed(3)} ${ci} n=${a.n}${cases}${chance}`;
}

describe("wrapLine / fitText", () => {
  it("wraps at spaces with a hanging indent two deeper than the line's own", () => {
    expect(wrapLine("note: one two three four five six", 16)).toEqual(["note: one two", "  three four", "  five six"]);
    expect(wrapLine("    gold=[a, b] top5=[c, d, e]", 20)).toEqual(["    gold=[a, b]", "      top5=[c, d, e]"]);
    expect(wrapLine("    gold=[a, b] top5=[c, d, e]", 18)).toEqual([
      "    gold=[a, b]",
      "      top5=[c, d,",
      "      e]",
    ]);
    expect(wrapLine("short", 10)).toEqual(["short"]);
    expect(wrapLine("x y", 10, 4)).toEqual(["x y"]);
  });

  it("splits a word longer than the line, and counts code points, not colour codes", () => {
    expect(wrapLine("id: abcdefghijklmnop", 8)).toEqual(["id:", "  abcdef", "  ghijkl", "  mnop"]);
    expect(wrapLine("\x1b[1mbold\x1b[0m text here", 9)).toEqual(["\x1b[1mbold\x1b[0m text", "  here"]);
    expect(visibleLength("\x1b[33m¿cuánto?\x1b[0m")).toBe(8);
  });

  it("fitText: every line within the width, only whitespace changed (property)", () => {
    const word = fc.stringMatching(/^[a-zé¿?—\-[\],#=.]{1,30}$/);
    const line = fc
      .tuple(fc.nat({ max: 6 }), fc.array(word, { minLength: 1, maxLength: 30 }))
      .map(([lead, ws]) => " ".repeat(lead) + ws.join(" "));
    fc.assert(
      fc.property(fc.array(line, { minLength: 1, maxLength: 8 }), fc.integer({ min: 10, max: 120 }), (lines, width) => {
        const text = `${lines.join("\n")}\n`;
        const fitted = fitText(text, width);
        for (const l of fitted.split("\n")) expect(codePoints(l)).toBeLessThanOrEqual(width);
        expect(squash(fitted)).toBe(squash(text));
        expect(fitted.endsWith("\n")).toBe(true);
        expect(fitText(text, width)).toBe(fitted);
      }),
      { numRuns: 300 },
    );
  });

  it("width 0 (no limit) leaves the text as it is", () => {
    const t = `${"word ".repeat(100)}\n`;
    expect(fitText(t, 0)).toBe(t);
    expect(fitText(t, Number.POSITIVE_INFINITY)).toBe(t);
  });
});

describe("renderTable at a width", () => {
  it("no width: the wide tables as before; a wide width that fits: the same text", async () => {
    const r = await fixtureReport();
    const wide = renderTable(r, { color: false });
    expect(renderTable(r, { color: false, width: 0 })).toBe(wide);
    const longest = Math.max(...wide.split("\n").map(codePoints));
    expect(renderTable(r, { color: false, width: longest })).toBe(wide);
  });

  it("at 80 and 120 columns every line fits, every key of every group keeps its figures, and the output is stable", async () => {
    for (const r of [await fixtureReport(), await storelessReport()]) {
      const wide = renderTable(r, { color: false });
      for (const width of [40, 80, 120]) {
        const text = renderTable(r, { color: false, width });
        for (const l of text.split("\n")) expect(codePoints(l), `${width}: ${l}`).toBeLessThanOrEqual(width);
        expect(renderTable(r, { color: false, width })).toBe(text); // deterministic
        // Coloured, the same text once the codes are removed.
        expect(renderTable(r, { color: true, width }).replace(ANSI, "")).toBe(text);
        // Below the tables (deltas, warnings, missed turns, notes, gate) only whitespace moved.
        const tail = (s: string) => s.slice(s.search(/^(split deltas|locale deltas|missed turns)/m));
        expect(squash(tail(text))).toBe(squash(tail(wide)));
        if (width < 80) continue;
        // Every group's block, and in it every key with its mean, interval and n.
        const groups: [string, Record<string, Aggregate>][] = [
          ["all", r.aggregates],
          ...Object.entries(r.splits.kind),
          ...Object.entries(r.splits.locale),
        ];
        for (const [name, group] of groups) {
          const start = text.indexOf(`\nmetric [${name}]`);
          if (start < 0) {
            // This split's table fits side by side: its rows as without a width.
            for (const a of Object.values(group)) expect(text).toContain(fmtAgg(a));
            continue;
          }
          const block = text.slice(start + 1).split("\n\n")[0]!;
          for (const a of Object.values(group)) {
            const ci = a.ci95 === undefined ? "(no CI)" : `[${a.ci95[0].toFixed(3)}, ${a.ci95[1].toFixed(3)}]`;
            expect(block).toContain(`${a.mean.toFixed(3)}  ${ci}`);
            expect(block).toMatch(new RegExp(`\\]\\s+${a.n}\\b|\\(no CI\\)\\s+${a.n}\\b`));
          }
          // A key not measured: its row says so (the text may wrap under itself, its start stays on the row).
          expect(block.split("\n").filter((l) => /^\S.*\s{2}(not measured|not run)/.test(l))).toHaveLength(
            r.vacuous.length,
          );
        }
      }
    }
  });
});
