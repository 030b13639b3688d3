/**
 * A trace format (docs/architecture.md §9, "…a trace format"): what
 * `--traces`, `label --traces`, `cases import`, the score write-back files
 * and the report's header need to know of one export layout, in one module
 * under src/eval/traces/formats/, registered by one line in ./registry.ts. The module stays light (the CLI reads the format
 * names while it parses options): its reader is imported when a recording
 * is opened (`open`).
 */
import type { DataIssue } from "../../../errors.js";
import type { Conversation } from "../../../kb/conversations.js";
import type { TraceRecord } from "../records.js";
import type { RecordedConversation, RecordedTurn } from "../types.js";

/** A retriever call that cannot be attached to a turn (a parent link the export lost), and where it was read. */
export interface UnattachedCall {
  id: string;
  traceId: string;
  where: string;
}

/** One format's reader over one recording: records in, turns out. */
export interface FormatReader {
  /** Takes in one record of the format. @throws DataValidationError naming file and line. */
  add(record: TraceRecord): void;
  /** The turns of every record taken in (returning to the event loop now and then where the reader can), how many spans or runs were read, and the calls with no turn. */
  finish(): Promise<{ turns: RecordedTurn[]; records: number; unattached: readonly UnattachedCall[] }>;
}

/**
 * The score write-back files of a `--traces` run (`--out TARGET:FILE`,
 * src/cli/out/): LangSmith feedback, Langfuse scores, Phoenix span
 * annotations. Each attaches to ids only some recordings carry, so a format
 * says which of them take its recordings (`writeBack`).
 */
export type WriteBackTarget = "langsmith" | "langfuse" | "phoenix";

/**
 * `retrace cases import` of a format read beside chat records, not as the
 * reader's turns (`casesImport: { kind: "runs" }`): LangSmith runs, each root
 * run read strictly as a turn (its locale and context from the run itself).
 */
export interface RunsImport {
  /** Takes in one record of the format (never a chat record); a record it refuses as a turn is an issue pushed on `issues`. */
  add(record: TraceRecord, where: Conversation["where"], issues: DataIssue[]): void;
  /**
   * The conversations of every record taken in (a conversation with an issue
   * is left out, the issue pushed), and how many records were read for their
   * links only (LangSmith child runs). `conversationsOf` is the grouping
   * `eval --traces` uses (../read.ts), handed in: the reader imports this
   * registry, so an import module importing the reader would close a cycle.
   */
  finish(
    issues: DataIssue[],
    conversationsOf: (turns: readonly RecordedTurn[]) => RecordedConversation[],
  ): { conversations: Conversation[]; linkOnly: number };
}

/** How `retrace cases import` takes a format (src/app/cases-import.ts). */
export type CasesImport =
  /** The conversations of the reader's turns, as `eval --traces` reads them; one import reads one such format. */
  | { kind: "turns" }
  | {
      /** Records the import reads itself, beside chat records (`open`). */
      kind: "runs";
      /** A record of the format, in the "not a conversation: expected … or …" message ("a LangSmith run (with inputs.messages)"). */
      conversation: string;
      /** What the records read for their links only are called in the import's summary ("LangSmith child runs"). */
      linkOnly: string;
      /** Where a record of the format names its conversation's locale, in the "expected a locale" message ("extra.metadata.locale"). */
      localeField: string;
      /** A new import (imports its module). */
      open(): Promise<RunsImport>;
    };

/** One trace format. `N` is its name (`--traces-format N`). */
export interface TraceFormatModule<N extends string = string> {
  name: N;
  /** How messages name it ("OTLP/JSON", "LangSmith"…). */
  label: string;
  /** What one of its records looks like, for "expected …" messages. */
  expected: string;
  /** One record named in a message ("an OTLP/JSON export"), without its fields. */
  one: string;
  /** Its recordings named short in help texts ("LangSmith runs": `--out langsmith:`'s "with --traces of LangSmith runs"). */
  helpName: string;
  /** Its recordings named in full in `eval --traces`'s help, with what writes them ("LangSmith runs (listRuns() output)"). */
  helpSource: string;
  /**
   * How a report names the format and its records: the recorded-traces
   * header's words ("recorded traces (LangSmith runs): 1 file, 40 runs, …"),
   * written into the report as `run.graph.traces.label` / `recordsName` when
   * the run is made (renderers read them there).
   */
  report: { label: string; recordsName: string };
  /**
   * The write-back files that take a recording of this format, each with the
   * words naming such recordings in that target's refusal of other formats
   * ("Expected `--out langsmith:` to be LangSmith run exports (…)"). A
   * target not listed refuses the format (exit 2).
   */
  writeBack: Partial<Record<WriteBackTarget, string>>;
  /** How `retrace cases import` takes the format. */
  casesImport: CasesImport;
  /** True when one record (a JSON object) is of this format. Formats are tried in the registry's order; no two may claim one record. */
  detect(record: Record<string, unknown>): boolean;
  /** A new reader for one recording (imports the reader's module). */
  open(): Promise<FormatReader>;
}
