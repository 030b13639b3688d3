/**
 * `eval --traces REC --out langsmith:|phoenix:|langfuse:FILE` on a recording
 * whose format the target does not take is refused before the recording is
 * read (src/cli/out/write-back.ts `checkWriteBackEarly`, from its first
 * record): every recording below is valid at its start and malformed after
 * it, so a refusal that came after reading would be the parse error instead.
 * The message is the one the check after the run gives (kept for `--traces -`,
 * which cannot be peeked), exit 2, and no file is written. Runs of no
 * recording (retrace's own graph, `--graph`) are refused before they start.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, ROOT, runCli } from "../helpers/cli.js";

const DIR = path.join(ROOT, "test", "fixtures", "traces");
const LANGSMITH = path.join(DIR, "langsmith.runs.jsonl");
const OTLP = path.join(DIR, "openinference.otlp.jsonl");
const base = ["--catalog", path.join(DIR, "catalog.tsv"), "--cases", path.join(DIR, "cases.jsonl"), "-k", "3"];

// The messages as the check after the run printed them before this check existed (base commit 4b81c2d).
const PHOENIX_OF_LANGSMITH =
  'Expected `--out phoenix:` to be OTLP/JSON traces (Phoenix annotates OpenTelemetry spans; for LangSmith runs write --out langsmith:FILE), got "langsmith traces"';
const LANGSMITH_OF_OTLP =
  'Expected `--out langsmith:` to be LangSmith run exports (feedback attaches to LangSmith runs; for OTLP spans write --out phoenix:FILE), got "otlp traces"';

let tmp: string;
/** The first half of a recording's lines, then a line that is not JSON: a reader that got that far names it. */
const brokenTail = (file: string) => {
  const lines = readFileSync(file, "utf8").split("\n").filter(Boolean);
  return `${lines.slice(0, Math.ceil(lines.length / 2)).join("\n")}\n{"this is not": json\n`;
};

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), "retrace-wb-early-"));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

async function refused(traces: string, out: string, msg: string, extra: string[] = []) {
  const file = path.join(tmp, `${path.basename(traces)}.${out}.out`);
  const json = path.join(tmp, `${path.basename(traces)}.${out}.json`);
  const r = await runCli([
    "eval",
    "--traces",
    traces,
    ...base,
    ...extra,
    "--out",
    `${out}:${file}`,
    "--out",
    `json:${json}`,
  ]);
  expect(r.stderr).toContain(msg);
  expect(r.stderr).not.toMatch(/truncated export|not JSON|Unexpected token/);
  expect(r.stderr).not.toMatch(/eval: \d+\/\d+ cases/); // no case was scored
  expect(r.exitCode).toBe(2);
  expect(r.stdout).toBe("");
  expect(existsSync(file)).toBe(false);
  expect(existsSync(json)).toBe(false);
}

describe("a write-back the recording's format does not take: refused before the recording is read", () => {
  it("LangSmith runs (JSON Lines, malformed second half) with --out phoenix:", async () => {
    const f = path.join(tmp, "langsmith-broken.jsonl");
    await writeFile(f, brokenTail(LANGSMITH));
    // The same file read without the write-back file is the parse error: the refusal did not read it.
    const plain = await runCli(["eval", "--traces", f, ...base]);
    expect(plain.exitCode).toBe(2);
    expect(plain.stderr).toMatch(/truncated export/);
    await refused(f, "phoenix", PHOENIX_OF_LANGSMITH);
  });

  it("OTLP spans (JSON Lines, malformed second half) with --out langsmith:", async () => {
    const f = path.join(tmp, "otlp-broken.jsonl");
    await writeFile(f, brokenTail(OTLP));
    await refused(f, "langsmith", LANGSMITH_OF_OTLP);
  });

  it("gzip by content (any name), one JSON document, a folder's first file", async () => {
    const gz = path.join(tmp, "langsmith.bin");
    await writeFile(gz, gzipSync(Buffer.from(brokenTail(LANGSMITH))));
    await refused(gz, "phoenix", PHOENIX_OF_LANGSMITH);
    // One pretty-printed JSON array, cut off after its third run.
    const runs = readFileSync(LANGSMITH, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as unknown);
    const doc = path.join(tmp, "langsmith-doc.json");
    await writeFile(doc, JSON.stringify(runs, null, 2).slice(0, JSON.stringify(runs.slice(0, 3), null, 2).length + 40));
    await refused(doc, "phoenix", PHOENIX_OF_LANGSMITH);
    // A folder: its first file by name says the format; the second one is broken.
    const dir = path.join(tmp, "folder");
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, "a.jsonl"), readFileSync(OTLP));
    await writeFile(path.join(dir, "b.jsonl"), "not json at all\n");
    await refused(dir, "langsmith", LANGSMITH_OF_OTLP);
  });

  it("--traces-format is the run's format", async () => {
    // LangSmith runs read as OTLP would be a format error; --out langsmith: is refused first, for OTLP.
    await refused(LANGSMITH, "langsmith", LANGSMITH_OF_OTLP, ["--traces-format", "otlp"]);
  });

  it("a format the target takes is not refused (the write-back is written)", async () => {
    const out = path.join(tmp, "feedback.jsonl");
    const r = await runCli(["eval", "--traces", LANGSMITH, ...base, "--out", `langsmith:${out}`]);
    expect(r.stderr).not.toContain("Expected `--out langsmith:`");
    expect([0, 1]).toContain(r.exitCode);
    expect(readFileSync(out, "utf8").split("\n").filter(Boolean).length).toBeGreaterThan(0);
  });

  it("--traces - (standard input) cannot be peeked: the check after the run refuses, same message, nothing written", async () => {
    const file = path.join(tmp, "stdin.phoenix.json");
    const r = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      const child = spawn(process.execPath, [BIN, "eval", "--traces", "-", ...base, "--out", `phoenix:${file}`], {
        cwd: ROOT,
        env: { ...process.env, NO_COLOR: "1", RETRACE_WIDTH: "0", GITHUB_ACTIONS: undefined },
        stdio: ["pipe", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
      child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
      child.on("error", reject);
      child.on("close", (code) => resolve({ code, stdout, stderr }));
      child.stdin.end(readFileSync(LANGSMITH));
    });
    expect(r.stderr).toContain(PHOENIX_OF_LANGSMITH);
    expect(r.code).toBe(2);
    expect(existsSync(file)).toBe(false);
  });
});

describe("runs of no recording are refused a write-back before they start", () => {
  for (const [target, why] of [
    ["langsmith", "it attaches feedback to the recorded runs"],
    ["phoenix", "it annotates the recorded spans"],
    ["langfuse", "it scores the recorded traces"],
  ] as const) {
    it(`retrace's own graph and --graph with --out ${target}:`, async () => {
      const file = path.join(tmp, `${target}.none`);
      for (const source of [[], ["--graph", path.join(tmp, "no-such-graph.mjs")]]) {
        const r = await runCli(["eval", ...source, "--out", `${target}:${file}`], { cwd: tmp });
        expect(r.stderr).toContain(`error: --out ${target}: needs --traces (${why})`);
        expect(r.exitCode).toBe(2);
        expect(existsSync(file)).toBe(false);
      }
    });
  }
});
