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
  rootRunTurn,
  type Conversation,
  type ImportedCase,
  type RootRunTurn,
} from "../kb/conversations.js";
import { canonicalLocale } from "../kb/schemas.js";
import { readTextFileOrThrow } from "../kb/text.js";
import { parseJsonOrIssue } from "../kb/json.js";
import { conversationsOf, recordFormat, traceFiles } from "../eval/traces/read.js";
import { forEachRecord, whereOf } from "../eval/traces/records.js";
import type { FormatReader } from "../eval/traces/formats/format.js";
import { TRACE_FORMAT_MODULES, traceFormat, type TraceFormat } from "../eval/traces/formats/registry.js";
import { LangSmithReader, runParent } from "../eval/traces/langsmith.js";

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
    /** LangSmith child runs (a parent link: `parent_run_id`, `parent_run_ids`, `dotted_order`, or a `trace_id` naming another run), read for their links only. */
    childRuns: number;
  };
}

type Located = { where: Conversation["where"]; record: unknown };

/** What was read: OTLP exports and Langfuse traces into their trace reader; LangSmith runs into the trace reader, with what the import adds of each root run; chat records. */
interface Records {
  otlp: FormatReader | null;
  langsmith: { reader: LangSmithReader; roots: Map<string, RootRunTurn>; childRuns: number } | null;
  located: Located[];
}

const whereIn = (r: { file: string; line: number; index?: number }): Conversation["where"] =>
  r.index !== undefined ? { file: r.file, field: `[${r.index}]` } : { file: r.file, line: r.line };

/**
 * The records of `file` (a file, a folder of trace files, or `-` for
 * stdin) through the one trace record reader (src/eval/traces/records.ts:
 * JSON Lines or one JSON document, pretty or not, gzip by content). OTLP
 * exports and LangSmith runs are taken into the readers `eval --traces`
 * uses (src/eval/traces/otlp.ts, langsmith.ts) as they are read (streamed);
 * chat conversations are kept for the checks.
 */
async function readRecords(file: string, issues: DataIssue[]): Promise<Records> {
  // The records of a format imported as turns (OTLP spans, Langfuse traces / observations: `casesImport: "turns"`) go to its trace reader (the one `eval --traces` uses).
  const readers = new Map<TraceFormat, FormatReader>();
  for (const f of TRACE_FORMAT_MODULES) if (f.casesImport === "turns") readers.set(f.name, await f.open());
  let otlp: FormatReader | null | undefined;
  let readerFormat: TraceFormat | null = null;
  let firstSeen = "";
  const located: Located[] = [];
  let langsmith: Records["langsmith"] = null;
  for (const f of traceFiles(file))
    await forEachRecord(
      f,
      (r) => {
        const format = recordFormat(r.value);
        const asTurns = format !== null && readers.has(format);
        if (otlp === undefined) {
          otlp = asTurns ? readers.get(format)! : null;
          readerFormat = asTurns ? format : null;
          firstSeen = whereOf(r);
        }
        if (otlp !== null) {
          if (format !== readerFormat)
            throw new DataValidationError([
              {
                file: r.file,
                line: r.line,
                message: `not ${traceFormat(readerFormat!).one}, while ${firstSeen} was one: one import reads one format`,
              },
            ]);
          otlp.add(r);
          return;
        }
        if (recordShape(r.value) !== "chat" && recordFormat(r.value) === "langsmith") {
          // A LangSmith run, root or child, through the reader of eval --traces (parents, threads, order); a root run is also read as a turn, strictly.
          langsmith ??= { reader: new LangSmithReader({ partial: true }), roots: new Map(), childRuns: 0 };
          const run = r.value as Record<string, unknown>;
          langsmith.reader.add(r);
          if (runParent(run) !== null) langsmith.childRuns++;
          else {
            const turn = rootRunTurn(run, whereIn(r), issues);
            if (turn !== null) langsmith.roots.set(run.id as string, turn);
          }
          return;
        }
        located.push({ where: whereIn(r), record: r.value });
      },
      "a JSON array of runs or one JSON object a line",
    );
  return { otlp: otlp ?? null, langsmith, located };
}

/**
 * The conversations of an OTLP export as `eval --traces` reads them
 * (src/eval/traces/read.ts): one per session / conversation / thread id (a
 * trace with none: one turn, named by its root span), turns in recorded
 * order; each turn's context is what the assistant answered the turn before.
 */
async function otlpConversations(reader: FormatReader): Promise<Conversation[]> {
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

/**
 * The conversations of LangSmith runs as `eval --traces` reads them
 * (src/eval/traces/read.ts, langsmith.ts): one per thread as LangSmith
 * groups runs (a root run with none: one turn, named by its run id), turns
 * in recorded order, each turn's user text the reader's; its context the
 * assistant messages of its inputs before the human message, else what the
 * assistant answered the turn before (`outputs.messages`).
 */
function langsmithConversations(
  reader: LangSmithReader,
  roots: ReadonlyMap<string, RootRunTurn>,
  issues: DataIssue[],
): Conversation[] {
  const out: Conversation[] = [];
  for (const c of conversationsOf(reader.turns())) {
    const parts = c.turns.map((t) => roots.get(t.rootId));
    // A root run refused as a turn (its issue is listed): nothing more to say of its conversation.
    if (parts.some((p) => p === undefined)) continue;
    const turns = parts as RootRunTurn[];
    const first = turns[0]!;
    const locales = [...new Set(turns.flatMap((p) => (p.locale !== undefined ? [p.locale] : [])))];
    if (locales.length > 1) {
      issues.push({
        ...first.where,
        field: "extra.metadata.locale",
        message: `expected one locale per conversation, got ${locales.join(", ")} in thread ${c.id}`,
      });
      continue;
    }
    out.push({
      where: first.where,
      source: "langsmith",
      thread: c.id,
      ...(locales[0] !== undefined ? { locale: locales[0] } : {}),
      turns: c.turns.map((t) => t.user),
      contexts: turns.map((p, i) =>
        p.context.length > 0 || i === 0 || c.turns[i - 1]!.answer === undefined ? p.context : [c.turns[i - 1]!.answer!],
      ),
    });
  }
  return out;
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
  const { otlp, langsmith, located } = await readRecords(file, issues);
  const conversations: Conversation[] = otlp !== null ? await otlpConversations(otlp) : [];
  for (const { where, record } of located) {
    if (recordShape(record) === "chat") {
      const c = chatConversation(record as Record<string, unknown>, where, issues);
      if (c !== null) conversations.push(c);
    } else
      issues.push({
        ...where,
        message:
          'not a conversation: expected {"messages": [{"role": "user", "content": …}, …]} or a LangSmith run (with inputs.messages)',
      });
  }
  // The runs' parent links walked as eval --traces walks them: a cycle is exit 2 naming the runs, never an endless walk (a parent not exported ends the walk: root runs alone are a usual import).
  if (langsmith !== null) conversations.push(...langsmithConversations(langsmith.reader, langsmith.roots, issues));
  const childRuns = langsmith?.childRuns ?? 0;
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
