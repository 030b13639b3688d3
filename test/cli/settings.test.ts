/**
 * One settings vocabulary (issue 50, item 1): every command that runs with
 * settings reads `--config` (a file or inline JSON) through one schema
 * (src/app/settings/schema.ts), refuses the old flag of a setting the same
 * way (exit 2 naming the key), takes the settings it reads and refuses the
 * others naming the command. In process, with each command's action
 * replaced by a recorder (no store, no KB read).
 */
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Command } from "commander";
import { describe, expect, it } from "vitest";
import { buildProgram } from "../../src/cli/main.js";
import { ROOT, runCli } from "../helpers/cli.js";
import { SETTINGS } from "../../src/app/settings/schema.js";

/** Runs `retrace ARGS` with the command's action recording its options: the options, or the error's message. */
async function parse(args: string[]): Promise<{ opts?: Record<string, unknown>; error?: string }> {
  const argv = ["node", "retrace", ...args];
  const program = await buildProgram(argv);
  program.configureOutput({ writeErr: () => {}, writeOut: () => {} });
  let cmd = program.commands.find((c) => c.name() === args[0]) as Command;
  const sub = cmd.commands.find((c) => c.name() === args[1]); // `cases synth`
  if (sub !== undefined) cmd = sub;
  let opts: Record<string, unknown> | undefined;
  cmd.exitOverride().action((...a: unknown[]) => {
    opts = (a.at(-1) as Command).opts();
  });
  try {
    await program.parseAsync(argv);
  } catch (e) {
    return { error: (e as Error).message };
  }
  return { opts: opts! };
}

/** Each command and the arguments it needs before its options. */
const PREFIX: Record<string, string[]> = {
  eval: ["eval"],
  trace: ["trace", "case-1"],
  label: ["label", "cases.jsonl"],
  beir: ["beir", "data"],
  tune: ["tune"],
  ingest: ["ingest"],
  compare: ["compare", "a.json", "b.json"],
  check: ["check"],
  "cases import": ["cases", "import", "chats.jsonl"],
  "cases synth": ["cases", "synth"],
  merge: ["merge", "a.json"],
  report: ["report", "r.json"],
  score: ["score", "qrels", "run"],
};

describe("retrieval.embedder on every command that embeds", () => {
  for (const name of ["eval", "trace", "label", "beir", "tune", "ingest"]) {
    it(`${name}: --embedder is exit 2 naming the key; --config sets it, inline or from a file`, async () => {
      const typed = await parse([...PREFIX[name]!, "--embedder", "lsa"]);
      expect(typed.error).toContain(
        `option '--embedder' is now --config '{"retrieval":{"embedder":"lsa"}}' (or the key retrieval.embedder of your config file`,
      );
      const inline = await parse([...PREFIX[name]!, "--config", '{"retrieval":{"embedder":"lsa"}}']);
      expect(inline.error).toBeUndefined();
      expect(inline.opts!.embedder).toBe("lsa");
      const dir = await mkdtemp(path.join(tmpdir(), "retrace-settings-"));
      const file = path.join(dir, "c.json");
      await writeFile(file, JSON.stringify({ version: 1, retrieval: { embedder: "builtin" } }));
      const fromFile = await parse([...PREFIX[name]!, "--config", file]);
      expect(fromFile.opts!.embedder).toBe("builtin");
    });
  }
});

describe("a setting a command does not read", () => {
  it("is exit 2 naming the key and the command, on every command", async () => {
    for (const [name, prefix] of Object.entries(PREFIX)) {
      const notRead = SETTINGS.find(
        (s) => !(s.commands as readonly string[]).includes(name) && s.key.startsWith("run."),
      );
      if (notRead === undefined) continue; // eval reads every setting
      const value = notRead.object === true ? {} : (notRead.choices?.[0] ?? 1);
      const [section, key] = notRead.key.split(".") as [string, string];
      const r = await parse([...prefix, "--config", JSON.stringify({ [section]: { [key]: value } })]);
      expect(r.error, `${name} ${notRead.key}`).toContain(`field \`${notRead.key}\` not a setting of retrace ${name}`);
    }
  });
});

describe("the same setting, the same value check, on every command reading it", () => {
  it("run.seed: eval, beir, tune and compare take 7 and refuse -1 with one message", async () => {
    for (const name of ["eval", "beir", "tune", "compare"]) {
      const ok = await parse([...PREFIX[name]!, "--config", '{"run":{"seed":7}}']);
      expect(ok.opts!.seed, name).toBe(7);
      const bad = await parse([...PREFIX[name]!, "--config", '{"run":{"seed":-1}}']);
      expect(bad.error, name).toContain('Expected `run.seed` to be an integer from 0 to 4294967295, got "-1"');
      expect((await parse([...PREFIX[name]!, "--seed", "7"])).error, name).toContain(
        `option '--seed' is now --config '{"run":{"seed":7}}'`,
      );
    }
  });

  it("run.concurrency and run.turnTimeout: eval and label alike", async () => {
    for (const name of ["eval", "label"]) {
      // with --graph: label drives a graph of yours only then (its rules refuse them without)
      const ok = await parse([
        ...PREFIX[name]!,
        "--graph",
        "g.mjs",
        "--config",
        '{"run":{"concurrency":3,"turnTimeout":9}}',
      ]);
      expect([ok.opts!.concurrency, ok.opts!.turnTimeout], name).toEqual([3, 9]);
      for (const flag of ["--concurrency", "--turn-timeout"])
        expect((await parse([...PREFIX[name]!, flag, "3"])).error, `${name} ${flag}`).toContain(
          `option '${flag}' is now --config`,
        );
    }
  });

  it("run.history: trace as eval (trace --history is a retired spelling)", async () => {
    for (const name of ["eval", "trace"]) {
      expect((await parse([...PREFIX[name]!, "--config", '{"run":{"history":0}}'])).opts!.history, name).toBe(0);
      expect((await parse([...PREFIX[name]!, "--history", "0"])).error, name).toContain(
        `option '--history' is now --config '{"run":{"history":0}}'`,
      );
    }
  });

  it("a retrieval section is refused where nothing retrieves with it, naming the key", async () => {
    const r = await parse([...PREFIX.compare!, "--config", '{"retrieval":{"denseK":5}}']);
    expect(r.error).toContain("field `retrieval.denseK` not a setting of retrace compare");
    const beir = await parse([...PREFIX.beir!, "--config", '{"retrieval":{"denseK":5}}']);
    expect(beir.opts!.retrievalConfig).toEqual({ denseK: 5 });
  });

  it("--counterfactual takes the same form on trace as on eval", async () => {
    for (const name of ["eval", "trace"]) {
      const g = ["--graph", "g.mjs"];
      expect((await parse([...PREFIX[name]!, ...g, "--counterfactual", "off"])).opts!.counterfactual, name).toBe(false);
      expect((await parse([...PREFIX[name]!, ...g, "--counterfactual", "on"])).opts!.counterfactual, name).toBe(true);
      expect((await parse([...PREFIX[name]!, ...g, "--counterfactual"])).opts!.counterfactual, name).toBe(true);
    }
  });
});

describe("the remaining commands take --config and the settings they read", () => {
  it("run.maxCardBytes on check and cases synth, run.seed on cases synth; their old flags are retired", async () => {
    for (const name of ["check", "cases synth"]) {
      const ok = await parse([...PREFIX[name]!, "--config", '{"run":{"maxCardBytes":300}}']);
      expect(ok.opts!.maxCardBytes, name).toBe(300);
      expect((await parse([...PREFIX[name]!, "--max-card-bytes", "300"])).error, name).toContain(
        `option '--max-card-bytes' is now --config '{"run":{"maxCardBytes":300}}'`,
      );
      const bad = await parse([...PREFIX[name]!, "--config", '{"run":{"maxCardBytes":0}}']);
      expect(bad.error, name).toContain('Expected `run.maxCardBytes` to be a positive integer, got "0"');
    }
    expect((await parse(PREFIX["cases synth"]!)).opts!.seed).toBe(42);
    expect((await parse([...PREFIX["cases synth"]!, "--config", '{"run":{"seed":7}}'])).opts!.seed).toBe(7);
    expect((await parse([...PREFIX["cases synth"]!, "--seed", "7"])).error).toContain(
      `option '--seed' is now --config '{"run":{"seed":7}}'`,
    );
  });

  it("cases import, merge, report and score read no setting but check --config like every command", async () => {
    for (const name of ["cases import", "merge", "report", "score"]) {
      expect((await parse([...PREFIX[name]!, "--config", "{}"])).error, name).toBeUndefined();
      const bad = await parse([...PREFIX[name]!, "--config", '{"run":{"concurency":1}}']);
      expect(bad.error, name).toContain("field `run.concurency` unknown key");
      const missing = await parse([...PREFIX[name]!, "--config", "no-such-settings.json"]);
      expect(missing.error, name).toContain("no-such-settings.json: cannot read the file");
    }
  });

  it("a project file with every section leaves check, cases import and score working as without it", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "retrace-project-every-"));
    const project = {
      version: 1,
      kb: path.join(ROOT, "test", "fixtures", "kb-mini"),
      k: 10,
      gates: ["max-flips=0"],
      outputs: ["html:report.html"],
      retrieval: { denseK: 5, embedder: "lsa" },
      run: { seed: 7, concurrency: 2, maxCardBytes: 100000 },
    };
    await writeFile(path.join(dir, "retrace.config.json"), JSON.stringify(project));
    const bare = await mkdtemp(path.join(tmpdir(), "retrace-project-none-"));
    for (const d of [dir, bare]) {
      await writeFile(path.join(d, "qrels"), "q1 0 d1 1\nq1 0 d2 1\n");
      await writeFile(path.join(d, "run"), "q1 Q0 d2 1 2.0 t\nq1 Q0 d3 2 1.0 t\n");
      await writeFile(
        path.join(d, "chats.jsonl"),
        JSON.stringify({ messages: [{ role: "user", content: "hi" }] }) + "\n",
      );
    }
    const check = await runCli(["check"], { cwd: dir });
    expect(check.exitCode, check.stderr).toBe(0);
    expect(check.stdout).toContain(`Knowledge base ${path.relative(dir, project.kb)}`);
    for (const args of [
      ["score", "qrels", "run"],
      ["cases", "import", "chats.jsonl", "--locale", "en"],
    ]) {
      const withProject = await runCli(args, { cwd: dir });
      const without = await runCli(args, { cwd: bare });
      expect(withProject.exitCode, withProject.stderr).toBe(0);
      expect(withProject.stdout, args[0]).toBe(without.stdout);
    }
  });
});

describe("label --merge keeps the settings that define the labelling run", () => {
  it("takes run.configurable (the eval line after the merge repeats it) and refuses what only the page uses", async () => {
    const merge = ["label", "--merge", "export.jsonl", "--into", "cases.jsonl", "--graph", "g.mjs"];
    const ok = await parse([...merge, "--config", '{"run":{"configurable":{"tenant":"a"}}}']);
    expect(ok.error).toBeUndefined();
    expect(ok.opts!.configurable).toEqual({ tenant: "a" });
    const page = await parse([...merge, "--config", '{"run":{"concurrency":2}}']);
    expect(page.error).toContain("setting 'run.concurrency' of --config is not used with --merge");
  });
});

describe("the project file's run section goes through the same schema", () => {
  it("a misspelt key or a bad value is exit 2 naming the file and the key, when read and when retrace init writes it", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "retrace-project-run-"));
    await writeFile(path.join(dir, "retrace.config.json"), JSON.stringify({ version: 1, run: { concurency: 4 } }));
    const read = await runCli(["eval", "--store", "none"], { cwd: dir });
    expect(read.exitCode).toBe(2);
    expect(read.stderr).toContain("retrace.config.json: field `run` unknown key concurency");
    const other = await mkdtemp(path.join(tmpdir(), "retrace-project-init-"));
    const init = await runCli(["init", "--kb", "kb", "--config", '{"run":{"workers":"lots"}}'], { cwd: other });
    expect(init.exitCode).toBe(2);
    expect(init.stderr).toContain('Expected `run.workers` to be auto or an integer from 1 to 64, got "lots"');
  });
});
