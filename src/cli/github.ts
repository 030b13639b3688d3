/**
 * GitHub-native output of `retrace eval` (with or without `--graph`) and
 * `retrace merge` (docs/ci.md). On when `GITHUB_ACTIONS=true` (GitHub sets
 * it in every job) or with `--github`; `--github off` turns it off.
 *
 * - the markdown report is appended to the file `$GITHUB_STEP_SUMMARY`
 *   names (the concise PR comment instead when the report is over GitHub's
 *   1 MiB summary limit);
 * - each gate failure and each hit→miss flip against the baseline becomes an
 *   `::error file=…,line=…::` workflow command at the case's line in the
 *   cases file (src/eval/gate/github.ts). They go to stdout, where GitHub
 *   reads workflow commands; with `--json` they go to stderr instead, so
 *   stdout stays one JSON document (the runner reads workflow commands from
 *   both streams);
 * (`--out pr-comment:FILE`, the comment body, is a format of the output
 * registry, src/cli/out-formats.ts, written GitHub on or off.)
 *
 * Checked before the run (`prepareGithub`): the step summary can be appended
 * to, and with GitHub output on, the cases file the annotations point into is
 * read.
 */
import path from "node:path";
import { checkAppendable } from "../atomic.js";
import type { Output } from "../output-set.js";
import type { Baseline } from "../eval/gate/baseline.js";
import { annotationLines } from "../eval/gate/github.js";
import { renderPrComment } from "../eval/report/render/pr-comment.js";
import { referenceComparison } from "../eval/gate/compare.js";
import { renderMarkdown } from "../eval/report/render.js";
import type { Report } from "../eval/report/types.js";
import { readCaseIndex, type CaseIndex } from "../kb/cases.js";
import { log } from "../log.js";
import { err, out } from "./io.js";

/** GitHub refuses a step summary over 1 MiB. */
export const STEP_SUMMARY_LIMIT = 1024 * 1024;

export interface GithubOptions {
  /** true: `--github` (on); false: `--github off`; undefined: on when GITHUB_ACTIONS=true. */
  github?: boolean;
  /** Stdout carries JSON: annotations go to stderr. */
  json?: boolean;
}

/** Whether GitHub output is on: the option, else `GITHUB_ACTIONS=true`. */
export function githubOn(o: Pick<GithubOptions, "github">, env: NodeJS.ProcessEnv = process.env): boolean {
  return o.github ?? env.GITHUB_ACTIONS === "true";
}

/** The cases file as GitHub names it in `file=`: relative to `$GITHUB_WORKSPACE` (else the working folder), `/`-separated. */
export function annotationPath(file: string, env: NodeJS.ProcessEnv = process.env): string {
  const root = env.GITHUB_WORKSPACE ?? process.cwd();
  return path.relative(root, path.resolve(file)).split(path.sep).join("/");
}

/** The GitHub outputs of one command, prepared before its run. */
export interface GithubEmitter {
  /**
   * The files of the finished run — the step summary (appended; the PR
   * comment is a format of the output registry) — to write in the run's output set with its other files
   * (src/output-set.ts): all published or none, so a full disk under the
   * step summary is exit 3 with no report published.
   */
  files(report: Report, baseline: { file: string; data: Baseline } | null, seed: number, title: string): Output[];
  /** The workflow commands (annotations), once the files are written. */
  emit(report: Report): Promise<void>;
}

/** Checks the options and reads the case lines (GitHub output on) before the run: exit 2 on a bad path or cases file. */
export async function prepareGithub(
  o: GithubOptions,
  casesFile: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<GithubEmitter> {
  const on = githubOn(o, env);
  const summary = env.GITHUB_STEP_SUMMARY;
  if (on && summary !== undefined && summary !== "") await checkAppendable(summary, "GITHUB_STEP_SUMMARY");
  const index: CaseIndex | null = on ? await readCaseIndex(casesFile) : null;
  return {
    files(report, baseline, seed, title) {
      const files: Output[] = [];
      const comment = () =>
        renderPrComment(report, { comparison: referenceComparison(report, baseline, { seed }), title });
      if (on && index !== null && summary !== undefined && summary !== "") {
        let text = renderMarkdown(report);
        if (Buffer.byteLength(text) > STEP_SUMMARY_LIMIT - 1024)
          text = `${comment()}\n> The full markdown report (${Buffer.byteLength(text)} bytes) is over GitHub's 1 MiB step-summary limit: write it with --out FILE.md or --out FILE.html and upload it as an artifact.\n`;
        // Appended, secrets redacted as in every file (docs/reliability.md).
        files.push({ option: "GITHUB_STEP_SUMMARY", path: summary, data: `${text}\n`, append: true });
      }
      return files;
    },
    async emit(report) {
      if (!on || index === null) return;
      if (summary === undefined || summary === "")
        log.info("GitHub output: GITHUB_STEP_SUMMARY is not set, so no step summary was written");
      const lines = annotationLines(report, { casesFile: annotationPath(casesFile, env), index });
      // retrace's own workflow commands: the only lines written as commands (their data escaped by GitHub's rules).
      if (lines.length > 0) (o.json === true ? err : out)(lines.join("\n"), { workflowCommands: true });
    },
  };
}
