/**
 * Options mean what they say (docs/gates-and-exit-codes.md, "Options"): every
 * command refuses an option it does not take (exit 2, commander's
 * `error: unknown option`, and a hint naming the commands that take it), and
 * accepts every option its own --help lists. Offline: the command actions are
 * never run (an unknown option stops commander before them; the acceptance
 * check replaces the action with a recorder).
 */
import { existsSync } from "node:fs";
import path from "node:path";
import type { Command, Option } from "commander";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { buildProgram, COMMANDS, main } from "../../src/cli/main.js";
import { tempDir } from "../helpers/chroma.js";
import { runCli } from "../helpers/cli.js";

/** Arguments each command needs before an option can be judged (positionals and required options). */
const PREFIX: Record<string, string[]> = {
  baseline: ["baseline", "floors"],
  beir: ["beir", "dataset"],
  cases: ["cases", "synth"],
  check: ["check"],
  compare: ["compare", "a.json", "b.json"],
  eval: ["eval"],
  export: ["export", "r.json", "--trec", "out"],
  ingest: ["ingest"],
  init: ["init"],
  label: ["label", "cases.jsonl"],
  merge: ["merge", "shard-1.json"],
  report: ["report", "r.json"],
  score: ["score", "--qrels", "q.txt", "--run", "r.txt"],
  start: ["start"],
  trace: ["trace", "en-freeze-001"],
  tune: ["tune"],
};

/** The commands that moved (`export`, `baseline floors`): they take anything and exit 2 naming their new spelling (test/cli/surface.test.ts). */
const MOVED = new Set(["baseline", "export"]);

/** For each command, a real option of another command that it does not take. */
const FOREIGN: Record<string, [flag: string, value?: string]> = {
  beir: ["--junit", "x.xml"],
  cases: ["--junit", "x.xml"],
  check: ["--junit", "x.xml"],
  compare: ["--junit", "x.xml"],
  eval: ["--turn", "1"],
  ingest: ["--junit", "x.xml"],
  init: ["--turn", "1"],
  label: ["--junit", "x.xml"],
  merge: ["--turn", "1"],
  report: ["--junit", "x.xml"],
  score: ["--junit", "x.xml"],
  start: ["--turn", "1"],
  trace: ["--min-hit", "1"],
  tune: ["--junit", "x.xml"],
};

/** What the hint says for each foreign flag: the commands that take it, or the new spelling of an old one. */
const TAKEN_BY: Record<string, string> = {
  "--junit": "--junit is now --out junit:VALUE on: retrace eval, retrace merge, retrace start",
  "--turn": "--turn is an option of: retrace trace",
  "--graph": "--graph is an option of: retrace eval, retrace init, retrace label, retrace start, retrace trace",
  "--min-hit": "--min-hit is now --gate min-hit=VALUE on: retrace eval, retrace merge, retrace start",
};

let stderr = "";
beforeAll(() => {
  vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
    stderr += typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8");
    return true;
  });
  vi.spyOn(process.stdout, "write").mockImplementation(() => true);
});
afterEach(() => {
  stderr = "";
  process.exitCode = undefined;
});
afterAll(() => {
  vi.restoreAllMocks();
});

describe("every command refuses an option it does not take", () => {
  it("covers every command of the table", () => {
    expect(Object.keys(PREFIX).sort()).toEqual(Object.keys(COMMANDS).sort());
  });

  for (const [name, [flag, value]] of Object.entries(FOREIGN)) {
    it(`${name} ${flag} → exit 2, unknown option, and who takes it`, async () => {
      await main(["node", "retrace", ...PREFIX[name]!, flag, ...(value !== undefined ? [value] : [])]);
      expect(process.exitCode).toBe(2);
      expect(stderr).toContain(`error: unknown option '${flag}'`);
      expect(stderr).toContain(`(${TAKEN_BY[flag]})`);
    });
  }
});

/** The long flags a command's --help lists (help and the program's own options, under "Global Options:", left out). */
function helpFlags(cmd: Command): string[] {
  const flags: string[] = [];
  for (const line of cmd.helpInformation().split("\n")) {
    if (line === "Global Options:") break;
    const m = /^\s{2}(?:-\w, )?(--[a-z][\w-]*)/.exec(line);
    if (m !== null && m[1] !== "--help") flags.push(m[1] as string);
  }
  return flags;
}

/** The command words of a PREFIX entry: the command, and the subcommand of a command group (`baseline floors`, `cases synth`). */
function commandWords(name: string): string[] {
  return PREFIX[name]!.filter(
    (w, i) => i === 0 || (name === "baseline" && w === "floors") || (name === "cases" && w === "synth"),
  );
}

function commandIn(program: Command, words: readonly string[]): Command {
  let cmd = program;
  for (const w of words) cmd = cmd.commands.find((c) => c.name() === w) as Command;
  return cmd;
}

/** Parses `args` with the command's action replaced by a recorder: null when accepted, else commander's error code and message. */
async function parse(name: string, args: string[]): Promise<{ code: string; message: string } | null> {
  const argv = ["node", "retrace", ...args];
  const program = await buildProgram(argv);
  const words = commandWords(name);
  let ran = false;
  commandIn(program, words).action(() => {
    ran = true;
  });
  try {
    await program.parseAsync(argv);
  } catch (e) {
    return { code: (e as { code: string }).code, message: (e as Error).message };
  }
  expect(ran).toBe(true);
  return null;
}

/** Options whose value is not a number (the default "1" fits every other one). */
const VALUES: Record<string, string> = {
  "--shard": "1/2",
  "--min-stage": "final=0.5",
  "--max-stage-drop": "final=0.05",
  "--gate": "max-flips=1",
  "--github": "on",
  "--counterfactual": "on",
  // Every command with --config reads the settings it takes and refuses the others (test/cli/settings.test.ts): an empty object is accepted everywhere.
  "--config": "{}",
  "--out": "html:x.html",
};
/** `--out` of the commands that write one kind of file (the registry's `config:` and `cases:` formats), where `html:` is refused. */
const OUT_VALUE: Record<string, string> = { tune: "config:x.json", cases: "cases:x.jsonl" };
const valueFor = (o: Option): string[] =>
  o.required || o.optional ? [VALUES[o.long ?? ""] ?? o.argChoices?.[0] ?? "1"] : [];

describe("every command accepts every option its --help lists", () => {
  for (const name of Object.keys(PREFIX).filter((n) => !MOVED.has(n))) {
    it(name, async () => {
      const program = await buildProgram(["node", "retrace", name]);
      const words = commandWords(name);
      const cmd = commandIn(program, words);
      const flags = helpFlags(cmd);
      expect(flags.length).toBeGreaterThan(0);
      for (const flag of flags) {
        const opt = cmd.options.find((o) => o.long === flag) as Option;
        expect(opt, `${name} --help lists ${flag}`).toBeDefined();
        let given = [flag, ...(flag === "--out" && OUT_VALUE[name] !== undefined ? [OUT_VALUE[name]] : valueFor(opt))];
        let r = await parse(name, [...PREFIX[name]!, ...given]);
        // --folds needs at least 2: a value rejected as out of range is not "unknown"; try one in range.
        if (r?.code === "commander.invalidArgument") {
          given = [flag, "2"];
          r = await parse(name, [...PREFIX[name]!, ...given]);
        }
        // An option of one mode only (e.g. `with --graph: …`) is accepted in that mode, and its help says so.
        const mode = r === null ? null : /is not used without (--[\w-]+)/.exec(r.message)?.[1];
        if (mode !== null && mode !== undefined) {
          expect(opt.description, `${name} ${flag}'s help names the mode ${mode}`).toContain(mode);
          r = await parse(name, [
            ...PREFIX[name]!,
            mode,
            ...(cmd.options.find((o) => o.long === mode)?.required ? ["g.mjs"] : []),
            ...given,
          ]);
        }
        expect(r, `${name} ${given.join(" ")}`).toBeNull();
      }
    });
  }
});

describe("through the real bin", () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    ({ dir, cleanup } = await tempDir("unknown-options"));
  });
  afterAll(async () => cleanup());

  it("the reported trace command line exits 2 and writes nothing", async () => {
    const r = await runCli(
      ["trace", "en-freeze-001", "--min-hit", "1", "--junit", "x.xml", "--out", "x.md", "--update-baseline"],
      { cwd: dir, env: { CHROMA_URL: "http://127.0.0.1:9" } },
    );
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("error: unknown option '--min-hit'");
    expect(r.stderr).toContain(
      "(--min-hit is now --gate min-hit=VALUE on: retrace eval, retrace merge, retrace start)",
    );
    expect(r.stdout).toBe("");
    for (const f of ["x.xml", "x.md", ".retrace"]) expect(existsSync(path.join(dir, f))).toBe(false);
  });

  it("an option of the other mode: eval --graph with a retrieval section of --config, trace --input without --graph, beir --tune --modes", async () => {
    const graph = await runCli(["eval", "--graph", "g.mjs", "--config", '{"retrieval":{"rerank":"auto"}}'], {
      cwd: dir,
    });
    expect(graph.exitCode).toBe(2);
    expect(graph.stderr).toContain("error: setting 'retrieval.rerank' of --config is not used with --graph");
    const input = await runCli(["trace", "en-freeze-001", "--input", "m.mjs"], { cwd: dir });
    expect(input.exitCode).toBe(2);
    expect(input.stderr).toContain("error: option '--input' is not used without --graph");
    const beir = await runCli(["beir", "d", "--tune", "--modes", "bm25"], { cwd: dir });
    expect(beir.exitCode).toBe(2);
    expect(beir.stderr).toContain("error: option '--modes' is not used with --tune");
  });
});
