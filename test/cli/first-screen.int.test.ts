/**
 * A first screen a person reads (issue 50): a default `eval` prints at most
 * SCREEN_LINES lines before its `Next:` lines, counted as a 100-column
 * terminal DISPLAYS them — the report on stdout as retrace wraps it for a
 * 100-column terminal (RETRACE_WIDTH=100, what `--width`/a terminal's width
 * gives), and each stderr line before `Next:` as the terminal wraps it
 * (ceil(columns / 100), columns by string-width), progress lines left out (on
 * a terminal they are one bar rewritten in place, src/cli/progress.ts).
 * Counted for retrace's own graph on the shipped KB (417 turns, three
 * locales, two kinds), a graph of your own (`--graph`) and recorded traces
 * (`--traces`). `--verbose` prints every table (the position table, the
 * split deltas, every missed turn with its gold and top-k).
 */
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import stringWidth from "string-width";
import { describe, expect, it } from "vitest";
import { SCREEN_LINES } from "../../src/eval/report/render/table.js";
import { tempDir } from "../helpers/chroma.js";
import { ROOT, runCli, type CliResult } from "../helpers/cli.js";
import { MINI_KB, SHIPPED_KB } from "../helpers/fixtures.js";

/** The terminal's width the screen is counted at. */
const COLUMNS = 100;

/** The rows one line takes in a COLUMNS-wide terminal (an empty line takes one). */
const rows = (line: string) => Math.max(1, Math.ceil(stringWidth(line) / COLUMNS));

/** The rows a COLUMNS-wide terminal shows before the Next: block: stdout, and stderr up to "Next:" without progress lines. */
function screenLines(r: CliResult): number {
  const err = r.stderr.split("\n");
  const next = err.findIndex((l) => l.startsWith("Next: "));
  expect(next, r.stderr).toBeGreaterThanOrEqual(0);
  const before = err.slice(0, next).filter((l) => !/^(eval|ingest): \d+\/\d+ /.test(l));
  const out = r.stdout.trimEnd().split("\n");
  // retrace wraps stdout to the width it is given: no line of it is wider.
  expect(out.filter((l) => stringWidth(l) > COLUMNS)).toEqual([]);
  return [...out, ...before].reduce((n, l) => n + rows(l), 0);
}

/** A run as a COLUMNS-wide terminal would get it. */
const atWidth = { RETRACE_WIDTH: String(COLUMNS), COLUMNS: String(COLUMNS) };

const TRACES = path.join(ROOT, "test", "fixtures", "traces");
const SOURCES: [string, string[], Record<string, string>][] = [
  ["retrace's own graph on the shipped KB", ["eval", "--kb", SHIPPED_KB, "--store", "memory"], {}],
  [
    "a graph of your own (--graph)",
    ["eval", "--graph", path.join(ROOT, "test", "fixtures", "graphs", "kb-agent.mjs"), "--kb", MINI_KB],
    { KB_AGENT_KB: MINI_KB },
  ],
  [
    "recorded traces (--traces)",
    [
      "eval",
      "--traces",
      path.join(TRACES, "openinference.otlp.jsonl"),
      "--catalog",
      path.join(TRACES, "catalog.tsv"),
      "--cases",
      path.join(TRACES, "cases.jsonl"),
      "--gate",
      "max-errors=1",
    ],
    {},
  ],
];

describe(`a default run shows at most ${SCREEN_LINES} lines before its Next: lines in a ${COLUMNS}-column terminal`, () => {
  for (const [name, args, env] of SOURCES)
    it(
      name,
      async () => {
        const r = await runCli(args, { env: { ...env, ...atWidth }, timeoutMs: 300_000 });
        expect(r.exitCode, r.stderr).toBe(0);
        expect(screenLines(r), r.stdout).toBeLessThanOrEqual(SCREEN_LINES);
        expect(r.stdout).toMatch(/^gate: PASS/m);
        const verbose = await runCli([...args, "--verbose"], { env, timeoutMs: 300_000 });
        expect(verbose.exitCode, verbose.stderr).toBe(0);
        // Everything left out is in --verbose: the full tables are longer and carry what the screen does not.
        expect(verbose.stdout.split("\n").length).toBeGreaterThan(r.stdout.split("\n").length);
        expect(verbose.stdout).toMatch(/^note: intervals: /m);
      },
      600_000,
    );

  it("one locale and one kind: no kind or locale columns (they would repeat the run's)", async () => {
    const { dir, cleanup } = await tempDir("first-screen");
    const cases = path.join(dir, "cases.jsonl");
    const all = (await readFile(path.join(SHIPPED_KB, "eval", "cases.jsonl"), "utf8"))
      .split("\n")
      .filter((l) => l !== "");
    const one = all.filter((l) => {
      const c = JSON.parse(l) as { locale: string; kind: string };
      return c.locale === "pt-BR" && c.kind === "golden";
    });
    expect(one.length).toBeGreaterThan(10);
    await writeFile(cases, one.join("\n") + "\n");
    const r = await runCli(["eval", "--kb", SHIPPED_KB, "--cases", cases, "--store", "memory"], {
      timeoutMs: 300_000,
    });
    await cleanup();
    expect(r.exitCode, r.stderr).toBe(0);
    const header = r.stdout.split("\n").find((l) => l.startsWith("metric "));
    expect(header?.trim().split(/\s{2,}/)).toEqual(["metric", "all", "n", "chance"]);
    // The full table shows the same mean three times (all, golden, pt-BR); the screen once.
    const hit = r.stdout.split("\n").find((l) => l.startsWith("hit@5"))!;
    expect(hit.match(/\d\.\d{3}/g)).toHaveLength(4); // mean, the interval's two ends, chance
  }, 300_000);
});
