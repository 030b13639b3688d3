/**
 * Terminal output fits the terminal (docs/gates-and-exit-codes.md, "Terminal
 * width"), through the real bin: the shipped KB's full sweep (store `memory`:
 * no Chroma to start) rendered at 80 and 120 columns; the embedder line is one
 * short line (the model search path only with --verbose); a misspelt command
 * gets "did you mean". test/helpers/cli.ts runs every other CLI test with
 * RETRACE_WIDTH=0; here the width is set on each command line.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveWidth } from "../../src/cli/io.js";
import { commandWord, COMMANDS, suggestCommands } from "../../src/cli/main.js";
import type { Aggregate, Report } from "../../src/eval/report/types.js";
import { tempDir } from "../helpers/chroma.js";
import { runCli } from "../helpers/cli.js";

let dir: string;
let cleanup: () => Promise<void>;
/** No model weights anywhere retrace looks: the default (LSA) embedder on every machine. */
let env: Record<string, string>;

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir("terminal-output"));
  env = { RETRACE_MODELS_DIR: path.join(dir, "no-models") };
});
afterAll(async () => cleanup());

const lengthOf = (line: string) => [...line].length;
const squash = (s: string) => s.replace(/\s+/g, "");

/** Every group of the report: `all`, each kind, each locale, each part (with the table's labels). */
function groupsOf(report: Report): [string, Record<string, Aggregate>][] {
  const part = report.splits.part ?? {};
  return [
    ["all", report.aggregates],
    ...Object.entries(report.splits.kind),
    ...Object.entries(report.splits.locale),
    ...(part.tune !== undefined ? [["tune (fitted on)", part.tune] as [string, Record<string, Aggregate>]] : []),
    ...(part.holdout !== undefined ? [["holdout", part.holdout] as [string, Record<string, Aggregate>]] : []),
  ];
}

describe("the eval summary at 80 and 120 columns", () => {
  it("no line is wider; every metric row of every group keeps its figures; the same width gives the same bytes", async () => {
    const json = path.join(dir, "report.json");
    // --verbose: every table (the first screen without it is tested below).
    const run = await runCli(["eval", "--store", "memory", "--out", `json:${json}`, "--width", "80", "--verbose"], {
      env,
      timeoutMs: 300_000,
    });
    expect(run.exitCode).toBe(0);
    const report = JSON.parse(await readFile(json, "utf8")) as Report;
    const unlimited = await runCli(["report", json, "--table", "--width", "0"]);
    expect(unlimited.exitCode).toBe(0);
    expect(Math.max(...unlimited.stdout.split("\n").map(lengthOf))).toBeGreaterThan(200); // what would not fit
    for (const width of [80, 120]) {
      const r = await runCli(["report", json, "--table", "--width", String(width)]);
      expect(r.exitCode).toBe(0);
      const text = r.stdout;
      // The sweep printed the same bytes as rendering its saved report at that width.
      if (width === 80) expect(text).toBe(run.stdout.replace(/^note: not computed: .*\n( {2}.*\n)*/m, ""));
      expect(text).toBe((await runCli(["report", json, "--table"], { env: { RETRACE_WIDTH: String(width) } })).stdout);
      const lines = text.split("\n");
      for (const l of lines) expect(lengthOf(l), `${width}: ${l}`).toBeLessThanOrEqual(width);
      // Every group's block holds every key of the report, each with its mean, interval and n.
      for (const [name, group] of groupsOf(report)) {
        const start = lines.findIndex((l) => l.startsWith(`metric [${name}]`));
        expect(start, `block ${name}`).toBeGreaterThanOrEqual(0);
        const end = lines.indexOf("", start);
        const block = lines.slice(start + 1, end);
        expect(block.filter((l) => /^\S/.test(l))).toHaveLength(
          Object.keys(report.aggregates).length + report.vacuous.length,
        );
        for (const a of Object.values(group)) {
          const ci = a.ci95 === undefined ? "(no CI)" : `[${a.ci95[0].toFixed(3)}, ${a.ci95[1].toFixed(3)}]`;
          expect(
            block.some((l) =>
              new RegExp(`\\s${a.mean.toFixed(3)}\\s+${ci.replace(/[[\]()]/g, "\\$&")}\\s+${a.n}\\b`).test(l),
            ),
            `${name}: ${a.mean.toFixed(3)} ${ci} n=${a.n}`,
          ).toBe(true);
        }
        expect(block.some((l) => /^groundedness( \(held-out\))?\s+not run: no judge configured$/.test(l))).toBe(true);
      }
      // Below the tables (deltas, warnings, missed turns, notes, gate) wrapping only moved whitespace.
      const tail = (s: string) => s.slice(s.search(/^split deltas/m));
      expect(squash(tail(text))).toBe(squash(tail(unlimited.stdout)));
      expect(text).toContain("gate: PASS (no floor or baseline check was set)");
    }
  }, 300_000);

  it("the embedder line on stderr is one short line pointing to a real model; --verbose adds how to name one", async () => {
    const r = await runCli(["eval", "--store", "memory", "--case", "en-freeze-001"], { env });
    expect(r.exitCode).toBe(0);
    const line = r.stderr.split("\n").filter((l) => l.startsWith("embedder:"));
    expect(line).toHaveLength(1);
    expect(line[0]).toMatch(
      /^embedder: lsa-128-[0-9a-f]{12}-v1 \(default; real model: npm run models, docs\/models\.md\)$/,
    );
    expect(lengthOf(line[0]!)).toBeLessThanOrEqual(120);
    expect(r.stderr).not.toContain(path.join(dir, "no-models"));
    const verbose = await runCli(["eval", "--store", "memory", "--case", "en-freeze-001", "--verbose"], { env });
    expect(verbose.exitCode).toBe(0);
    expect(verbose.stderr).toContain(`"retrieval":{"embedder":"Xenova/bge-small-en-v1.5"}`);
    // Same result; only the wall-clock figures differ (the header's duration and the setup line), and --verbose adds the
    // one line naming the measures not computed (docs/metrics.md, "Incomplete judgments in reports").
    const clockless = (s: string) =>
      s
        .replace(/ {2}\d+\.\d s\n/, "  T\n")
        .replace(/^setup: .*$/m, "setup: T")
        .replace(/^note: not computed: .*\n/m, "");
    // The first screen without --verbose, every table with it: the same figures (the metric rows' means).
    expect(r.stdout).not.toMatch(/^setup: /m);
    for (const mean of r.stdout.match(/^hit@5\s+(\d\.\d{3})/m)!.slice(1))
      expect(clockless(verbose.stdout)).toContain(mean);
    // a fit names its chance baseline's part; a loaded state has none
    expect(verbose.stdout).toMatch(
      /^setup: LSA (fit \d+\.\d+ s \(chance baseline \d+\.\d+ s\)|state loaded \d+\.\d+ s); no store write \(memory\)$/m,
    );
  }, 120_000);

  it("--width and RETRACE_WIDTH out of range are usage errors (exit 2) before anything runs", async () => {
    const r = await runCli(["check", "--width", "30"]);
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(
      'Expected `--width` to be 0 (no limit) or an integer from 40 to 1000 (columns), got "30"',
    );
    const e = await runCli(["check"], { env: { RETRACE_WIDTH: "wide" } });
    expect(e.exitCode).toBe(2);
    expect(e.stdout).toBe("");
    expect(e.stderr).toContain(
      'Expected `RETRACE_WIDTH` to be 0 (no limit) or an integer from 40 to 1000 (columns), got "wide"',
    );
    // Before the command's name too, and then its value is not taken for the command.
    const before = await runCli(["--width", "60", "check"]);
    expect(before.exitCode).toBe(0);
    for (const l of before.stdout.split("\n")) expect(lengthOf(l)).toBeLessThanOrEqual(60);
  }, 120_000);
});

describe("output piped into a CI log (stdout not a terminal, no --width or RETRACE_WIDTH)", () => {
  it("`retrace check | cat` and `retrace eval | cat`: no table row broken in two", async () => {
    const env = { RETRACE_WIDTH: undefined };
    const check = await runCli(["check"], { env });
    expect(check.exitCode, check.stderr).toBe(0);
    const header = check.stdout.split("\n").find((l) => l.startsWith("locale "))!;
    expect(header.split(/\s{2,}/)).toEqual([
      "locale",
      "kind",
      "cases",
      "turns",
      "gold-bearing",
      "no-match",
      "refuse",
      "multi-turn",
      "disjunctive",
    ]);
    const rows = check.stdout.split("\n").filter((l) => /^(en|es-419|pt-BR|all)\s+(golden|adversarial|all)\s/.test(l));
    expect(rows.length).toBe(12);
    for (const row of rows) expect(row.trim().split(/\s{2,}/), row).toHaveLength(9);
    // The first screen: one table, a row per metric with the run's mean, interval, n and chance, then a mean per kind and locale.
    const screen = await runCli(["eval", "--store", "memory"], { env });
    expect(screen.exitCode, screen.stderr).toBe(0);
    const screenRows = screen.stdout.split("\n").filter((l) => /^(hit|nDCG|MRR|P)@5 /.test(l));
    expect(screenRows).toHaveLength(4);
    for (const row of screenRows)
      expect(row, row).toMatch(/^\S+@5\s+\d\.\d{3} \[\d\.\d{3}, \d\.\d{3}\]\s+\d+\s+\d\.\d{3}(\s+\d\.\d{3}){5}$/);
    const ev = await runCli(["eval", "--store", "memory", "--verbose"], { env });
    expect(ev.exitCode, ev.stderr).toBe(0);
    const metricRows = ev.stdout.split("\n").filter((l) => /^(hit|nDCG|MRR|P)@5 /.test(l));
    expect(metricRows.length).toBeGreaterThan(8);
    // Each row holds every column of its table: an interval, n, cases and chance per group, never continued on the next line.
    for (const row of metricRows)
      expect(row, row).toMatch(
        /^\S+@5\s+(\d\.\d{3} (\[\d\.\d{3}, \d\.\d{3}\]|\(no CI\)) n=\d+ \(\d+ cases?\)( chance \d\.\d{3})?\s*)+$/,
      );
    expect(ev.stdout.split("\n").some((l) => /^\s+\d\.\d{3} \[/.test(l))).toBe(false);
    // Turn positions are named as the caseId#N keys number turns, from #0 (the funnel and attribution tables too).
    expect(ev.stdout).toMatch(/^metric \(position\)\s+turn #0\s+turn #1\s+turn #2\s+turn #3\+$/m);
  }, 120_000);
});

describe("the width", () => {
  it("--width, else RETRACE_WIDTH, else the terminal's columns (at least 40), else no limit (a pipe, a file, a CI log)", () => {
    expect(resolveWidth(100, { RETRACE_WIDTH: "60" }, { isTTY: true, columns: 200 })).toBe(100);
    expect(resolveWidth(undefined, { RETRACE_WIDTH: "60" }, { isTTY: true, columns: 200 })).toBe(60);
    expect(resolveWidth(undefined, { RETRACE_WIDTH: "0" }, {})).toBe(0);
    expect(resolveWidth(undefined, {}, { isTTY: true, columns: 132 })).toBe(132);
    expect(resolveWidth(undefined, {}, { isTTY: true, columns: 20 })).toBe(40);
    expect(resolveWidth(undefined, {}, { isTTY: false, columns: 132 })).toBe(0);
    expect(resolveWidth(undefined, { RETRACE_WIDTH: "" }, {})).toBe(0);
    expect(() => resolveWidth(undefined, { RETRACE_WIDTH: "39" }, {})).toThrow(/RETRACE_WIDTH/);
  });

  it("the command's name is found after a global option's value", () => {
    expect(commandWord(["--width", "100", "eval", "--kb", "kb"])).toBe("eval");
    expect(commandWord(["--width=100", "eval"])).toBe("eval");
    expect(commandWord(["--verbose", "trace", "x"])).toBe("trace");
    expect(commandWord(["--help"])).toBeUndefined();
  });
});

describe("a misspelt command", () => {
  it("retrace evaluate: exit 2, did you mean eval?", async () => {
    const r = await runCli(["evaluate"]);
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr.split("\n")[0]).toBe("error: unknown command 'evaluate' (did you mean eval?)");
    const far = await runCli(["frobnicate"]);
    expect(far.exitCode).toBe(2);
    expect(far.stderr.split("\n")[0]).toBe("error: unknown command 'frobnicate'");
  }, 120_000);

  it("suggests the closest commands: slips, longer forms and prefixes", () => {
    const names = Object.keys(COMMANDS);
    expect(suggestCommands("evaluate", names)).toEqual(["eval"]);
    expect(suggestCommands("evl", names)).toEqual(["eval"]);
    expect(suggestCommands("comparison", names)).toEqual(["compare"]);
    expect(suggestCommands("ingestion", names)).toEqual(["ingest"]);
    expect(suggestCommands("tuen", names)).toEqual(["tune"]);
    expect(suggestCommands("scor", names)).toEqual(["score"]);
    expect(suggestCommands("Eval", names)).toEqual(["eval"]);
    expect(suggestCommands("frobnicate", names)).toEqual([]);
    expect(suggestCommands("x", names)).toEqual([]);
  });
});
