/**
 * One settings schema for every path (issue 50, item 1): the same bad
 * setting given in the project file, in `--config` inline, in a `--config`
 * file and to the programmatic API (`runEval`, `traceCase`, `runBeir`,
 * directly or as `config`) is refused with the same message, naming the
 * key, before anything is read or started (the KB folder does not exist:
 * an error that came later would be a different one).
 */
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { runBeir } from "../../src/app/beir.js";
import { runEval } from "../../src/app/sources/registry.js";
import { ingestKb } from "../../src/app/ingest.js";
import { planLabel } from "../../src/app/label.js";
import { traceCase } from "../../src/app/trace.js";
import { runTune } from "../../src/app/tune.js";
import { DataValidationError, formatIssue } from "../../src/errors.js";
import { runCli } from "../helpers/cli.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "retrace-settings-paths-"));
});

/** The message of a DataValidationError's one issue about `field`, without its file (which names the path). */
function apiMessage(e: unknown, field: string): string {
  expect(e).toBeInstanceOf(DataValidationError);
  const issue = (e as DataValidationError).issues.find((i) => i.field === field);
  expect(issue, `an issue about ${field}`).toBeDefined();
  return formatIssue({ ...issue!, file: "" });
}

/** The message the CLI printed about `field`, without its file. */
function cliMessage(stderr: string, field: string): string {
  const line = stderr.split("\n").find((l) => l.includes(`field \`${field}\``));
  expect(line, stderr).toBeDefined();
  return line!.slice(line!.indexOf(":")).replace(/^.*?: field/, ": field");
}

/** The bad settings: a run setting (a value out of range), one with choices, and a retrieval section key. */
const CASES = [
  {
    field: "run.concurrency",
    section: { run: { concurrency: 0 } },
    api: { concurrency: 0 },
    expected: 'Expected `run.concurrency` to be a positive integer, got "0"',
  },
  {
    field: "retrieval.mode",
    section: { retrieval: { mode: "dens" } },
    api: { mode: "dens" },
    expected: 'expected one of hybrid, dense, bm25, got "dens"',
  },
  {
    field: "retrieval.denseK",
    section: { retrieval: { denseK: 0 } },
    api: { retrievalConfig: { denseK: 0 } },
    expected: "greater than or equal to 1",
  },
] as const;

describe("the same bad setting on every path gives the same message", () => {
  for (const c of CASES)
    it(`${c.field}: project file, --config inline, --config file, runEval (directly and as config)`, async () => {
      const project = path.join(dir, c.field.replace(".", "-"));
      await mkdir(project, { recursive: true });
      await writeFile(path.join(project, "retrace.config.json"), JSON.stringify({ version: 1, ...c.section }));
      const file = path.join(dir, `${c.field}.json`);
      await writeFile(file, JSON.stringify({ version: 1, ...c.section }));
      const kb = path.join(dir, "no-such-kb");

      const messages: string[] = [];
      const fromProject = await runCli(["eval", "--kb", kb], { cwd: project });
      const inline = await runCli(["eval", "--kb", kb, "--config", JSON.stringify(c.section)], { cwd: dir });
      const fromFile = await runCli(["eval", "--kb", kb, "--config", file], { cwd: dir });
      for (const r of [fromProject, inline, fromFile]) {
        expect(r.exitCode, r.stderr).toBe(2);
        messages.push(cliMessage(r.stderr, c.field));
      }
      const direct = await runEval({ kb, ...c.api } as Parameters<typeof runEval>[0]).catch((e: unknown) => e);
      const asConfig = await runEval({ kb, config: file }).catch((e: unknown) => e);
      const asInline = await runEval({ kb, config: JSON.stringify(c.section) }).catch((e: unknown) => e);
      for (const e of [direct, asConfig, asInline]) messages.push(apiMessage(e, c.field));

      expect(messages[0]).toContain(c.expected);
      expect(new Set(messages)).toEqual(new Set([messages[0]]));
    });

  it("traceCase and runBeir check their settings the same way, naming the key", async () => {
    const kb = path.join(dir, "no-such-kb");
    const trace = await traceCase("case-1", { kb, history: -1 }).catch((e: unknown) => e);
    expect(apiMessage(trace, "run.history")).toBe(
      ': field `run.history` Expected `run.history` to be a non-negative integer, got "-1"',
    );
    const beir = await runBeir(path.join(dir, "no-such-beir"), { seed: -1 }).catch((e: unknown) => e);
    expect(apiMessage(beir, "run.seed")).toContain(
      'Expected `run.seed` to be an integer from 0 to 4294967295, got "-1"',
    );
  });

  it("runTune, ingestKb and planLabel check the settings given to them the same way", async () => {
    const kb = path.join(dir, "no-such-kb");
    const tune = await runTune({ kb, seed: -1 }).catch((e: unknown) => e);
    expect(apiMessage(tune, "run.seed")).toContain(
      'Expected `run.seed` to be an integer from 0 to 4294967295, got "-1"',
    );
    const ingest = await ingestKb({ kb, maxCardBytes: 0 }).catch((e: unknown) => e);
    expect(apiMessage(ingest, "run.maxCardBytes")).toContain(
      'Expected `run.maxCardBytes` to be a positive integer, got "0"',
    );
    const label = await planLabel({ kb, cases: path.join(kb, "cases.jsonl"), concurrency: 0 }).catch((e: unknown) => e);
    expect(apiMessage(label, "run.concurrency")).toContain(
      'Expected `run.concurrency` to be a positive integer, got "0"',
    );
  });

  it("a config setting the command does not read is refused through the API as through --config", async () => {
    const kb = path.join(dir, "no-such-kb");
    const api = await traceCase("case-1", { kb, config: '{"run":{"seed":7}}' }).catch((e: unknown) => e);
    const cli = await runCli(["trace", "case-1", "--kb", kb, "--config", '{"run":{"seed":7}}'], { cwd: dir });
    expect(cli.exitCode).toBe(2);
    expect(apiMessage(api, "run.seed")).toBe(cliMessage(cli.stderr, "run.seed"));
    expect(apiMessage(api, "run.seed")).toContain("not a setting of retrace trace");
  });

  it("a config's run section reaches the API's run (it was refused as an unknown key before)", async () => {
    const kb = path.join(dir, "no-such-kb");
    // The KB is missing: the run got past the settings (a bad one would be a DataValidationError naming its key).
    const e = await runEval({ kb, config: '{"run":{"concurrency":3}}' }).catch((x: unknown) => x);
    expect(String((e as Error).message)).not.toMatch(/run\b.*unknown key/);
    expect(String((e as Error).message)).toContain("no-such-kb");
  });
});
