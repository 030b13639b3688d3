/**
 * What a recorded trace gives the harness (docs/recorded-traces.md):
 * turns, each one graph invocation (a root span or root run), with the
 * retriever calls recorded under it. The readers (./otlp.ts, ./langsmith.ts)
 * produce these; `src/eval/sweep/recorded.ts` turns them into the same
 * per-turn records a `--graph` run captures, so everything downstream (the
 * report, splits, intervals, baseline, gates, HTML, JUnit) is shared.
 * Plain data: nothing here imports LangChain, the graph or the retrieval code.
 */

/** One recorded document, shaped as the id rule reads it (src/eval/measures/doc-id.ts): `Document.id`, metadata, page content. */
export interface RecordedDocument {
  pageContent: string;
  metadata: Record<string, unknown>;
  /** `document.id` (OpenInference), the `id` of a `gen_ai.retrieval.documents` entry, or a LangSmith document's `id`. */
  id?: string;
}

/** One recorded retriever call (a RETRIEVER / GenAI retrieval span, a LangSmith retriever run), or one side of a RERANKER span. */
export interface RecordedRun {
  /** Span id or run id (a reranker's input side gets `<span id>:input`). */
  runId: string;
  parentRunId: string | null;
  /** The nearest enclosing recorded retriever call, or null for a top-level one. */
  retrieverParentRunId: string | null;
  name: string;
  tags: string[];
  query: string;
  /** Start and end, microseconds since the epoch (OTel start times are whole milliseconds). */
  startUs: number;
  endUs: number;
  /** LangGraph's `langgraph_step` of the call, when recorded: the calls of one step are one step, whatever their timing. */
  langgraphStep?: number;
  /** LangGraph's `langgraph_checkpoint_ns` of the call (its task), when recorded: calls of one namespace are one step. */
  langgraphNamespace?: string;
  documents: RecordedDocument[] | null;
  error: string | null;
}

/** One recorded turn: a root span or root run (one graph invocation). */
export interface RecordedTurn {
  /** Where it was read: `file:line` of the root's record. */
  where: string;
  /** The root's span id or run id, and its trace id. */
  rootId: string;
  traceId: string;
  /** The conversation (OpenInference `session.id`, `gen_ai.conversation.id`, LangGraph `thread_id` / `session_id` / `conversation_id`); null for a trace with none (a one-turn conversation). */
  conversationId: string | null;
  /** The user's message of the turn (the root's input: its last user message, else its text). */
  user: string;
  /** The assistant's reply recorded on the root's output (its last AI message), if any. */
  answer?: string;
  startUs: number;
  endUs: number;
  /** LangSmith's `dotted_order` of the root (the tie rule's last key before the id). */
  dottedOrder?: string;
  /** `service.name` (OTLP resource) or the LangSmith project (`session_name`, else `session_id` / `project_id`). */
  service?: string;
  /** Every project name the root run carries (LangSmith `session_name`, `session_id`, `project_id`): the `services` filter matches any of them. */
  services?: string[];
  /** The LangSmith project's id (`session_id` of a listRuns() run, `project_id` of a v2 run): feedback's `session_id`. */
  projectId?: string;
  /**
   * Retriever calls of this turn's trace whose parent link is missing (a
   * LangSmith child run exported without `parent_run_id`, an OTLP retriever
   * span without `parentSpanId` beside the trace's root): the turn's calls
   * cannot be known, so it is listed (`unattachedTurns`) and not scored.
   */
  unattachedCalls?: number;
  /** The recorded retriever calls of the turn, in start order. */
  runs: RecordedRun[];
  /** The root's own error, if the invocation failed. */
  error: string | null;
}

/** A conversation rebuilt from recorded turns, turns in order (`compareTurns`). */
export interface RecordedConversation {
  id: string;
  /** True when the trace named no conversation: the id is the root's span or run id. */
  anonymous: boolean;
  turns: RecordedTurn[];
}

/** Filters of the `traces` section of `--config` (docs/recorded-traces.md). */
export interface TraceFilters {
  /** Only turns whose service (OTLP `service.name`) or project (LangSmith `session_name`, `session_id` or `project_id`) is one of these. */
  services?: string[];
  /** Only turns whose root started at or after / before these instants (ISO 8601). */
  from?: string;
  to?: string;
}
