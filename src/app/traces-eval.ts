/**
 * `retrace eval --traces PATH` (docs/recorded-traces.md): the
 * recorded-traces source of a graph eval (`runGraphEval`, ./graph-eval.ts,
 * whose report, splits, intervals, baseline, gates and renderers it shares),
 * the `traces` section of `--config` (filters by service / project and
 * time window), and the write-back files: Phoenix span annotations
 * (`--out phoenix:`) and LangSmith feedback (`--out langsmith:`), one per
 * scored turn and retrieval metric, computed from the finished report.
 *
 * A recording is identified by its source kind (recorded traces), the id
 * rule and the call mode, never by its files: a baseline of one recording
 * compares with later recordings of the same cases.
 */
import { createHash } from "node:crypto";
import { readSettings } from "./settings/read.js";
import { DataValidationError, GraphInputError, InvalidArgumentError } from "../errors.js";
import type { EvalCase, KnowledgeBase } from "../kb/types.js";
import { log } from "../log.js";
import { METRICS } from "../eval/measures/metrics.js";
import type { EvaluatorSpec } from "../eval/measures/evaluators.js";
import type { GraphRunInfo, Report } from "../eval/report/types.js";
import { runRecordedSweep, type CaptureSummary, type RecordedGraphTurn } from "../eval/sweep/recorded.js";
import { JOIN_LIST_MAX, joinTraces, sortMismatches } from "../eval/traces/join.js";
import { readTraces } from "../eval/traces/read.js";
import { TRACE_FORMATS, traceFormat, type TraceFormat } from "../eval/traces/formats/registry.js";
import type { TraceFilters } from "../eval/traces/types.js";
import { EVAL_DEFAULTS } from "./eval-plan.js";
import type { ModuleSource } from "./sweep-source.js";
import type { IdOptions, RetrievalCall } from "../eval/sweep/capture.js";

/** The options of a recorded-traces eval. */
export interface RecordedTracesOptions {
  /** A trace file or a folder of them (OTLP/JSON, LangSmith runs): scored as recorded, nothing re-run. */
  traces?: string;
  /** Forces the format (default: detected per record). */
  tracesFormat?: TraceFormat;
  /** With `traces`: a JSON file whose `traces` section filters the turns (services, from, to). */
  config?: string;
  /** With `traces`: the filters themselves (the CLI's `--config` values, merged; src/cli/settings.ts); wins over `config`. */
  traceFilters?: TraceFilters;
}

/** Why a `--traces` run's report has no query attribution: nothing is re-run (docs/recorded-traces.md). */
export const TRACES_COUNTERFACTUAL_OFF =
  "not possible on recorded traces: attribution retrieves again with the raw message and the standalone question, and a recording is scored as it is, never re-run";

/** The identity of a recorded-traces run (`run.graph.file` / `exportName`): the source kind, not the files. */
export const RECORDED_SOURCE = { file: "traces", exportName: "recorded" } as const;

/**
 * The recorded-traces source: read the files, join them to the cases, score
 * each joined turn (./graph-eval.ts `SweepSource`). `captures`: "keep" (the
 * label pool reads each turn's capture), or "summary" (an eval: each capture
 * let go once its turn is scored, the header's part of them in the sweep's
 * `captured`).
 */
export async function recordedTracesSource(
  o: RecordedTracesOptions & { k?: number; retrievalCall?: RetrievalCall },
  idOptions: () => Promise<IdOptions>,
  captures: "keep" | "summary" = "keep",
): Promise<ModuleSource> {
  const file = o.traces!;
  if (o.tracesFormat !== undefined && !(TRACE_FORMATS as readonly string[]).includes(o.tracesFormat))
    throw new InvalidArgumentError("--traces-format", TRACE_FORMATS.join(" or "), o.tracesFormat);
  // `config` read by the one settings reader (src/app/settings/read.ts): only its `traces` section applies here.
  const filters = o.traceFilters ?? (o.config !== undefined ? ((await readSettings([o.config])).traces ?? {}) : {});
  return {
    module: { ...RECORDED_SOURCE },
    label: `--traces ${file}`,
    recorded: true,
    counterfactual: { enabled: false, reason: TRACES_COUNTERFACTUAL_OFF },
    description: "recorded traces: the retriever calls the traces hold, scored as recorded (nothing re-run)",
    sweep: async (
      cases: readonly EvalCase[],
      kb: KnowledgeBase,
      evaluators: EvaluatorSpec[],
      onCaseDone,
      selection,
    ) => {
      const ids = await idOptions();
      const read = await readTraces(file, {
        ...(o.tracesFormat !== undefined ? { format: o.tracesFormat } : {}),
        filters,
      });
      // A shard (--shard i/n: whole cases, so whole conversations) leaves the other shards' conversations to them.
      const mine = new Set(cases.map((c) => c.id));
      const elsewhere = new Set((selection ?? []).map((c) => c.id).filter((id) => !mine.has(id)));
      const join = joinTraces(read.conversations, cases, { elsewhere });
      const turnsRead = read.conversations.reduce((n, c) => n + c.turns.length, 0);
      if (read.unattached.turns + read.unattached.calls > 0)
        log.warn(
          `--traces: ${read.unattached.turns} recorded turns have retriever calls with no parent link in the export, and ${read.unattached.calls} retriever calls have no turn: not scored (never counted as misses), e.g. ${read.unattached.examples.slice(0, 3).join("; ")}. Export the runs with their parent links (parent_run_id, parent_run_ids or dotted_order; parentSpanId)`,
        );
      if (join.joined.length === 0)
        throw new GraphInputError(
          `--traces ${file}: no recorded turn joins a case (${read.conversations.length} conversations, ${turnsRead} turns read; ${join.conversationsWithoutCaseCount} conversations have no case of their id` +
            `${join.conversationsWithoutCase.length > 0 ? `, e.g. ${join.conversationsWithoutCase.slice(0, 3).join(", ")}` : ""}; ${join.mismatchCount} turns differ from their case's user text${read.unattached.turns > 0 ? `; ${read.unattached.turns} turns have retriever calls with no parent link, not scored` : ""}). ` +
            (read.unattached.turns > 0 && join.mismatchCount === 0 && join.conversationsWithoutCaseCount === 0
              ? "Export the runs with their parent links (LangSmith: parent_run_id, parent_run_ids or dotted_order; OTLP: parentSpanId): a retriever call that cannot be attached to its turn is never scored as a miss"
              : "Make the cases from these traces with `retrace cases import` (each conversation becomes the case of its id), or check --case/--locale"),
        );
      if (join.mismatchCount > 0)
        log.warn(
          `--traces: ${join.mismatchCount} recorded turns differ from their case's user text and are not scored, e.g. case ${join.mismatches[0]!.case} turn ${join.mismatches[0]!.turn}: recorded ${JSON.stringify(join.mismatches[0]!.recorded)}, case ${JSON.stringify(join.mismatches[0]!.expected)} (${join.mismatches[0]!.where})`,
        );
      if (join.conversationsWithoutCaseCount > 0)
        log.info(
          `--traces: ${join.conversationsWithoutCaseCount} recorded conversations have no case (not scored): ${join.conversationsWithoutCase.join(", ")}${join.conversationsWithoutCaseCount > JOIN_LIST_MAX ? ", …" : ""}`,
        );
      if (join.casesWithoutTraceCount > 0)
        log.info(
          `--traces: ${join.casesWithoutTraceCount} cases have no recorded conversation (not scored): ${join.casesWithoutTrace.join(", ")}${join.casesWithoutTraceCount > JOIN_LIST_MAX ? ", …" : ""}`,
        );
      const summary: CaptureSummary | undefined =
        captures === "summary" ? { retrievers: new Set(), metadataKeys: new Set() } : undefined;
      const turns = await runRecordedSweep(join, cases, {
        evaluators,
        knownIds: new Set(kb.byId.keys()),
        k: o.k ?? EVAL_DEFAULTS.k,
        retrievalCall: o.retrievalCall ?? "last",
        ids,
        ...(summary !== undefined ? { summary } : {}),
      });
      onCaseDone(cases.length, cases.length);
      return {
        turns,
        runs: [turns],
        ids,
        ...(summary !== undefined
          ? { captured: { retrievers: [...summary.retrievers].sort(), metadataKeys: [...summary.metadataKeys].sort() } }
          : {}),
        recorded: turns,
        traces: {
          format: read.format,
          // The format's words for the report's header (renderers read them there).
          ...traceFormat(read.format).report,
          files: read.files.map((f) => f.split("\\").join("/")),
          records: read.records,
          conversations: read.conversations.length,
          turns: turnsRead,
          filteredOut: read.filteredOut,
          scoredTurns: join.joined.length,
          mismatches: join.mismatchCount,
          mismatchExamples: join.mismatches,
          turnsWithoutCaseTurn: join.turnsWithoutCaseTurn,
          caseTurnsWithoutTrace: join.caseTurnsWithoutTrace,
          conversationsWithoutCase: join.conversationsWithoutCaseCount,
          conversationsWithoutCaseExamples: join.conversationsWithoutCase,
          casesWithoutTrace: join.casesWithoutTraceCount,
          casesWithoutTraceExamples: join.casesWithoutTrace,
          anonymousConversations: join.anonymousCount,
          anonymousExamples: join.anonymous,
          ...(read.unattached.turns + read.unattached.calls > 0
            ? {
                unattachedTurns: read.unattached.turns,
                unattachedCalls: read.unattached.calls,
                unattachedExamples: read.unattached.examples,
              }
            : {}),
        },
      };
    },
  };
}

type TracesSection = NonNullable<GraphRunInfo["traces"]>;

/**
 * The `run.graph.traces` section of the shards of one `--traces` run merged
 * into the unsharded run's (`retrace merge`): what each shard read of the
 * whole recording (format, files, records, conversations, turns, filtered
 * out, conversations with no case in the selection, anonymous ones) is the
 * same in every shard and taken as it is; what depends on the shard's cases
 * is summed, and its lists merged in the join's order and cut as the join
 * cuts them (src/eval/traces/join.ts).
 */
export function mergeTracesSections(sections: readonly TracesSection[]): TracesSection {
  const first = sections[0]!;
  const sum = (
    k: "scoredTurns" | "mismatches" | "turnsWithoutCaseTurn" | "caseTurnsWithoutTrace" | "casesWithoutTrace",
  ) => sections.reduce((n, s) => n + s[k], 0);
  return {
    format: first.format,
    label: first.label,
    recordsName: first.recordsName,
    files: first.files,
    records: first.records,
    conversations: first.conversations,
    turns: first.turns,
    filteredOut: first.filteredOut,
    scoredTurns: sum("scoredTurns"),
    mismatches: sum("mismatches"),
    mismatchExamples: sortMismatches(sections.flatMap((s) => s.mismatchExamples)).slice(0, JOIN_LIST_MAX),
    turnsWithoutCaseTurn: sum("turnsWithoutCaseTurn"),
    caseTurnsWithoutTrace: sum("caseTurnsWithoutTrace"),
    conversationsWithoutCase: first.conversationsWithoutCase,
    conversationsWithoutCaseExamples: first.conversationsWithoutCaseExamples,
    casesWithoutTrace: sum("casesWithoutTrace"),
    casesWithoutTraceExamples: sections
      .flatMap((s) => s.casesWithoutTraceExamples)
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
      .slice(0, JOIN_LIST_MAX),
    anonymousConversations: first.anonymousConversations,
    anonymousExamples: first.anonymousExamples,
    ...(first.unattachedTurns !== undefined ? { unattachedTurns: first.unattachedTurns } : {}),
    ...(first.unattachedCalls !== undefined ? { unattachedCalls: first.unattachedCalls } : {}),
    ...(first.unattachedExamples !== undefined ? { unattachedExamples: first.unattachedExamples } : {}),
  };
}

const METRIC_KEYS: ReadonlySet<string> = new Set(METRICS.map((m) => m.key));

/** A scored turn's retrieval results, with where the turn was recorded. */
export function scoredResults(
  report: Report,
  recorded: readonly RecordedGraphTurn[],
): { rec: RecordedGraphTurn; key: string; score: number; comment?: string }[] {
  const byTurn = new Map(recorded.map((t) => [`${t.report.caseId}#${t.report.turn}`, t]));
  const out: { rec: RecordedGraphTurn; key: string; score: number; comment?: string }[] = [];
  for (const t of report.turns) {
    const rec = byTurn.get(`${t.caseId}#${t.turn}`);
    if (rec === undefined || t.error !== undefined) continue;
    for (const r of t.results)
      if (METRIC_KEYS.has(r.key))
        out.push({ rec, key: r.key, score: r.score, ...(r.comment !== undefined ? { comment: r.comment } : {}) });
  }
  return out;
}

/** One Phoenix span annotation (the body of `POST /v1/span_annotations`: `{"data": [SpanAnnotationData, …]}`). */
export interface PhoenixSpanAnnotation {
  span_id: string;
  name: string;
  annotator_kind: "CODE";
  result: { label: string; score: number; explanation: string };
  identifier: string;
  metadata: { case: string; turn: number; trace_id: string };
}

/**
 * `--out phoenix:`: one annotation per scored turn and retrieval metric on
 * the turn's root span (`span_id`), named by the metric key, `annotator_kind`
 * CODE, the score, a label (`hit` / `miss` for hit@k, else the score to 4
 * places) and the evaluator's comment as explanation; `identifier` makes a
 * re-upload replace, not duplicate. OTLP recordings only (Phoenix annotates spans).
 */
export function phoenixAnnotations(
  report: Report,
  recorded: readonly RecordedGraphTurn[],
): { data: PhoenixSpanAnnotation[] } {
  return {
    data: scoredResults(report, recorded).map(({ rec, key, score, comment }) => ({
      span_id: rec.recorded.rootId,
      name: key,
      annotator_kind: "CODE",
      result: { label: labelOf(key, score), score, explanation: comment ?? "" },
      identifier: `retrace:${key}`,
      metadata: { case: rec.report.caseId, turn: rec.report.turn, trace_id: rec.recorded.traceId },
    })),
  };
}

/**
 * One LangSmith feedback record, the body `POST /feedback` takes (the Python
 * SDK's `FeedbackCreate`; `client.createFeedback({...})` of the JS client
 * sends these fields: docs/recorded-traces.md, "Writing the scores back").
 */
export interface LangSmithFeedback {
  /** The feedback's own id: a UUID derived from the run and the key (`feedbackId`), the same on every run of the same recording. */
  id: string;
  run_id: string;
  trace_id: string;
  /** The run's project (LangSmith's session) id, which the API needs to find the run. */
  session_id: string;
  key: string;
  /** The score rounded to 4 decimal places, the most the API stores (it rejects more precise scores sent to it directly). */
  score: number;
  value: string;
  comment: string;
  feedback_source: { type: "model"; metadata: { evaluator: "retrace"; case: string; turn: number } };
}

/** A score as LangSmith stores it: rounded to 4 decimal places (what the SDKs' `_formatFeedbackScore` does before sending). */
export function feedbackScore(score: number): number {
  return Number(score.toFixed(4));
}

/** RFC 9562 UUID version 5 (SHA-1, name-based) of `name` in `namespace`: the same name, the same id. */
export function uuidV5(namespace: string, name: string): string {
  const ns = Buffer.from(namespace.replace(/-/g, ""), "hex");
  const h = createHash("sha1").update(ns).update(name, "utf8").digest().subarray(0, 16);
  h[6] = (h[6]! & 0x0f) | 0x50;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const x = h.toString("hex");
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

/** The namespace of retrace's feedback ids (a fixed random UUID). */
const FEEDBACK_NAMESPACE = "5b0e3f0c-8d1a-4c57-9a54-2f1e6c7d9b30";

/**
 * `--out langsmith:`: one LangSmith feedback record per scored turn and
 * retrieval metric, on the turn's root run, with its trace and project ids.
 * LangSmith recordings only. A turn whose root run carries no project id
 * (`session_id` / `project_id`, which the API needs) is exit 2 naming it.
 */
export function langsmithFeedback(report: Report, recorded: readonly RecordedGraphTurn[]): LangSmithFeedback[] {
  return scoredResults(report, recorded).map(({ rec, key, score, comment }) => {
    const session = rec.recorded.projectId;
    if (session === undefined)
      throw new DataValidationError([
        {
          file: rec.recorded.where,
          field: "session_id",
          message: `root run ${rec.recorded.rootId} carries no project id (session_id, or project_id in a v2 export), which LangSmith feedback needs (--out langsmith:); export the runs with it (docs/recorded-traces.md)`,
        },
      ]);
    return {
      id: uuidV5(FEEDBACK_NAMESPACE, `${rec.recorded.rootId}\n${key}`),
      run_id: rec.recorded.rootId,
      trace_id: rec.recorded.traceId,
      session_id: session,
      key,
      score: feedbackScore(score),
      value: labelOf(key, score),
      comment: comment ?? "",
      feedback_source: {
        type: "model",
        metadata: { evaluator: "retrace", case: rec.report.caseId, turn: rec.report.turn },
      },
    };
  });
}

function labelOf(key: string, score: number): string {
  if (key.startsWith("retrieval_hit")) return score >= 1 ? "hit" : "miss";
  return score.toFixed(4);
}
