/**
 * The report JSON itself, schemaVersion 5 (docs/architecture.md §7): its
 * sections put together, the migrations from versions 1 to 4, and
 * `parseReport`.
 *
 * One section of the schemas indexed by ../schemas.ts (src/eval/report/schemas.ts).
 */
import { z } from "zod";
import { AggregateSchema, splitGroups } from "./aggregate.js";
import { AnswerSideSchema } from "./answer-side.js";
import { GroupDeltaSchema } from "./deltas.js";
import { FunnelSchema, RecallCurvesSchema } from "./funnel.js";
import { GateResultSchema } from "./gate.js";
import { JudgeInfoSchema } from "./judge.js";
import { JudgmentsSchema } from "./judgments.js";
import { count } from "./primitives.js";
import { QueryAttributionSchema } from "./query-attribution.js";
import { repeatsObject } from "./repeats.js";
import { RunInfoSchema } from "./run.js";
import { ShardSchema } from "./shard.js";
import { TimingsSchema } from "./timings.js";
import { TurnReportSchema } from "./turn.js";
import { migrateRetrievalRecord } from "./legacy-retrieval.js";
import { legacySourceOf } from "./legacy-graph-id.js";
import { withTraceWords } from "./legacy-trace-words.js";
import { REPORT_VERSION, assertMatches, declaredVersion, versionError } from "./versions.js";

const reportObject = z.object({
  schemaVersion: z.literal(REPORT_VERSION),
  run: RunInfoSchema,
  aggregates: z.record(AggregateSchema),
  splits: z
    .object({
      kind: splitGroups,
      locale: splitGroups,
      /** Extension: per part of the split (`tune`, `holdout`), every key; absent without a split (docs/holdout.md). */
      part: splitGroups.optional(),
    })
    // Any further split of the cases, same shape (docs/statistics.md); a split a report does not have reads as undefined.
    .catchall(splitGroups.optional()),
  /** Keys not measured in this run (docs/architecture.md §7). */
  vacuous: z.array(z.string()),
  /** Why each vacuous key was not measured. */
  vacuousReasons: z.record(z.string()),
  turns: z.array(TurnReportSchema),
  gate: GateResultSchema.nullable(),
  /** Extension: per-split deltas (kind vs golden, locale vs the reference locale) with their tests (docs/statistics.md). */
  deltas: z.array(GroupDeltaSchema).optional(),
  /** Extension: how the ci95 intervals and p-values were resampled, so they can be reproduced (docs/statistics.md). */
  bootstrap: z
    .object({
      seed: z.number().int(),
      samples: z.number().int().positive(),
      /** What was resampled: whole cases (default) or single turns. */
      unit: z.enum(["case", "turn"]).optional(),
      /** How deltas were tested and adjusted. */
      test: z.string().optional(),
      correction: z.string().optional(),
    })
    .optional(),
  /** Extension: card counts behind the chance levels, and small-KB warnings (docs/statistics.md). */
  chance: z
    .object({
      cardsPerLocale: z.record(count),
      warnings: z.array(z.string()),
      /** The warnings as the first screen words them (two or more locales' on one line); absent when that is `warnings`, and in reports written before it. */
      screen: z.array(z.string()).optional(),
    })
    .optional(),
  /** Extension: where the answer-side headline figures come from (held-out turns, or all turns without a split). */
  answerSide: AnswerSideSchema.optional(),
  /** Extension: query attribution (docs/query-attribution.md); absent in reports written before it. */
  queryAttribution: QueryAttributionSchema.optional(),
  /** Extension: the stage funnel with case-level intervals (docs/metrics.md); absent when no turn had a trace. */
  funnel: FunnelSchema.optional(),
  /** Extension: recall@k per stage for k = 1..maxK, overall and per locale, computed at build (src/eval/report/recall-curves.ts); absent in reports written before it. */
  recallCurves: RecallCurvesSchema.optional(),
  /**
   * Extension: the gold-bearing turns counted and the missed turns (hit@k = 0,
   * no error) listed by index into `turns` and counted, computed at build
   * (src/eval/report/turn-outcomes.ts); filled on read in reports written before it.
   */
  turnOutcomes: z.object({ goldBearing: count, missed: count, missedTurns: z.array(count) }).optional(),
  /**
   * Extension: the summary's columns (`group` a kind) and tables (`group: null`) that repeat the all column, with the
   * words why (docs/html-report.md, "Summary"; src/eval/report/turn-outcomes.ts); filled on read in reports written before it.
   */
  summaryRepeats: z.array(z.object({ split: z.string(), group: z.string().nullable(), why: z.string() })).optional(),
  /** Extension: graded relevance and judged@k (docs/metrics.md): present only when a turn carries `relevant` or `judged`. */
  judgments: JudgmentsSchema.optional(),
  /**
   * Extension: the measures that need judged-non-relevant information and why
   * none was computed (docs/metrics.md, "Incomplete judgments in reports"):
   * present when turns with gold were scored but none carries `judged` or
   * graded `relevant`; absent otherwise (and in reports written before it).
   */
  measuresNotComputed: z.array(z.object({ keys: z.array(z.string()), reason: z.string() })).optional(),
  /** Extension: the groundedness judge (model, prompt, unparsable replies; present only when `--judge` ran one). What it cost is in `timings.judge`. */
  judge: JudgeInfoSchema.optional(),
  /** Extension: present only with `--repeat N` (N ≥ 2) on a `--graph` run: flaky turns, two-stage intervals, variance shares. */
  repeats: repeatsObject.optional(),
  /** Extension: present only on the partial report of one shard (`retrace eval --shard i/n`; docs/reliability.md). */
  shard: ShardSchema.optional(),
  /** Wall-clock figures only (never compared): see `Timings` (docs/determinism.md). */
  timings: TimingsSchema.optional(),
});
/** The report JSON, schemaVersion 5 (docs/architecture.md §7): one object, built by `buildReport`, from which every rendering is made. */
export interface Report extends z.output<typeof reportObject> {}
export const ReportSchema: z.ZodType<Report> = reportObject;

/**
 * Report 1 → 2: `version: 1` becomes `schemaVersion: 2` (first key, as
 * written by retrace); every other field is kept as it is. Pure; the result
 * is then checked by ReportSchema.
 */
export function migrateReportV1(v1: Record<string, unknown>): Record<string, unknown> {
  const { version: _version, ...rest } = v1;
  // Version 1 kept its wall-clock figures in `run`; version 2 has them in `timings` (docs/determinism.md).
  const run = (typeof rest.run === "object" && rest.run !== null ? rest.run : {}) as Record<string, unknown>;
  const { started, durationMs, ...runRest } = run;
  const timings =
    typeof started === "string" && typeof durationMs === "number"
      ? { timings: { started, durationMs, turns: {} } }
      : {};
  return { schemaVersion: 2, ...rest, run: runRest, ...timings };
}

/**
 * Report 2 → 3: the judge's run-dependent counters (`calls`, `cached`,
 * `inputTokens`, `outputTokens`) move from the `judge` section into
 * `timings.judge` (docs/determinism.md); `model`, `prompt` and `unparsable`
 * stay. Every other field and the key order are kept. A version 2 report
 * without a `timings` section keeps no counters (retrace always wrote one).
 * Pure; the result is then checked by ReportSchema.
 */
export function migrateReportV2(v2: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...v2, schemaVersion: 3 };
  const judge = v2.judge;
  if (typeof judge !== "object" || judge === null || Array.isArray(judge)) return out;
  const { calls, cached, inputTokens, outputTokens, ...info } = judge as Record<string, unknown>;
  out.judge = info;
  const timings = v2.timings;
  if (typeof timings === "object" && timings !== null && !Array.isArray(timings) && calls !== undefined)
    out.timings = { ...(timings as Record<string, unknown>), judge: { calls, cached, inputTokens, outputTokens } };
  return out;
}

/**
 * Report 3 → 4: each `run.retrieval` entry's named settings of retrace's
 * retriever become the opaque `{ fusion: { method, params }, settings }`
 * (legacy-retrieval.ts); every other field and the key order are kept. Pure;
 * the result is then checked by ReportSchema.
 */
export function migrateReportV3(v3: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...v3, schemaVersion: 4 };
  const run = v3.run;
  if (typeof run === "object" && run !== null && !Array.isArray(run) && "retrieval" in run)
    out.run = { ...run, retrieval: migrateRetrievalRecord((run as { retrieval: unknown }).retrieval) };
  return out;
}

/**
 * Report 4 → 5: a run's identity gets its own field. `run.source` is set
 * from the old `run.embedder` by legacy-graph-id.ts, the one reader of the
 * old graph: prefix (a graph's module and export → `graph`, the recording's
 * placeholder → `traces`, anything else → `own`); a graph's or a recording's `embedder`
 * becomes null. `source` goes just before `embedder`; every other field and
 * the key order are kept. Pure; the result is then checked by ReportSchema.
 */
export function migrateReportV4(v4: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...v4, schemaVersion: REPORT_VERSION };
  const run = v4.run;
  if (typeof run !== "object" || run === null || Array.isArray(run)) return out;
  const { source, embedder } = legacySourceOf((run as Record<string, unknown>).embedder);
  const migrated: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(run)) {
    if (key === "source") continue;
    if (key === "embedder") {
      migrated.source = source.kind;
      migrated.embedder = embedder;
    } else migrated[key] = value;
  }
  if (!("source" in migrated)) migrated.source = source.kind;
  out.run = migrated;
  return out;
}

/**
 * A report JSON read back from disk (`retrace eval --report-json` / `--json`)
 * before `retrace report`, `retrace compare`, `retrace merge`, the gate or
 * `retrace baseline floors` use it: validated by ReportSchema (a version 1
 * or 2 file migrated first), so a missing or malformed field is a
 * DataValidationError naming the file and the field (e.g.
 * `turns[3].results`), exit 2 — never a TypeError deep inside a statistic
 * (docs/gates-and-exit-codes.md). The report comes back as it was read: key
 * order and fields the schema does not know are kept, so a report rendered
 * again from its file has the bytes it was written with.
 */
export function parseReport(data: unknown, file: string): Report {
  const version = declaredVersion(data);
  if (version === REPORT_VERSION) {
    const filled = withTraceWords(data);
    assertMatches(ReportSchema, filled, file);
    return filled;
  }
  if (version === 1 || version === 2 || version === 3 || version === 4) {
    const v2 = version === 1 ? migrateReportV1(data as Record<string, unknown>) : (data as Record<string, unknown>);
    const v3 = version === 3 || version === 4 ? v2 : migrateReportV2(v2);
    const v4 = version === 4 ? v3 : migrateReportV3(v3);
    const migrated = withTraceWords(migrateReportV4(v4));
    assertMatches(ReportSchema, migrated, file);
    return migrated;
  }
  throw versionError(file, "report", REPORT_VERSION, version, "1, 2, 3 or 4");
}
