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
  readRootRun,
  recordShape,
  threadConversations,
  type Conversation,
  type ImportedCase,
  type RootRun,
} from "../kb/conversations.js";
import { canonicalLocale } from "../kb/schemas.js";
import { readTextFileOrThrow } from "../kb/text.js";
import { parseJsonOrIssue } from "../kb/json.js";
import { conversationsOf, recordFormat, traceFiles } from "../eval/traces/read.js";
import { forEachRecord, whereOf } from "../eval/traces/records.js";
import { OtlpReader } from "../eval/traces/otlp.js";
import { LangfuseReader } from "../eval/traces/langfuse.js";
import { runMetadata, runParent, runThread } from "../eval/traces/langsmith.js";
import { rootFinder } from "../eval/traces/tree.js";

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
    /** LangSmith child runs (`parent_run_id` set), left out. */
    childRuns: number;
  };
}

type Located = { where: Conversation["where"]; record: unknown };

/**
 * The records of `file` (a file, a folder of trace files, or `-` for
 * stdin) through the one trace record reader (src/eval/traces/records.ts:
 * JSON Lines or one JSON document, pretty or not, gzip by content). OTLP
 * exports are taken into an OTLP reader as they are read (streamed); other
 * records (chat conversations, LangSmith runs) are kept for the checks.
 */
async function readRecords(file: string): Promise<{ otlp: OtlpReader | LangfuseReader | null; located: Located[] }> {
  // OTLP spans and Langfuse traces / observations go to their trace reader (the one `eval --traces` uses).
  let otlp: OtlpReader | LangfuseReader | null | undefined;
  let readerFormat: string | null = null;
  let firstSeen = "";
  const located: Located[] = [];
  for (const f of traceFiles(file))
    await forEachRecord(
      f,
      (r) => {
        const format = recordFormat(r.value);
        const isOtlp = format === "otlp" || format === "langfuse";
        if (otlp === undefined) {
          otlp = format === "otlp" ? new OtlpReader() : format === "langfuse" ? new LangfuseReader() : null;
          readerFormat = isOtlp ? format : null;
          firstSeen = whereOf(r);
        }
        if (otlp !== null) {
          if (format !== readerFormat)
            throw new DataValidationError([
              {
                file: r.file,
                line: r.line,
                message: `not ${readerFormat === "otlp" ? "an OTLP/JSON export" : "a Langfuse trace or observation"}, while ${firstSeen} was one: one import reads one format`,
              },
            ]);
          otlp.add(r);
          return;
        }
        located.push({
          where: r.index !== undefined ? { file: r.file, field: `[${r.index}]` } : { file: r.file, line: r.line },
          record: r.value,
        });
      },
      "a JSON array of runs or one JSON object a line",
    );
  return { otlp: otlp ?? null, located };
}

/**
 * The conversations of an OTLP export as `eval --traces` reads them
 * (src/eval/traces/read.ts): one per session / conversation / thread id (a
 * trace with none: one turn, named by its root span), turns in recorded
 * order; each turn's context is what the assistant answered the turn before.
 */
function otlpConversations(reader: OtlpReader | LangfuseReader): Conversation[] {
  return conversationsOf(reader.turns()).map((c) => {
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
  // Every shape through the one trace reader; OTLP/JSON exports (a file, or a folder of them): the conversations `eval --traces` rebuilds, streamed (docs/recorded-traces.md).
  const { otlp, located } = await readRecords(file);
  const conversations: Conversation[] = otlp !== null ? otlpConversations(otlp) : [];
  const runs: RootRun[] = [];
  let childRuns = 0;
  for (const { where, record } of located) {
    const shape = recordShape(record);
    if (shape === null) {
      issues.push({
        ...where,
        message:
          'not a conversation: expected {"messages": [{"role": "user", "content": …}, …]} or a LangSmith run (with inputs.messages)',
      });
      continue;
    }
    if (shape === "chat") {
      const c = chatConversation(record as Record<string, unknown>, where, issues);
      if (c !== null) conversations.push(c);
    } else {
      // A child run by any link LangSmith exports (parent_run_id, parent_run_ids, dotted_order, trace_id): the one rule of eval --traces (src/eval/traces/langsmith.ts).
      const run = record as Record<string, unknown>;
      const r = runParent(run) !== null ? "child" : readRootRun(run, where, issues, runThread(run, runMetadata(run)));
      if (r === "child") childRuns++;
      else if (r !== null) runs.push(r);
    }
  }
  // The runs' parent links walked as eval --traces walks them: a cycle is exit 2 naming the runs, never an endless walk (a parent not exported ends the walk: root runs alone are a usual import).
  const links = new Map<string, { parent: string | null; file: string; line: number }>();
  for (const { where, record } of located) {
    const run = record as Record<string, unknown>;
    if (recordShape(record) !== "langsmith" || typeof run.id !== "string") continue;
    const parent = runParent(run);
    links.set(run.id, { parent: parent === "missing" ? null : parent, file: where.file, line: where.line ?? 0 });
  }
  const rootOf = rootFinder(links, (l) => l, { thing: "run", parentField: "parent_run_id", missingHint: null });
  for (const id of links.keys()) rootOf(id);
  conversations.push(...threadConversations(runs, issues));
  for (const c of conversations)
    if (c.locale === undefined && o.locale === undefined)
      issues.push({
        ...c.where,
        field: "locale",
        message:
          "expected a locale: pass --locale TAG or give the conversation a `locale` field (LangSmith: extra.metadata.locale)",
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
  };
}
