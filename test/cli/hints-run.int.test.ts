/**
 * Every `Next:` line works when followed (issue 50, "Hints that work";
 * src/cli/next-steps.ts): for each source — retrace's own graph, a `.ts`
 * graph (`--graph`, loaded under tsx), recorded traces (`--traces` over a
 * catalog), a `label` page and a `label --merge` — the real command runs in a
 * temp folder, every printed `Next:` line is parsed and EXECUTED there as
 * printed, and each must exit 0. A line that opens a page in a browser is
 * checked by the page's file existing; a line that points to a doc, by the
 * doc existing. The lines keep the run's defining options, and write only
 * where the run writes (no stray `kb/eval/` beside a catalog).
 */
import { existsSync } from "node:fs";
import { cp, readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "../helpers/chroma.js";
import { ROOT, runCli, type CliResult } from "../helpers/cli.js";
import { MINI_KB } from "../helpers/fixtures.js";

let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir, cleanup } = await tempDir("hints-run")));
afterAll(async () => cleanup());

const env = { KB_AGENT_KB: MINI_KB, RETRACE_EXAMPLE_KB: MINI_KB };

/** One printed hint: what it is for, and the command after ": npx retrace " (null: a page to open or a doc to read). */
interface Hint {
  text: string;
  command: string[] | null;
}

/** The "Next:" block of a run's stderr, one hint a line. */
function hints(stderr: string): Hint[] {
  const lines = stderr.split("\n");
  const at = lines.findIndex((l) => l.startsWith("Next: "));
  if (at < 0) return [];
  const block = [lines[at]!.slice("Next: ".length)];
  for (const l of lines.slice(at + 1)) {
    if (!l.startsWith("      ")) break;
    block.push(l.trim());
  }
  return block.map((text) => {
    const i = text.indexOf(": npx retrace ");
    // The paths here need no quoting: a printed line splits at its spaces; a value in single quotes (inline JSON, no spaces) is one word.
    const words = (line: string) => (line.match(/'[^']*'|\S+/gu) ?? []).map((w) => w.replace(/^'(.*)'$/su, "$1"));
    return { text, command: i < 0 ? null : words(text.slice(i + ": npx ".length)) };
  });
}

const run = (args: string[], cwd: string) => runCli(args, { cwd, env, timeoutMs: 180_000 });

/**
 * Follows every hint of `r` in `cwd`: runs each command (exit 0 asserted),
 * checks each page and doc named exists. Returns each command's result.
 */
async function follow(r: CliResult, cwd: string): Promise<{ hint: Hint; result: CliResult | null }[]> {
  expect(r.exitCode, r.stderr).toBe(0);
  const hs = hints(r.stderr);
  expect(hs.length, r.stderr).toBeGreaterThan(0);
  const out: { hint: Hint; result: CliResult | null }[] = [];
  for (const hint of hs) {
    if (hint.command === null) {
      const page = /^open (\S+) in a browser/.exec(hint.text);
      const doc = /(docs\/[\w./-]+\.md)/.exec(hint.text);
      expect(page !== null || doc !== null, hint.text).toBe(true);
      if (page !== null) expect(existsSync(path.resolve(cwd, page[1]!)), hint.text).toBe(true);
      if (doc !== null) expect(existsSync(path.join(ROOT, doc[1]!)), hint.text).toBe(true);
      out.push({ hint, result: null });
      continue;
    }
    expect(hint.command[0]).toBe("retrace");
    const result = await run(hint.command.slice(1), cwd);
    expect(result.exitCode, `${hint.text}\n${result.stderr}`).toBe(0);
    out.push({ hint, result });
  }
  return out;
}

/** A fresh folder with a copy of the mini KB (`kb`) and `cases` (one line each). */
async function project(name: string, cases: unknown[]): Promise<string> {
  const d = path.join(dir, name);
  await cp(MINI_KB, path.join(d, "kb"), { recursive: true });
  await writeFile(path.join(d, "cases.jsonl"), cases.map((c) => JSON.stringify(c)).join("\n") + "\n");
  return d;
}

// "mortgages" are in no card: at k=1 the gold card is not retrieved, so each run has a missed turn to trace.
const MISS = {
  id: "en-miss-001",
  locale: "en",
  kind: "golden",
  turns: [
    { user: "how do I freeze my card?", must_cite_one_of: ["card-freeze"], expect: "answer" },
    { user: "do you offer mortgages?", must_cite_one_of: ["refund-timelines"], expect: "answer" },
  ],
};

describe("every Next: line exits 0 when run as printed", () => {
  it("retrace's own graph: trace, HTML, record the baseline, then the gate it suggests", async () => {
    const d = await project("own", [MISS]);
    const args = ["eval", "--kb", "kb", "--cases", "cases.jsonl", "--store", "memory", "-k", "1"];
    const first = await run(args, d);
    const followed = await follow(first, d);
    // The data options are kept (the KB folder's name is the default one, so it is left out).
    for (const { hint } of followed.filter((f) => f.hint.command !== null))
      expect(hint.command!.join(" "), hint.text).toContain("--cases cases.jsonl --store memory -k 1");
    expect(followed.map((f) => f.hint.text.split(":")[0])).toEqual([
      "trace the first missed turn stage by stage",
      "see every turn in a browser",
      "record this run as the baseline to gate on",
      "evaluate your own LangGraph.js graph",
    ]);
    expect(existsSync(path.join(d, "kb", "eval", "baseline.json"))).toBe(true);
    // The run that recorded the baseline prints the gate on it: followed too.
    const record = followed.find((f) => f.hint.text.startsWith("record"))!.result!;
    const next = await follow(record, d);
    expect(next.some((f) => f.hint.text.startsWith("gate later runs on the baseline just written"))).toBe(true);
  }, 300_000);

  it("a .ts graph under tsx (--graph): its file, KB, cases and --config settings kept in every line", async () => {
    const d = await project("ts-graph", [MISS]);
    const graph = path.join(ROOT, "examples", "custom-retriever.ts");
    // run.configurable defines the run (the graph gets it on every turn); run.concurrency is eval's alone (trace refuses it).
    await writeFile(
      path.join(d, "settings.json"),
      JSON.stringify({ version: 1, run: { configurable: { tenant: "t1" }, concurrency: 2 } }),
    );
    const first = await run(
      ["eval", "--graph", graph, "--kb", "kb", "--cases", "cases.jsonl", "-k", "1", "--config", "settings.json"],
      d,
    );
    const followed = await follow(first, d);
    const commands = followed.filter((f) => f.hint.command !== null);
    expect(commands.map((f) => f.hint.text.split(":")[0])).toEqual([
      "trace the first missed turn stage by stage",
      "see every turn in a browser",
      "record this run as the baseline to gate on",
    ]);
    for (const { hint } of commands) expect(hint.command!.join(" ")).toContain(`--graph ${graph} `);
    // The eval lines repeat --config as typed; the trace line keeps what trace reads of it: the configurable, not the concurrency.
    for (const { hint } of commands.slice(1)) expect(hint.command!.join(" ")).toContain("--config settings.json");
    const traceLine = commands[0]!.hint.command!;
    expect(traceLine[traceLine.indexOf("--config") + 1]).toBe('{"version":1,"run":{"configurable":{"tenant":"t1"}}}');
    // The trace of the graph's turn shows the user's message (not retrace's own graph).
    expect(commands[0]!.result!.stdout).toContain("do you offer mortgages?");
  }, 300_000);

  it("recorded traces over a catalog (--traces): the trace line traces the recorded turn, and the baseline goes beside the cases, not into a kb/eval/ folder", async () => {
    const d = path.join(dir, "traces");
    const fixtures = path.join(ROOT, "test", "fixtures", "traces");
    await cp(fixtures, d, { recursive: true });
    const args = [
      "eval",
      "--traces",
      "openinference.otlp.jsonl",
      "--catalog",
      "catalog.tsv",
      "--cases",
      "cases.jsonl",
      "-k",
      "1",
      // One recorded turn's retriever call failed: allowed here, and the lines keep the allowance (else each would exit 1).
      "--gate",
      "max-errors=1",
    ];
    const followed = await follow(await run(args, d), d);
    const commands = followed.filter((f) => f.hint.command !== null);
    expect(commands.map((f) => f.hint.text.split(":")[0])).toEqual([
      "trace the first missed turn stage by stage",
      "see every turn in a browser",
      "record this run as the baseline to gate on",
    ]);
    const recording = "--traces openinference.otlp.jsonl --catalog catalog.tsv --cases cases.jsonl -k 1";
    // The trace line: the recording, its catalog and cases, no gate (trace has none); it ran (exit 0) and traced the recorded turn.
    expect(commands[0]!.hint.command!.join(" ")).toMatch(new RegExp(`^retrace trace \\S+ --turn \\d+ ${recording}$`));
    expect(commands[0]!.result!.stdout).toContain("retrieval: recorded retriever calls:");
    for (const { hint } of commands.slice(1))
      expect(hint.command!.join(" ")).toContain(`${recording} --gate max-errors=1`);
    expect(existsSync(path.join(d, "baseline.json"))).toBe(true);
    expect(existsSync(path.join(d, "kb"))).toBe(false); // no stray kb/eval/
    const gate = await follow(commands[2]!.result!, d);
    expect(gate.map((f) => f.hint.text)).toContainEqual(expect.stringMatching(/--baseline baseline\.json --gate/));
    expect(existsSync(path.join(d, "kb"))).toBe(false);
  }, 300_000);

  const TO_LABEL = {
    id: "conv-a",
    locale: "en",
    kind: "golden",
    turns: [{ user: "how do I lock my card?" }, { user: "and when do I get my refund?" }],
  };
  /** What the page's Export button saves: the cases with the person's labels. */
  const LABELLED = {
    ...TO_LABEL,
    turns: [
      { user: "how do I lock my card?", must_cite_one_of: ["card-freeze"], expect: "answer", judged: ["card-freeze"] },
      {
        user: "and when do I get my refund?",
        must_cite_one_of: ["refund-timelines"],
        expect: "answer",
        judged: ["refund-timelines"],
      },
    ],
  };

  for (const [name, source] of [
    ["retrace's own systems", ["--store", "memory"]],
    [
      "a graph of your own (--graph, --pool graph)",
      ["--graph", path.join(ROOT, "test", "fixtures", "graphs", "kb-agent.mjs"), "--pool", "graph"],
    ],
    [
      "a graph of your own run with run.configurable (--config)",
      [
        "--graph",
        path.join(ROOT, "test", "fixtures", "graphs", "kb-agent.mjs"),
        "--pool",
        "graph",
        "--config",
        '{"run":{"configurable":{"tenant":"acme"}}}',
      ],
    ],
  ] as const)
    it(`label (${name}) then label --merge: the page, the merge, the check and the eval of the same source`, async () => {
      const d = await project(`label-${source[0]!.slice(2)}-${source.length}`, [TO_LABEL]);
      const page = await run(["label", "cases.jsonl", "--kb", "kb", ...source, "--out", "html:label.html"], d);
      expect(page.exitCode, page.stderr).toBe(0);
      const pageHints = hints(page.stderr);
      expect(pageHints[0]!.text).toMatch(/^open label\.html in a browser/);
      const exportName = /the browser saves (\S+)\)/.exec(pageHints[0]!.text)![1]!;
      await writeFile(path.join(d, exportName), JSON.stringify(LABELLED) + "\n"); // the Export, done by hand
      const merged = await follow(page, d);
      const merge = merged.find((f) => f.hint.text.startsWith("merge the export"))!;
      expect(merge.hint.command!.join(" ")).toContain("--kb kb");
      if (source[0] === "--graph") expect(merge.hint.command!.join(" ")).toContain(`--graph ${source[1]}`);
      // The merge's own Next: lines: the dataset check against the same KB, then an eval of the same source.
      const after = await follow(merge.result!, d);
      expect(after.map((f) => f.hint.text.split(":")[0])).toEqual([
        "check the merged cases",
        source[0] === "--graph" ? "score your graph on them" : "score retrace's own graph on them",
      ]);
      const evalRun = after[1]!;
      if (source[0] === "--graph") expect(evalRun.hint.command!.join(" ")).toContain(`--graph ${source[1]}`);
      // The settings the labelling run's graph ran with are repeated on the merge and on its eval.
      const config = (source as readonly string[]).indexOf("--config");
      if (config >= 0)
        for (const h of [merge.hint, evalRun.hint])
          expect(h.command!.join(" ")).toContain(`--config ${source[config + 1]}`);
      expect(JSON.stringify(await readdir(d))).not.toContain("YOUR_GRAPH");
      expect(evalRun.result!.stdout).toMatch(/^turns: 2 /m); // the merged turns, scored
    }, 300_000);
});
