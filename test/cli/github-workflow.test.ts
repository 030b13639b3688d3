/**
 * examples/github-actions/retrace.yml, run locally (docs/ci.md): the test
 * reads the workflow's `run:` steps from the YAML and runs them with bash, as
 * the runner would, in a temp checkout (`kb/` with the shipped cards, cases
 * and split, and a baseline): three `retrace eval --shard i/3` jobs
 * (STORE=memory: no Chroma to start), then `retrace merge` with
 * GITHUB_ACTIONS=true and a temp GITHUB_STEP_SUMMARY, then the comment step
 * with a fake `gh` (GitHub's API is a boundary the test cannot reach: the
 * fake records its arguments). `npx retrace` is the checkout's bin.
 *
 * The baseline is the shipped one with hit@k set to 1 on two turns the
 * shipped KB misses, so the merged run has exactly those two hit→miss flips:
 * the merge fails the gate (--max-flips 0), the summary gets the markdown,
 * stdout one well-formed ::error line per failure and per flip, each flip at
 * its case's line of cases.jsonl, and the comment file is written.
 */
import { spawn } from "node:child_process";
import { chmod, copyFile, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import type { Report } from "../../src/eval/report/types.js";
import { BIN, ROOT } from "../helpers/cli.js";

const WORKFLOW = path.join(ROOT, "examples", "github-actions", "retrace.yml");
interface Step {
  name?: string;
  run?: string;
  uses?: string;
  with?: Record<string, unknown>;
  env?: Record<string, string>;
}
interface Workflow {
  env: Record<string, string | number>;
  jobs: Record<string, { steps: Step[]; strategy?: { matrix: { shard: number[] } } }>;
}

const dirs: string[] = [];
afterAll(async () => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

function bash(
  script: string,
  cwd: string,
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["-eo", "pipefail", "-c", script], {
      cwd,
      env: { ...process.env, NO_COLOR: "1", RETRACE_WIDTH: "0", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** A step's script as the runner would run it: `${{ matrix.shard }}` and `${{ … }}` expressions filled in, `npx retrace` = the checkout's bin. */
function script(step: Step, vars: Record<string, string>): string {
  return (step.run ?? "")
    .replace(/\$\{\{\s*([^}]+?)\s*\}\}/g, (_, expr: string) => {
      if (!(expr in vars)) throw new Error(`no value for \${{ ${expr} }} in the test`);
      return vars[expr]!;
    })
    .replace(/\bnpx retrace\b/g, `node ${JSON.stringify(BIN)}`);
}

describe("examples/github-actions/retrace.yml", () => {
  it("has the steps docs/ci.md promises: a shard matrix, merge, the HTML artifact, the PR comment, the data-dir cache", async () => {
    const wf = parse(await readFile(WORKFLOW, "utf8")) as Workflow;
    const evalJob = wf.jobs.eval!;
    const merge = wf.jobs.merge!;
    expect(evalJob.strategy?.matrix.shard).toEqual([1, 2, 3]);
    expect(wf.env.SHARDS).toBe(3);
    expect(evalJob.steps.some((s) => s.uses?.startsWith("actions/cache@") && s.with?.path === ".retrace")).toBe(true);
    expect(evalJob.steps.map((s) => s.run ?? "").join("\n")).toMatch(
      /npx retrace eval .*--shard "\$\{\{ matrix\.shard \}\}\/\$SHARDS"/,
    );
    const mergeRuns = merge.steps.map((s) => s.run ?? "").join("\n");
    expect(mergeRuns).toMatch(
      /npx retrace merge shard-\*\.json .*--out html:retrace-report\.html .*--out pr-comment:retrace-comment\.md/,
    );
    expect(mergeRuns).toContain("gh pr comment");
    expect(
      merge.steps.some(
        (s) => s.uses?.startsWith("actions/upload-artifact@") && String(s.with?.path).includes("retrace-report.html"),
      ),
    ).toBe(true);
  });

  it("its run steps, run locally: shards, merge with summary, annotations and comment, then the comment posted", async () => {
    const wf = parse(await readFile(WORKFLOW, "utf8")) as Workflow;
    const dir = await mkdtemp(path.join(os.tmpdir(), "retrace-gha-"));
    dirs.push(dir);
    // The checkout: the shipped KB's cards, cases and split, and a baseline the run will regress against.
    await mkdir(path.join(dir, "kb", "eval"), { recursive: true });
    await symlink(path.join(ROOT, "kb", "cards"), path.join(dir, "kb", "cards"));
    for (const f of ["cases.jsonl", "split.json"])
      await copyFile(path.join(ROOT, "kb", "eval", f), path.join(dir, "kb", "eval", f));
    const baseline = JSON.parse(await readFile(path.join(ROOT, "kb", "eval", "baseline.json"), "utf8")) as {
      perTurn: Record<string, Record<string, number>>;
    };
    const misses = Object.entries(baseline.perTurn)
      .filter(([, s]) => s.retrieval_hit_at_k === 0)
      .map(([id]) => id)
      .slice(0, 2);
    expect(misses).toHaveLength(2);
    for (const id of misses) baseline.perTurn[id]!.retrieval_hit_at_k = 1;
    await writeFile(path.join(dir, "kb", "eval", "baseline.json"), JSON.stringify(baseline));
    // A fake gh: records its arguments (GitHub's API is out of reach).
    const bin = path.join(dir, "fake-bin");
    await mkdir(bin);
    await writeFile(path.join(bin, "gh"), `#!/bin/sh\necho "$@" >> "${path.join(dir, "gh-calls.txt")}"\n`);
    await chmod(path.join(bin, "gh"), 0o755);

    const summary = path.join(dir, "summary.md");
    const env = {
      ...Object.fromEntries(Object.entries(wf.env).map(([k, v]) => [k, String(v)])),
      STORE: "memory",
      GITHUB_ACTIONS: "true",
      GITHUB_STEP_SUMMARY: summary,
      GITHUB_WORKSPACE: dir,
    };
    const runs = (job: string) => wf.jobs[job]!.steps.filter((s) => s.run !== undefined && s.run !== "npm ci");

    // The eval job, once per matrix entry, in parallel as the runner would.
    const shards = await Promise.all(
      wf.jobs.eval!.strategy!.matrix.shard.map(async (shard) => {
        for (const step of runs("eval")) {
          const r = await bash(script(step, { "matrix.shard": String(shard) }), dir, env);
          expect(r.code, r.stderr).toBe(0);
        }
        return shard;
      }),
    );
    expect(shards).toEqual([1, 2, 3]);
    expect(existsSync(summary)).toBe(false); // the shards run with --github off: a partial report is no summary

    const [mergeStep, postStep] = runs("merge");
    expect(mergeStep!.run).toContain("retrace merge");
    const merged = await bash(script(mergeStep!, {}), dir, env);
    expect(merged.code, merged.stderr).toBe(1); // two flips, --gate max-flips=0

    const report = JSON.parse(await readFile(path.join(dir, "retrace-report.json"), "utf8")) as Report;
    expect(report.turns).toHaveLength(417);
    expect((report.gate?.flips ?? []).map((f) => `${f.caseId}#${f.turn}`).sort()).toEqual([...misses].sort());
    expect(existsSync(path.join(dir, "retrace-report.html"))).toBe(true);

    // The step summary: the markdown report.
    const md = await readFile(summary, "utf8");
    expect(md).toMatch(/^# retrace report/);
    expect(md).toContain("**FAIL**");

    // Annotations: well-formed, one per failure and one per flip, flips at the case's line in cases.jsonl.
    const cases = (await readFile(path.join(dir, "kb", "eval", "cases.jsonl"), "utf8")).split("\n");
    const lineOf = (caseId: string) =>
      cases.findIndex((l) => l.includes(`"id": "${caseId}"`) || l.includes(`"id":"${caseId}"`)) + 1;
    const annotations = merged.stdout.split("\n").filter((l) => l.startsWith("::"));
    for (const a of annotations)
      expect(a).toMatch(/^::error file=kb\/eval\/cases\.jsonl(,line=\d+)?,title=[^:\n]+::[^\n]+$/);
    expect(annotations).toHaveLength(report.gate!.failures.length + misses.length);
    for (const id of misses) {
      const caseId = id.slice(0, id.lastIndexOf("#"));
      expect(lineOf(caseId)).toBeGreaterThan(0);
      expect(annotations).toContainEqual(
        expect.stringMatching(
          new RegExp(
            `^::error file=kb/eval/cases\\.jsonl,line=${lineOf(caseId)},title=retrace%3A hit@5 1 → 0 at ${id}::`,
          ),
        ),
      );
    }

    // The PR comment.
    const comment = await readFile(path.join(dir, "retrace-comment.md"), "utf8");
    expect(comment.length).toBeLessThan(65_536);
    expect(comment).toContain("**Gate: ❌ FAIL**");
    expect(comment).toContain("hit@5 flips: 2 hit→miss, 0 miss→hit");
    for (const id of misses) expect(comment).toContain(`\`${id}\``);

    // The comment step, with the fake gh.
    const posted = await bash(script(postStep!, {}), dir, {
      ...env,
      ...postStep!.env,
      PR: "123",
      PATH: `${bin}:${process.env.PATH ?? ""}`,
    });
    expect(posted.code, posted.stderr).toBe(0);
    expect(await readFile(path.join(dir, "gh-calls.txt"), "utf8")).toBe(
      "pr comment 123 --body-file retrace-comment.md --edit-last\n",
    );
  }, 600_000);
});
