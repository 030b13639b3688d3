/**
 * The size of `eval`'s surface (issue #34, item 4): its help lists at most 27
 * options, the two of the recorded-traces work included (its write-back files
 * are `--out` formats); `start` is `eval`
 * with its defaults (the same options); every old spelling exits 2 naming the
 * new one, before anything runs (no store, no KB read: the KB given does not
 * exist); the moved commands `export` and `baseline floors` do the same.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";

/** The long name of every option a command's help lists (`  -k, --k <n>  ...` → `--k`), help included. */
function helpOptions(help: string): string[] {
  const section = help.slice(help.indexOf("\nOptions:\n"), help.indexOf("\nGlobal options"));
  return [...section.matchAll(/^ {2}(?:-\w, )?(--[a-z0-9-]+)/gm)].map((m) => m[1] as string);
}

/** The docs' list of eval's options (docs/cli.md), in the help's order. */
const EVAL_OPTIONS = [
  "--store",
  "--data-dir",
  "--kb",
  "--cases",
  "--k",
  "--config",
  "--case",
  "--locale",
  "--gate",
  "--baseline",
  "--update-baseline",
  "--quarantine",
  "--json",
  "--out",
  "--github",
  "--repeat",
  "--shard",
  "--counterfactual",
  "--graph",
  "--input",
  "--id-key",
  "--id-map",
  "--retrieval-call",
  "--catalog",
  "--traces",
  "--traces-format",
  "--help",
];

describe("retrace eval's surface", () => {
  it("lists at most 27 options, the two of recorded traces included, and no global option; docs/cli.md lists the same", async () => {
    const r = await runCli(["eval", "--help"]);
    expect(r.exitCode).toBe(0);
    const opts = helpOptions(r.stdout);
    expect(opts).toEqual(EVAL_OPTIONS);
    expect(opts.length).toBeLessThanOrEqual(27);
    const doc = await readFile(path.join(process.cwd(), "docs", "cli.md"), "utf8");
    const eval_ = doc.slice(doc.indexOf("## `retrace eval`"), doc.indexOf("## `retrace report`"));
    const documented = [...eval_.matchAll(/^\| `(?:-\w, )?(--[a-z0-9-]+)/gm)].map((m) => m[1]);
    expect(documented).toEqual(opts);
    expect(opts).not.toContain("--verbose");
    expect(r.stdout).toContain("Global options (see retrace --help): --verbose, --width <columns>, -V/--version");
  });

  it("start takes exactly eval's options", async () => {
    const [e, s] = await Promise.all([runCli(["eval", "--help"]), runCli(["start", "--help"])]);
    expect(s.exitCode).toBe(0);
    expect(helpOptions(s.stdout)).toEqual(helpOptions(e.stdout));
    // the same parsers: an old spelling on start is refused as on eval
    const r = await runCli(["start", "--kb", "no-such-kb", "--dense-k", "5"]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(`option '--dense-k' is now --config '{"retrieval":{"denseK":5}}'`);
  });
});

/** Each old spelling of eval, what it is typed with, and the new spelling the message names. */
const OLD_SPELLINGS: readonly [string[], string][] = [
  [["--dense-k", "7"], `--config '{"retrieval":{"denseK":7}}'`],
  [["--bm25-k", "30"], `--config '{"retrieval":{"bm25K":30}}'`],
  [["--mode", "dense"], `--config '{"retrieval":{"mode":"dense"}}'`],
  [["--embedder", "builtin"], `--config '{"retrieval":{"embedder":"builtin"}}'`],
  [["--rerank", "model"], `--config '{"retrieval":{"rerank":"model"}}'`],
  [["--timeout", "5"], `--config '{"run":{"timeout":5}}'`],
  [["--max-card-bytes", "1000"], `--config '{"run":{"maxCardBytes":1000}}'`],
  [["--history", "2"], `--config '{"run":{"history":2}}'`],
  [["--judge", "./j.mjs"], `--config '{"run":{"judge":"./j.mjs"}}'`],
  [["--judge-cache", "c"], `--config '{"run":{"judgeCache":"c"}}'`],
  [["--concurrency", "4"], `--config '{"run":{"concurrency":4}}'`],
  [["--workers", "2"], `--config '{"run":{"workers":2}}'`],
  [["--seed", "9"], `--config '{"run":{"seed":9}}'`],
  [["--resample", "turn"], `--config '{"run":{"resample":"turn"}}'`],
  [["--configurable", "{}"], `--config '{"run":{"configurable":{}}}'`],
  [["--turn-timeout", "9"], `--config '{"run":{"turnTimeout":9}}'`],
  [["--max-state-mb", "9"], `--config '{"run":{"maxStateMb":9}}'`],
  [["--min-hit", "0.9"], "--gate min-hit=0.9"],
  [["--min-recall", "0.5"], "--gate min-recall=0.5"],
  [["--min-ndcg", "0.5"], "--gate min-ndcg=0.5"],
  [["--min-mrr", "0.5"], "--gate min-mrr=0.5"],
  [["--min-stage", "fused=0.9"], "--gate min-stage=fused=0.9"],
  [["--max-stage-drop", "fused=0.1"], "--gate max-stage-drop=fused=0.1"],
  [["--max-drop", "0.02"], "--gate max-drop=0.02"],
  [["--max-flips", "0"], "--gate max-flips=0"],
  [["--max-errors", "1"], "--gate max-errors=1"],
  [["--max-no-retrieval", "1"], "--gate max-no-retrieval=1"],
  [["--max-flaky", "1"], "--gate max-flaky=1"],
  [["--junit", "j.xml"], "--out junit:j.xml"],
  [["--report-json", "r.json"], "--out json:r.json"],
  [["--html", "r.html"], "--out html:r.html"],
  [["--pr-comment", "c.md"], "--out pr-comment:c.md"],
  [["--annotations-out", "a.json"], "--out phoenix:a.json"],
  [["--feedback-out", "f.jsonl"], "--out langsmith:f.jsonl"],
  [["--no-github"], "--github off"],
  [["--no-counterfactual"], "--counterfactual off"],
];

describe("an old spelling of an eval option", () => {
  it.each(OLD_SPELLINGS)("%j: exit 2 naming %s, nothing run", async (typed, spelling) => {
    const r = await runCli(["eval", "--kb", "no-such-kb", ...typed]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(`option '${typed[0]}' is now ${spelling}`);
    expect(r.stdout).toBe("");
  });

  it("--github and --counterfactual alone are the new spellings (on), not their old negations", async () => {
    const r = await runCli(["eval", "--kb", "no-such-kb", "--github", "--counterfactual"]);
    expect(r.exitCode).toBe(2); // the missing KB, past the option checks
    expect(r.stderr).not.toContain("is now");
    expect(r.stderr).toContain("no-such-kb");
  });

  it("a --gate check that does not exist, or a bad value, is exit 2 saying so", async () => {
    const unknown = await runCli(["eval", "--kb", "no-such-kb", "--gate", "min-hits=0.9"]);
    expect(unknown.exitCode).toBe(2);
    expect(unknown.stderr).toContain('--gate "min-hits=0.9": expected NAME=VALUE with NAME one of min-hit, min-recall');
    const bad = await runCli(["eval", "--kb", "no-such-kb", "--gate", "max-flips=-1"]);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain(
      '--gate "max-flips=-1": Expected `--gate max-flips` to be a non-negative integer, got "-1"',
    );
  });

  it("--allow-no-retrieval (which had no effect) is exit 2 naming the gate check", async () => {
    const r = await runCli(["eval", "--kb", "no-such-kb", "--allow-no-retrieval"]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("--gate max-no-retrieval=N");
  });

  it("on merge and report too", async () => {
    const m = await runCli(["merge", "a.json", "--min-hit", "0.9"]);
    expect(m.exitCode).toBe(2);
    expect(m.stderr).toContain("option '--min-hit' is now --gate min-hit=0.9");
    const r = await runCli(["report", "a.json", "--md", "x.md"]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("option '--md' is now --out markdown:x.md");
  });
});

describe("moved commands", () => {
  it("retrace export is exit 2 naming retrace report --trec", async () => {
    const r = await runCli(["export", "run.json", "--trec", "out"]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("retrace export is now: retrace report run.json --out trec:out");
  });

  it("retrace baseline floors is exit 2 naming retrace report --floors", async () => {
    const r = await runCli(["baseline", "floors", "b.json"]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("retrace baseline floors is now: retrace report b.json --floors");
  });

  it("neither is listed in retrace --help", async () => {
    const r = await runCli(["--help"]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).not.toMatch(/^ {2}(export|baseline)\b/m);
    expect(r.stdout).toMatch(/^ {2}report\b/m);
  });
});
