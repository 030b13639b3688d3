/**
 * Use-case: `retrace cases import FILE` (`importCases`): conversations from
 * chat-message JSONL, LangSmith root runs (src/kb/conversations.ts) or OTLP/JSON
 * trace exports (src/eval/traces/; a LangSmith or OTLP conversation's case id
 * is its thread id, the one `eval --traces` joins on) turned
 * into cases to label, one JSON line each (docs/synthetic-cases.md#importing-conversations).
 * A record that is not a conversation is a DataValidationError naming
 * file, line and field (exit 2), and nothing is written. With `into`, the
 * cases of that file are kept as they are and only new ids are appended.
 * The imported text is written as it is: personal data stays personal data.
 */
import { DataValidationError, InvalidArgumentError, type DataIssue } from "../errors.js";
import {
  chatConversation,
  conversationCase,
  recordShape,
  type Conversation,
  type ImportedCase,
} from "../kb/conversations.js";
import { canonicalLocale } from "../kb/schemas.js";
import { readTextFileOrThrow } from "../kb/text.js";
import { parseJsonOrIssue } from "../kb/json.js";
import { conversationsOf, recordFormat, traceFiles } from "../eval/traces/read.js";
import { forEachRecord, whereOf } from "../eval/traces/records.js";
import type { CasesImport, FormatReader, RunsImport, TraceFormatModule } from "../eval/traces/formats/format.js";
import { TRACE_FORMAT_MODULES, traceFormat, type TraceFormat } from "../eval/traces/formats/registry.js";

export interface ImportOptions {
  /** The locale of conversations that name none (a `locale` field, or LangSmith `extra.metadata.locale`, wins). */
  locale?: string;
  /** An existing cases file: its lines are kept, conversations whose id it has are skipped. */
  into?: string;
  /** Keep only each conversation's first `maxTurns` user turns (`--max-turns`); unset, every turn is kept. Each cut is counted (`counts.truncated`). */
  maxTurns?: number;
}

export interface ImportOutcome {
  /** The cases file text to write (the `into` file's text first, when given). */
  text: string;
  /** The new cases, in order. */
  cases: ImportedCase[];
  counts: {
    conversations: number;
    turns: number;
    /** Same id as a case already imported in this run or present in `into`. */
    duplicates: number;
    /** Conversations longer than `maxTurns` user turns (their first `maxTurns` were kept); 0 without `maxTurns`. */
    truncated: number;
    /** Records read for their links only (LangSmith child runs: a parent link, `parent_run_id`, `parent_run_ids`, `dotted_order`, or a `trace_id` naming another run), the sum of `leftOut`. */
    childRuns: number;
  };
  /** The records read for their links only, by format, with what the format calls them ("LangSmith child runs"); formats with none are left out. */
  leftOut: { count: number; words: string }[];
}

type Located = { where: Conversation["where"]; record: unknown };

/** A format `cases import` reads beside chat records (`casesImport.kind: "runs"`, LangSmith runs), with its open import. */
type RunsFormat = { format: TraceFormatModule<TraceFormat>; runs: Extract<CasesImport, { kind: "runs" }> };

/** What was read: the records of a format imported as turns (OTLP exports, Langfuse traces) in its trace reader; the records of formats imported as runs in their imports; chat records. */
interface Records {
  turns: FormatReader | null;
  runs: Map<TraceFormat, { of: RunsFormat; import: RunsImport }>;
  located: Located[];
}

const whereIn = (r: { file: string; line: number; index?: number }): Conversation["where"] =>
  r.index !== undefined ? { file: r.file, field: `[${r.index}]` } : { file: r.file, line: r.line };

/** The registered formats `cases import` reads beside chat records (src/eval/traces/formats/registry.ts). */
function runsFormats(): RunsFormat[] {
  const modules: readonly TraceFormatModule<TraceFormat>[] = TRACE_FORMAT_MODULES;
  return modules.flatMap((format) =>
    format.casesImport.kind === "runs" ? [{ format, runs: format.casesImport }] : [],
  );
}

/**
 * The records of `file` (a file, a folder of trace files, or `-` for
 * stdin) through the one trace record reader (src/eval/traces/records.ts:
 * JSON Lines or one JSON document, pretty or not, gzip by content), each
 * taken as its format says (`casesImport`, src/eval/traces/formats/): the
 * records of a format imported as turns into the reader `eval --traces`
 * uses, as they are read (streamed; one such format an import); those of a
 * format imported as runs into its import; chat conversations kept for the
 * checks.
 */
async function readRecords(file: string, issues: DataIssue[]): Promise<Records> {
  // The records of a format imported as turns (OTLP spans, Langfuse traces / observations: `casesImport.kind: "turns"`) go to its trace reader (the one `eval --traces` uses).
  const readers = new Map<TraceFormat, FormatReader>();
  for (const f of TRACE_FORMAT_MODULES) if (f.casesImport.kind === "turns") readers.set(f.name, await f.open());
  // The records of a format imported as runs (LangSmith runs: `casesImport.kind: "runs"`) go to its own import; those read are kept (`runs`).
  const opened = new Map<TraceFormat, { of: RunsFormat; import: RunsImport }>();
  for (const of of runsFormats()) opened.set(of.format.name, { of, import: await of.runs.open() });
  const runs: Records["runs"] = new Map();
  let turns: FormatReader | null | undefined;
  let readerFormat: TraceFormat | null = null;
  let firstSeen = "";
  const located: Located[] = [];
  for (const f of traceFiles(file))
    await forEachRecord(
      f,
      (r) => {
        const format = recordFormat(r.value);
        const asTurns = format !== null && readers.has(format);
        if (turns === undefined) {
          turns = asTurns ? readers.get(format)! : null;
          readerFormat = asTurns ? format : null;
          firstSeen = whereOf(r);
        }
        if (turns !== null) {
          if (format !== readerFormat)
            throw new DataValidationError([
              {
                file: r.file,
                line: r.line,
                message: `not ${traceFormat(readerFormat!).one}, while ${firstSeen} was one: one import reads one format`,
              },
            ]);
          turns.add(r);
          return;
        }
        const asRuns = format !== null && recordShape(r.value) !== "chat" ? opened.get(format) : undefined;
        if (asRuns !== undefined) {
          // A LangSmith run, root or child, through the reader of eval --traces (parents, threads, order); a root run is also read as a turn, strictly.
          runs.set(format!, asRuns);
          asRuns.import.add(r, whereIn(r), issues);
          return;
        }
        located.push({ where: whereIn(r), record: r.value });
      },
      "a JSON array of runs or one JSON object a line",
    );
  return { turns: turns ?? null, runs, located };
}

/**
 * The conversations of an export read as turns (OTLP spans, Langfuse
 * traces) as `eval --traces` reads them (src/eval/traces/read.ts): one per
 * session / conversation / thread id (a trace with none: one turn, named by
 * its root span), turns in recorded order; each turn's context is what the
 * assistant answered the turn before.
 */
async function turnConversations(reader: FormatReader): Promise<Conversation[]> {
  return conversationsOf((await reader.finish()).turns).map((c) => {
    const first = c.turns[0]!;
    const [f, line] = [
      first.where.replace(/:\d+( \[\d+\])?$/, ""),
      Number(/:(\d+)( \[\d+\])?$/.exec(first.where)?.[1] ?? 0),
    ];
    return {
      where: { file: f, ...(line > 0 ? { line } : {}) },
      source: "otlp" as const,
      thread: c.id,
      turns: c.turns.map((t) => t.user),
      contexts: c.turns.map((_, i) => (i > 0 && c.turns[i - 1]!.answer !== undefined ? [c.turns[i - 1]!.answer!] : [])),
    };
  });
}

/** Ids of the cases of an existing file (read leniently: only `id` matters; `retrace check` validates the rest). */
function knownIds(text: string, file: string): Set<string> {
  const ids = new Set<string>();
  const issues: DataIssue[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    if (line.trim() === "") return;
    const json = parseJsonOrIssue(line, { file, line: i + 1, expected: "a cases file (one JSON object a line)" });
    if ("issue" in json) issues.push(json.issue);
    else if (typeof (json.value as { id?: unknown } | null)?.id === "string")
      ids.add((json.value as { id: string }).id);
    else issues.push({ file, line: i + 1, field: "id", message: "expected a case with a string id" });
  });
  if (issues.length > 0) throw new DataValidationError(issues);
  return ids;
}

/** Reads `file`, checks every record, and returns the cases file text; throws before anything is written. */
export async function importCases(file: string, o: ImportOptions = {}): Promise<ImportOutcome> {
  if (o.locale !== undefined && canonicalLocale(o.locale) !== o.locale)
    throw new InvalidArgumentError("--locale", "a canonical BCP-47 tag (e.g. en, es-419, pt-BR)", o.locale);
  const intoText = o.into !== undefined ? await readTextFileOrThrow(o.into) : "";
  const existing = o.into !== undefined ? knownIds(intoText, o.into) : new Set<string>();
  const issues: DataIssue[] = [];
  // Every shape through the one trace reader (docs/recorded-traces.md): OTLP exports and LangSmith runs become the conversations `eval --traces` rebuilds, streamed.
  const { turns, runs, located } = await readRecords(file, issues);
  const conversations: Conversation[] = turns !== null ? await turnConversations(turns) : [];
  const formats = runsFormats();
  for (const { where, record } of located) {
    if (recordShape(record) === "chat") {
      const c = chatConversation(record as Record<string, unknown>, where, issues);
      if (c !== null) conversations.push(c);
    } else
      issues.push({
        ...where,
        message: `not a conversation: expected {"messages": [{"role": "user", "content": …}, …]}${formats.map((f) => ` or ${f.runs.conversation}`).join("")}`,
      });
  }
  // The runs' parent links walked as eval --traces walks them: a cycle is exit 2 naming the runs, never an endless walk (a parent not exported ends the walk: root runs alone are a usual import).
  const leftOut: ImportOutcome["leftOut"] = [];
  for (const { of, import: imported } of runs.values()) {
    const read = imported.finish(issues, conversationsOf);
    conversations.push(...read.conversations);
    if (read.linkOnly > 0) leftOut.push({ count: read.linkOnly, words: of.runs.linkOnly });
  }
  const childRuns = leftOut.reduce((n, l) => n + l.count, 0);
  const localeFields = formats.map((f) => ` (${f.format.label}: ${f.runs.localeField})`).join("");
  for (const c of conversations)
    if (c.locale === undefined && o.locale === undefined)
      issues.push({
        ...c.where,
        field: "locale",
        message: `expected a locale: pass --locale TAG or give the conversation a \`locale\` field${localeFields}`,
      });
  if (issues.length > 0) throw new DataValidationError(issues.slice(0, 50));
  if (conversations.length === 0) throw new DataValidationError([{ file, message: "no conversations found" }]);

  const cases: ImportedCase[] = [];
  const seen = new Set(existing);
  let duplicates = 0;
  let truncated = 0;
  for (const c of conversations) {
    const ic = conversationCase(c, (c.locale ?? o.locale) as string, o.maxTurns);
    if (o.maxTurns !== undefined && c.turns.length > o.maxTurns) truncated++;
    if (seen.has(ic.id)) {
      duplicates++;
      continue;
    }
    seen.add(ic.id);
    cases.push(ic);
  }
  const lines = cases.map((c) => JSON.stringify(c));
  const head = intoText === "" || intoText.endsWith("\n") ? intoText : `${intoText}\n`;
  return {
    text: head + (lines.length > 0 ? `${lines.join("\n")}\n` : ""),
    cases,
    counts: {
      conversations: conversations.length,
      turns: cases.reduce((n, c) => n + c.turns.length, 0),
      duplicates,
      truncated,
      childRuns,
    },
    leftOut,
  };
}
