/**
 * The one output registry (docs/cli.md, "Outputs"): every file a command
 * writes besides its stdout — a report, a page, a TREC pair, write-back
 * records — is `--out FORMAT:FILE`, and every format is one row of
 * OUT_FORMATS plus one module under ./out/ that renders it. Each command says
 * what it has to render (its subject: a run's report, a comparison of two
 * runs, a labelling page) and takes every format whose module renders that
 * subject; its help lists them from this table.
 *
 * `FORMAT:` may be left out when the file's extension names a format
 * (`report.html`, `report.json`, `results.xml` = junit; a report's other
 * files are markdown, as `--out FILE` always was). A prefix that is not a
 * format of the command (`htm:`, `HTML:`, `pdf:`) is exit 2 with a
 * did-you-mean before anything runs: nothing is written, never a file named
 * `htm:report.html`.
 *
 * This table loads nothing heavy (the help of a command reads it); a
 * format's module is imported when its file is written. The write-back
 * formats' help names the recordings they take from the trace-format
 * registry (src/eval/traces/formats/registry.ts `writeBackHelp`), which is
 * as light.
 */
import path from "node:path";
import type { Command } from "commander";
import { editDistance } from "../edit-distance.js";
import { writeBackHelp } from "../eval/traces/formats/registry.js";
import type { Output, OutputSpec } from "../output-set.js";
import type { OutFormatModule, OutSubject, Rendered, SubjectKind } from "./out/subject.js";

export type { OutFormatModule, OutSubject, Rendered, SubjectKind } from "./out/subject.js";

/** One format: its name (the `FORMAT:` prefix), the extensions that select it without one, the subjects its module renders. */
export interface OutFormat {
  name: string;
  /** Other prefixes accepted for it (`md:`). */
  aliases?: readonly string[];
  /** Lower-case extensions that select this format when FILE has no prefix. */
  extensions: readonly string[];
  /** The subjects its module renders (test/cli/out-formats.test.ts checks the module against this list). */
  subjects: readonly SubjectKind[];
  /** What it writes, for the help and docs/cli.md. */
  summary: string;
  /** The paths FILE stands for, when not FILE itself (`trec:DIR`: DIR/run.txt and DIR/qrels.txt). */
  paths?: (file: string) => string[];
  /** An option the run must have been given for this format to make sense (its attribute and as typed). */
  requires?: { attribute: string; option: string; why: string };
  load: () => Promise<OutFormatModule>;
}

/** The registry. Adding a format: a module under ./out/ and a line here. The order is the order files are written in. */
export const OUT_FORMATS: readonly OutFormat[] = [
  {
    name: "markdown",
    aliases: ["md"],
    extensions: [".md", ".markdown"],
    subjects: ["report"],
    summary: "the report as markdown",
    load: () => import("./out/markdown.js"),
  },
  {
    name: "junit",
    extensions: [".xml"],
    subjects: ["report"],
    summary: "JUnit XML, one test per gate check",
    load: () => import("./out/junit.js"),
  },
  {
    name: "json",
    extensions: [".json"],
    subjects: ["report", "comparison"],
    summary: "the versioned JSON document (what --json prints)",
    load: () => import("./out/json.js"),
  },
  {
    name: "html",
    extensions: [".html", ".htm"],
    subjects: ["report", "comparison", "label"],
    summary: "one self-contained offline HTML page",
    load: () => import("./out/html.js"),
  },
  {
    name: "pr-comment",
    extensions: [],
    subjects: ["report", "comparison"],
    summary: "a concise pull-request comment body (markdown)",
    load: () => import("./out/pr-comment.js"),
  },
  {
    name: "trec",
    extensions: [],
    subjects: ["report"],
    summary: "a folder: TREC run.txt and qrels.txt (query id caseId#turn) for retrace score, trec_eval, ranx",
    paths: (dir) => [path.join(dir, "run.txt"), path.join(dir, "qrels.txt")],
    load: () => import("./out/trec.js"),
  },
  {
    name: "phoenix",
    extensions: [],
    subjects: ["report"],
    summary: `Phoenix span annotations (the body of POST /v1/span_annotations), with --traces of ${writeBackHelp("phoenix")}`,
    requires: { attribute: "traces", option: "--traces", why: "it annotates the recorded spans" },
    load: () => import("./out/phoenix.js"),
  },
  {
    name: "langsmith",
    extensions: [],
    subjects: ["report"],
    summary: `LangSmith feedback records (the POST /feedback body: id, run_id, trace_id, session_id, key, score, feedback_source) a line, with --traces of ${writeBackHelp("langsmith")}`,
    requires: { attribute: "traces", option: "--traces", why: "it attaches feedback to the recorded runs" },
    load: () => import("./out/langsmith.js"),
  },
  {
    name: "langfuse",
    extensions: [],
    subjects: ["report"],
    summary: `Langfuse score bodies (traceId, observationId, name, value, dataType, comment) a line, with --traces of ${writeBackHelp("langfuse")}`,
    requires: { attribute: "traces", option: "--traces", why: "it scores the recorded traces" },
    load: () => import("./out/langfuse.js"),
  },
  {
    name: "config",
    extensions: [".json"],
    subjects: ["tuning"],
    summary: "the chosen retrieval configuration (read by --config)",
    load: () => import("./out/config.js"),
  },
  {
    name: "cases",
    extensions: [".jsonl"],
    subjects: ["cases"],
    summary: "the cases as JSON Lines (- or none: stdout)",
    load: () => import("./out/cases.js"),
  },
];

/** The formats a subject can be written as by a command that has the options `has` (a format that `requires` another option is left out where there is none). */
export function formatsOf(subject: SubjectKind, has: readonly string[] = []): OutFormat[] {
  return OUT_FORMATS.filter(
    (f) => f.subjects.includes(subject) && (f.requires === undefined || has.includes(f.requires.option)),
  );
}

/** One `--out` value parsed: its format, its file (as typed after the prefix) and how it is named in messages. */
export interface OutTarget {
  format: string;
  file: string;
  /** `--out html:` (for messages and the preflight). */
  option: string;
}

/** Thrown by `parseOut` on a value that names no format of the command: exit 2 with this message. */
export class OutFormatError extends Error {}

/** The formats `word` is probably a slip for: the same name in another case, else within 2 edits. */
export function suggestFormats(word: string, names: readonly string[]): string[] {
  const w = word.toLowerCase();
  const exact = names.filter((n) => n === w);
  if (exact.length > 0) return exact;
  const scored = names.map((n) => ({ n, d: editDistance(w, n) })).filter((x) => x.d <= 2 && x.d < x.n.length);
  const best = Math.min(...scored.map((x) => x.d));
  const prefixed = names.filter((n) => w.length >= 3 && (n.startsWith(w) || w.startsWith(n)));
  return [...new Set([...scored.filter((x) => x.d === best).map((x) => x.n), ...prefixed])].sort();
}

/**
 * `FORMAT:FILE` or `FILE` for a command writing `subject`: the format and the
 * file. A prefix (two or more letters before a colon: `C:\...` stays a path)
 * that is not one of the subject's formats, a format of another subject, or a
 * file whose extension names none (where the subject has no default) is
 * OutFormatError, whose message names what is accepted.
 */
export function parseOut(value: string, subject: SubjectKind, command: string, has: readonly string[] = []): OutTarget {
  const formats = formatsOf(subject, has);
  const names = formats.map((f) => f.name);
  const m = /^([A-Za-z][A-Za-z0-9_-]+):(.*)$/s.exec(value);
  if (m !== null) {
    const prefix = m[1] as string;
    const format = OUT_FORMATS.find((f) => f.name === prefix || (f.aliases ?? []).includes(prefix));
    if (format !== undefined && formats.includes(format))
      return { format: format.name, file: m[2] as string, option: `--out ${format.name}:` };
    const similar = suggestFormats(
      prefix,
      formats.flatMap((f) => [f.name, ...(f.aliases ?? [])]),
    );
    const hint = similar.length === 0 ? "" : ` (did you mean ${similar.map((s) => `${s}:`).join(" or ")}?)`;
    const what =
      format !== undefined
        ? `${prefix} is not a format of retrace ${command}`
        : `unknown format ${JSON.stringify(prefix)}`;
    throw new OutFormatError(
      `error: --out ${JSON.stringify(value)}: ${what}${hint}; formats: ${names.join(", ")} (FORMAT:FILE; docs/cli.md)`,
    );
  }
  const lower = value.toLowerCase();
  const byExt = formats.find((f) => f.extensions.some((e) => lower.endsWith(e)));
  if (byExt !== undefined) return { format: byExt.name, file: value, option: "--out" }; // named as typed
  if (subject === "report") return { format: "markdown", file: value, option: "--out" }; // as `--out FILE` always was
  // A command writing one kind of file (a tuning's config, cases): any FILE is that kind.
  if ((subject === "tuning" || subject === "cases") && formats.length === 1)
    return { format: names[0] as string, file: value, option: "--out" };
  throw new OutFormatError(
    `error: --out ${JSON.stringify(value)}: name the format (FORMAT:FILE, e.g. --out ${names[0]}:${value}); formats of retrace ${command}: ${names.join(", ")}`,
  );
}

/** The `--out` help of a command writing `subject` (`what`: what its files hold). */
export function outHelp(subject: SubjectKind, what: string, has: readonly string[] = []): string {
  const formats = formatsOf(subject, has);
  const ext = formats
    .filter((f) => f.extensions.length > 0)
    .map((f) => `${f.extensions.join("/")} = ${f.name}`)
    .join(", ");
  return `write ${what} as FORMAT:FILE, repeatable: ${formats.map((f) => `${f.name} (${f.summary})`).join("; ")}; without a prefix by extension (${ext}${subject === "report" ? "; any other: markdown" : ""}); docs/cli.md`;
}

const collect = (v: string, prev: string[] | undefined) => [...(prev ?? []), v];

/**
 * `--out <format:file>` on `cmd`, for `subject` (`has`: the options of `cmd`
 * that formats may require, e.g. `--traces`): a preAction hook parses every
 * value (exit 2 on a format the command does not write, or one format twice)
 * into the attribute `outputs` (OutTarget[]) before the action runs.
 */
export function addOutOption(cmd: Command, subject: SubjectKind, what: string, has: readonly string[] = []): Command {
  cmd.option("--out <format:file>", outHelp(subject, what, has), collect);
  return cmd.hook("preAction", (_self, actionCmd) => {
    if (actionCmd !== cmd) return;
    const values = (actionCmd.getOptionValue("out") as string[] | undefined) ?? [];
    const targets: OutTarget[] = [];
    for (const value of values) {
      let t: OutTarget;
      try {
        t = parseOut(value, subject, cmd.name(), has);
      } catch (e) {
        if (!(e instanceof OutFormatError)) throw e;
        return actionCmd.error(e.message, { exitCode: 2, code: "retrace.badOut" });
      }
      const before = targets.find((x) => x.format === t.format);
      if (before !== undefined)
        return actionCmd.error(`error: --out: two ${t.format} files (${before.file}, ${t.file}); one file per format`, {
          exitCode: 2,
          code: "retrace.badOut",
        });
      const format = OUT_FORMATS.find((f) => f.name === t.format) as OutFormat;
      if (format.requires !== undefined && actionCmd.getOptionValue(format.requires.attribute) === undefined)
        return actionCmd.error(
          `error: --out ${format.name}: needs ${format.requires.option} (${format.requires.why})`,
          { exitCode: 2, code: "retrace.badOut" },
        );
      targets.push(t);
    }
    actionCmd.setOptionValueWithSource("out", undefined, "default");
    if (targets.length > 0) actionCmd.setOptionValueWithSource("outputs", targets, "cli");
  });
}

/** The file of format `name` among `targets`, or undefined. */
export function outFile(targets: readonly OutTarget[] | undefined, name: string): string | undefined {
  return targets?.find((t) => t.format === name)?.file;
}

/** The paths `targets` write (for the preflight, src/output-set.ts checkOutputs), in registry order. */
export function outSpecs(targets: readonly OutTarget[] | undefined): OutputSpec[] {
  return ordered(targets).flatMap(({ t, f }) =>
    (f.paths?.(t.file) ?? [t.file]).map((p) => ({ option: t.option, path: p })),
  );
}

function ordered(targets: readonly OutTarget[] | undefined): { t: OutTarget; f: OutFormat }[] {
  return OUT_FORMATS.flatMap((f) => (targets ?? []).filter((t) => t.format === f.name).map((t) => ({ t, f })));
}

/** Every target rendered from `subject`, in registry order, ready for writeOutputs; `notes`: lines to print once they are written. */
export async function renderOuts(
  subject: OutSubject,
  targets: readonly OutTarget[] | undefined,
): Promise<{ outputs: Output[]; notes: string[] }> {
  const outputs: Output[] = [];
  const notes: string[] = [];
  for (const { t, f } of ordered(targets)) {
    const mod = await f.load();
    const render = mod.render[subject.kind] as ((s: OutSubject, file: string) => Rendered) | undefined;
    if (render === undefined) throw new Error(`internal: format ${f.name} renders no ${subject.kind}`);
    const r = render(subject, t.file);
    if (typeof r === "object" && !(r instanceof Uint8Array) && "files" in r) {
      for (const x of r.files) outputs.push({ option: t.option, path: x.path, data: x.data });
      notes.push(...(r.notes ?? []));
    } else outputs.push({ option: t.option, path: t.file, data: r });
  }
  return { outputs, notes };
}
