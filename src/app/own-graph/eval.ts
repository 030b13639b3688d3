/**
 * retrace's own graph as the source of an eval (../sources/own-graph.ts runs
 * it): `runOwnGraphEval` reads the configuration file, checks everything
 * checkable before a store starts (`planEval`, ../eval-plan.ts), opens the
 * judge and the system, and runs `sweepEval`: the agent graph over the open
 * system's retriever (`ownGraphSource`), swept on this thread and worker
 * threads and reported by the one body after the sweep (../evaluate.ts).
 */
import { readBaseline, type Baseline } from "../../eval/gate/baseline.js";
import { shardCases } from "../../eval/gate/shard.js";
import { cardsPerLocale } from "../../eval/measures/chance.js";
import type { Judge } from "../../eval/measures/evaluators.js";
import { RULE_BASED_ANSWERER } from "../../eval/report/parts.js";
import type { RetrievalRunConfig } from "../../eval/report/types.js";
import { ownGraphCaseOptions, startWorkerLanes } from "./parallel.js";
import { sweepRepeats } from "../../eval/sweep/repeat-loop.js";
import { sweepGraphCases, type GraphTurn, type SweepPhases } from "../../eval/sweep/external-graph.js";
import { evaluatorsFor } from "../../eval/measures/storeless.js";
import { tableLocaleFor, type EvalCase } from "../../kb/types.js";
import { log } from "../../log.js";
import { SWEEP_WORKER_ENTRY, type RetraceSystem } from "../../system.js";
import { selectCases } from "../data.js";
import {
  baselineFileFor,
  planEval,
  runDatasetHash,
  withEvalDefaults,
  type EvalOptions,
  type EvalPlan,
} from "../eval-plan.js";
import { openRunJudge, readRunQuarantine } from "../run-checks.js";
import { NO_PROGRESS, type UseCaseHooks } from "../progress.js";
import { wantsBaseline } from "../report.js";
import { evaluate, ms, type EvalOutcome } from "../evaluate.js";
import type { SweepSource } from "../sweep-source.js";
import type { JudgeCost } from "../../eval/measures/types.js";
import { embedderIdForLocale } from "../../retrieval/embedders/locale-routed.js";

import { counterfactualOf, graphDefaultsFor, openEvalSystem } from "../eval.js";

/** `{ genericLocales }` when some cases' locales have no built-in tables (docs/languages.md), else nothing. */
function genericLocalesOf(cases: readonly { locale: string }[]): { genericLocales?: string[] } {
  const generic = [...new Set(cases.map((c) => c.locale))].filter((l) => tableLocaleFor(l) === null).sort();
  return generic.length > 0 ? { genericLocales: generic } : {};
}

/**
 * What the report keeps of the traces of a sweep of retrace's own graph, in
 * dataset order: each traced turn's stage timings (keyed `caseId#turn`; wall
 * clock, so only in `timings`) and the retrieval settings of each locale
 * (`*` without one), from its first traced turn, keys sorted.
 */
export function traceFactsOf(turns: readonly GraphTurn[]): {
  timings: Record<string, Record<string, number>>;
  retrieval: Record<string, RetrievalRunConfig>;
} {
  const timings: Record<string, Record<string, number>> = {};
  const byLocale = new Map<string, RetrievalRunConfig>();
  for (const { report, retrieval } of turns) {
    const trace = retrieval?.trace;
    if (trace === undefined) continue;
    timings[`${report.caseId}#${report.turn}`] = trace.timingsMs;
    const { embedder: _e, mode: _m, rerank: _r, ...config } = trace.config;
    const locale = trace.locale ?? "*";
    // Per-locale embedders (docs/models.md): each locale names the embedder its turns ran with.
    const own = embedderIdForLocale(trace.config.embedder, locale);
    if (!byLocale.has(locale)) byLocale.set(locale, own !== undefined ? { embedder: own, ...config } : config);
  }
  return { timings, retrieval: Object.fromEntries([...byLocale].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) };
}

/**
 * retrace's own graph as the source of an eval's turns: the graph over the
 * open system's retriever, run through the one sweep of every graph
 * (src/eval/sweep/external-graph.ts) with its trace read from the returned
 * state, `--repeat N` times on fresh threads, on this thread and `workers − 1`
 * worker threads; its header names the store, embedder, mode, reranker and
 * the retrieval settings each locale ran with.
 */
export function ownGraphSource(
  o: ReturnType<typeof withEvalDefaults>,
  system: RetraceSystem,
  selected: readonly EvalCase[],
  hashOf: (cases: readonly EvalCase[]) => string,
  cases: readonly EvalCase[],
): SweepSource {
  const counterfactual = counterfactualOf(o, system.retriever !== null).enabled;
  return {
    label: "retrace's own graph",
    description: system.embedder?.description ?? "",
    async sweep(swept, _kb, evaluators, onCaseDone) {
      const phases: SweepPhases = { graph: 0, evaluate: 0 };
      // onnxruntime-node (a named model's runtime) cannot run in worker threads beside the main one: V8 aborts the
      // process ("Entering the V8 API without proper locking"). A model embedder's sweep runs on this thread alone
      // (docs/throughput.md, docs/models.md).
      const modelEmbedder = system.embedder?.setup.kind === "model-load";
      const workers = modelEmbedder ? 1 : (o.workers ?? 1);
      if (modelEmbedder && (o.workers ?? 1) > 1)
        log.warn(
          `run.workers ${o.workers}: a named model's embedder runs on one thread (onnxruntime cannot share the process with worker threads); the sweep runs on the main thread`,
        );
      const turnTimeout = o.turnTimeout !== undefined ? { turnTimeoutMs: o.turnTimeout * 1000 } : {};
      const defaults = graphDefaultsFor(system, o);
      const knownIds = new Set(system.kb.byId.keys());
      const runs = await sweepRepeats(
        o.repeat ?? 1,
        async (_r, threadPrefix, progress) => {
          const local = ownGraphCaseOptions({
            retriever: system.retriever,
            kb: system.kb,
            analyzers: system.analyzers,
            defaults,
            evaluators,
            knownIds,
            ...(system.split !== null ? { partOf: system.split.partOf } : {}),
            threadPrefix,
            k: o.k,
            counterfactual,
            ...(o.replay !== undefined ? { replay: o.replay } : {}),
          });
          // The same cases through the same graph on this thread and worker threads (src/app/own-graph/parallel.ts): the same turns, in dataset order.
          const pool =
            workers > 1
              ? startWorkerLanes({
                  workerEntry: SWEEP_WORKER_ENTRY,
                  init: {
                    recipe: system.retrieverRecipe,
                    chunks: system.chunks,
                    kb: system.kb,
                    analyzers: system.analyzers.overrides,
                    cases: swept,
                    defaults,
                    k: o.k,
                    knownIds: [...knownIds],
                    partOf: system.split !== null ? [...system.split.partOf] : null,
                    threadPrefix,
                    counterfactual,
                    ...turnTimeout,
                    ...(o.replay !== undefined ? { replay: o.replay } : {}),
                  },
                  threads: workers,
                  concurrency: o.concurrency,
                })
              : undefined;
          let sweep;
          try {
            sweep = await sweepGraphCases({
              ...local,
              cases: swept,
              concurrency: o.concurrency,
              ...turnTimeout,
              ...(progress !== undefined ? { onCaseDone: progress } : {}),
              phases,
              ...(pool !== undefined ? { lanes: pool.lanes } : {}),
            });
          } finally {
            await pool?.close();
          }
          if (workers > 1)
            log.info(
              `sweep: ${sweep.casesByThread.map((n, t) => `${n} case${n === 1 ? "" : "s"} on ${t === 0 ? "the main thread" : `worker ${t}`}`).join(", ")}`,
            );
          return sweep.turns;
        },
        onCaseDone,
      );
      const first = runs[0];
      // Stage timings (wall clock, the first repeat's), from each turn's trace in dataset order.
      return { turns: first, runs, ids: {}, phases, stageTimings: traceFactsOf(first).timings };
    },
    header: (_turns, swept) => ({
      // A filtered run (locale / case selection) measured a different dataset: its hash says so, and a baseline of the full set is refused.
      datasetHash: hashOf(cases),
      kbHash: system.hashes.kb,
      source: "own",
      embedder: system.embedder?.id ?? null,
      ...(system.embedder !== null ? { embedderDescription: `${system.embedder.description}` } : {}),
      k: o.k,
      store: system.store,
      storeKind: system.storeKind,
      mode: system.retriever === null ? "none" : o.mode,
      rerank: system.reranker?.id ?? null,
      ...genericLocalesOf(selected), // of the whole selection, so every shard of a run has the same header
      answerer: RULE_BASED_ANSWERER,
      ...(o.replay === "recorded" ? { replay: "recorded" as const } : {}),
      split: system.split?.file ?? null,
      // The retrieval settings per locale, from each locale's first traced turn in dataset order.
      ...(system.retriever !== null ? { retrieval: traceFactsOf(swept.turns).retrieval } : {}),
    }),
    // The embedder's fit (or load) apart from the store's write (docs/determinism.md: wall clock lives here only).
    setupTimings: () =>
      system.embedder !== null
        ? {
            setup: {
              embedder: {
                kind: system.embedder.setup.kind,
                ms: ms(system.embedder.setup.ms),
                ...(system.embedder.setup.chanceMs !== undefined
                  ? { chanceMs: ms(system.embedder.setup.chanceMs) }
                  : {}),
              },
              store:
                system.ingest === null ? null : { status: system.ingest.status, writeMs: ms(system.ingest.durationMs) },
            },
          }
        : {},
  };
}

/**
 * Runs the sweep of retrace's own graph over an open system and returns the
 * report (gate applied; a shard's report is partial and ungated), by the one
 * eval body (./evaluate.ts). `plan`: what `planEval` checked (its baseline
 * is used; without it the baseline is read here).
 */
export async function sweepEval(
  options: EvalOptions,
  system: RetraceSystem,
  plan?: EvalPlan,
  extra: { judge?: Judge; judgeCost?: { cost(): JudgeCost } } & UseCaseHooks = {},
): Promise<EvalOutcome> {
  const o = withEvalDefaults(options);
  const selected = selectCases(system.cases, o);
  const cases = o.shard === undefined ? selected : shardCases(selected, o.shard); // a shard: whole cases, balanced by turns (src/eval/gate/shard.ts)
  const hashOf = (cs: readonly EvalCase[]) =>
    cs.length === system.cases.length && o.replay !== "recorded"
      ? system.hashes.dataset
      : runDatasetHash([...cs], o.replay);
  let baseline: Baseline | null = plan?.baseline ?? null;
  if (o.shard === undefined && plan === undefined && wantsBaseline(o))
    baseline = await readBaseline(baselineFileFor(o));
  const quarantine =
    o.shard !== undefined ? undefined : (plan?.quarantine ?? (await readRunQuarantine(o.quarantine, system.cases)));
  return evaluate(
    {
      source: ownGraphSource(o, system, selected, hashOf, cases),
      kb: system.kb,
      selected,
      cases,
      hashOf,
      evaluators: evaluatorsFor({
        k: o.k,
        storeBacked: system.retriever !== null,
        ...(extra.judge !== undefined ? { judge: extra.judge } : {}),
      }),
      // The KB's cards per locale: the N of the chance levels (docs/statistics.md).
      cardsPerLocale: cardsPerLocale(system.kb.cards),
      counterfactual: counterfactualOf(o, system.retriever !== null),
      options: o,
      baseline,
      ...(quarantine !== undefined ? { quarantine } : {}),
      ...(extra.judgeCost !== undefined ? { judge: extra.judgeCost } : {}),
    },
    extra,
  );
}

/**
 * retrace's own graph's eval: reads the configuration file (`config`), checks
 * everything checkable before a store starts (`planEval`), loads the judge
 * module (`judge`), opens the system, runs the sweep and closes the system. Returns
 * the report (its gate applied: `report.gate.passed`) and the baseline it
 * was compared with; writes nothing (`updateBaseline`: write it with
 * `writeBaseline(baselineFileFor(options), report)`).
 */
export async function runOwnGraphEval(options: EvalOptions, hooks: UseCaseHooks): Promise<EvalOutcome> {
  // `config` was read by the one settings reader before (runEval, ../sources/registry.ts; src/app/settings/read.ts).
  const o = withEvalDefaults(options);
  const plan = await planEval(o); // before any store starts or anything is ingested (unknown case ids included)
  // The judge module is loaded and checked before any store starts too: a bad run.judge is exit 2 without a Chroma start.
  const judge = await openRunJudge(o, plan.data, o.turnTimeout !== undefined ? { turnTimeout: o.turnTimeout } : {});
  const progress = hooks.progress ?? NO_PROGRESS;
  const ingestProgress = progress("ingest", "chunks");
  const system = await openEvalSystem(o, (d, t) => ingestProgress.update(d, t), plan.data);
  ingestProgress.stop();
  try {
    return await sweepEval(o, system, plan, {
      ...(judge !== undefined ? { judge: judge.judge, judgeCost: judge } : {}),
      progress,
    });
  } finally {
    await system.close();
  }
}
