/**
 * A trace format (docs/architecture.md §9, "…a trace format"): what
 * `--traces`, `label --traces` and `cases import` need to know of one export
 * layout, in one module under src/eval/traces/formats/, registered by one
 * line in ./registry.ts. The module stays light (the CLI reads the format
 * names while it parses options): its reader is imported when a recording
 * is opened (`open`).
 */
import type { TraceRecord } from "../records.js";
import type { RecordedTurn } from "../types.js";

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

/** One trace format. `N` is its name (`--traces-format N`). */
export interface TraceFormatModule<N extends string = string> {
  name: N;
  /** How messages name it ("OTLP/JSON", "LangSmith"…). */
  label: string;
  /** What one of its records looks like, for "expected …" messages. */
  expected: string;
  /** One record named in a message ("an OTLP/JSON export"), without its fields. */
  one: string;
  /**
   * How `retrace cases import` takes the format (src/app/cases-import.ts):
   * `"turns"`, the conversations of the reader's turns, as `eval --traces`
   * reads them; `"runs"`, records the import reads itself beside chat
   * records (LangSmith runs: each root run read strictly as a turn).
   */
  casesImport: "turns" | "runs";
  /** True when one record (a JSON object) is of this format. Formats are tried in the registry's order; no two may claim one record. */
  detect(record: Record<string, unknown>): boolean;
  /** A new reader for one recording (imports the reader's module). */
  open(): Promise<FormatReader>;
}
