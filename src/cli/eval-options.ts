/**
 * The options of the commands that run an eval or a trace: what a run
 * retrieves with (`eval`, `start`, `trace`), what the sweep selects, gates on
 * and writes (`eval`, `start`), and the `--graph` options (`eval`, `trace`),
 * with the lists of options each mode does not use (refused: src/cli/options.ts
 * refuseInMode). Their defaults are the use-cases' (EVAL_DEFAULTS,
 * src/app/eval-plan.ts).
 */
import { InvalidArgumentError as CommanderArgumentError, Option, type Command } from "commander";
import { InvalidArgumentError } from "../errors.js";
import { EVAL_DEFAULTS } from "../app/eval-plan.js";
import { DEFAULT_MAX_DROP } from "../eval/gate/gate.js";
import { RESAMPLE_UNITS } from "../eval/stats/bootstrap.js";
import { RETRIEVAL_CALLS } from "../eval/sweep/capture.js";
import { TRACE_FORMATS } from "../eval/traces/types.js";
import { DEFAULT_MAX_STATE_MB, DEFAULT_TURN_TIMEOUT_S } from "../eval/sweep/turn-guard.js";
import { DEFAULT_REQUEST_TIMEOUT_MS, TIMEOUT_ENV } from "../retrieval/chroma-faults.js";
import { RETRIEVAL_MODES } from "../retrieval/hybrid.js";
import { addFloorOptions } from "./floor-options.js";
import { addGithubOptions } from "./github.js";
import { addMaxCardBytesOption, countOption, positiveIntOption, positiveNumberOption, probabilityOption, seedOption, workersOption, type ModeRule } from "./options.js";
import { parseShardOption } from "./shard.js";

const collect = (v: string, prev: string[] | undefined) => [...(prev ?? []), v];

/** `STAGE=VALUE`, repeatable, into `{ stage: value }`; the value in [0, 1]. Which stages exist is checked against the run (exit 2 listing them). */
function stageOption(flag: string) {
  return (v: string, prev: Record<string, number> | undefined): Record<string, number> => {
    const m = /^([a-z0-9_-]+)=(.+)$/i.exec(v.trim());
    const x = m === null ? NaN : Number(m[2]);
    if (m === null || !Number.isFinite(x) || x < 0 || x > 1) throw new CommanderArgumentError(new InvalidArgumentError(flag, "STAGE=VALUE with VALUE between 0 and 1 (e.g. fused=0.9)", v).message);
    return { ...(prev ?? {}), [m[1] as string]: x };
  };
}

/** The options shared by `eval` and `start`: what to retrieve with (as `trace`) plus what the sweep and its gate do. */
export function addEvalOptions(cmd: Command): Command {
  return addSweepOptions(addRetrievalOptions(cmd));
}

/** What a run retrieves with: data, store, embedder, depths, mode (eval, start and trace). */
export function addRetrievalOptions(cmd: Command): Command {
  cmd
    .option("--store <auto|local|url|memory|none>", "auto: CHROMA_URL if set, else local; local: a Chroma started (and stopped) by retrace; a Chroma URL; memory: exact in-process dense index; none: store-less (retrieval not measured)", EVAL_DEFAULTS.store)
    .option("--kb <dir>", "knowledge-base folder", "kb")
    .option("--cases <file>", "eval cases JSONL (default <kb>/eval/cases.jsonl)")
    .option("-k, --k <n>", "retrieval top-k: cards scored per turn", positiveIntOption("-k"), EVAL_DEFAULTS.k)
    .option("--dense-k <n>", "chunks asked of the dense index (default 20)", positiveIntOption("--dense-k"))
    .option("--bm25-k <n>", "chunks asked of BM25 (default 20; 50 with the LSA embedder)", positiveIntOption("--bm25-k"))
    .addOption(new Option("--mode <mode>", "retrieval branches").choices([...RETRIEVAL_MODES]).default(EVAL_DEFAULTS.mode))
    .option("--embedder <auto|builtin|lsa|model>", "auto: the transformers.js model when its weights are local, else the corpus-fit LSA embedder; builtin: hashed character n-grams; lsa: corpus-fit LSA", EVAL_DEFAULTS.embedder)
    .option("--rerank <model|auto>", "rerank the fused head with a local cross-encoder (off by default)")
    .option("--data-dir <dir>", "data folder of the local Chroma (default .retrace/chroma)")
    .option("--timeout <seconds>", `deadline of each Chroma request (default ${DEFAULT_REQUEST_TIMEOUT_MS / 1000} s, or ${TIMEOUT_ENV})`, positiveNumberOption("--timeout", "seconds"))
    .option("--config <file>", "retrieval configuration file (written by retrace tune); its keys win over --dense-k/--bm25-k");
  return addMaxCardBytesOption(cmd);
}

/** What the sweep selects, gates on and writes (eval and start; not trace). */
export function addSweepOptions(cmd: Command): Command {
  addGithubOptions(cmd);
  return addFloorOptions(
    cmd.option("--locale <locale>", "only cases of this locale (repeatable)", collect).option("--case <id>", "only this case (repeatable)", collect),
    "with scopes all, golden, adversarial, tune, holdout or a locale",
  )
    .option("--baseline <file>", "compare with this baseline (default <kb>/eval/baseline.json when --max-drop/--max-flips is set); --update-baseline writes it there")
    .option("--max-drop <x>", `tolerated drop of each triad mean against the baseline, overall and per locale (default 0 against a baseline of the same dataset, KB and configuration, else ${DEFAULT_MAX_DROP})`, probabilityOption("--max-drop"))
    .option("--max-flips <n>", "tolerated number of turns whose hit@k went from 1 to 0 against the baseline (off by default)", countOption("--max-flips"))
    .option("--quarantine <file>", "turns the gate leaves out, `caseId#turn reason` a line: they stay in the report (docs/ci.md)")
    .option("--min-stage <stage=x>", "floor on the share of gold-bearing turns whose gold is still present at a stage of the funnel (query, dense, bm25, fused, reranked, parents, final; repeatable; off by default)", stageOption("--min-stage"))
    .option("--max-stage-drop <stage=x>", "tolerated drop of a stage's share against the baseline (repeatable; off by default)", stageOption("--max-stage-drop"))
    .option("--no-counterfactual", "do not also retrieve each gold-bearing turn with its raw message and standalone question (no query attribution; docs/query-attribution.md)")
    .option("--history <n>", HISTORY_HELP, countOption("--history"))
    .option("--update-baseline", "write the baseline from this run (to --baseline, default <kb>/eval/baseline.json)")
    .option("--json", "print the report as JSON (with a version field) instead of the table")
    .option("--out <file>", "also write the report as markdown")
    .option("--junit <file>", "also write JUnit XML (one test case per gold-bearing turn)")
    .option("--report-json <file>", "also write the report as JSON")
    .option("--html <file>", "also write the report as one self-contained HTML page (summary, stage funnel, turns, per-turn debugger; docs/html-report.md)")
    .option("--judge <module>", "run the groundedness judge with the LangChain chat model this module exports (or a factory of one); docs/langchain-integration.md")
    .option("--judge-cache <dir>", "where judge verdicts are cached by (model, prompt, inputs)", ".retrace/judge-cache")
    .option("--concurrency <n>", "cases in flight per thread (results are identical at any value)", positiveIntOption("--concurrency"), EVAL_DEFAULTS.concurrency)
    .option("--workers <n|auto>", "threads running cases: this one and N − 1 worker threads over the same vectors, for long sweeps on several cores (auto: one per available core; results are identical at any value; docs/throughput.md)", workersOption(), 1)
    .option("--seed <n>", "seed of the bootstrap intervals and tests", seedOption(), EVAL_DEFAULTS.seed)
    .addOption(new Option("--resample <unit>", "what the bootstrap resamples: whole cases (all turns of a case together), or single turns").choices([...RESAMPLE_UNITS]).default("case"))
    .option("--shard <i/n>", "run only shard i of n of the selected cases (whole cases, balanced by turns) and write a partial, ungated report for `retrace merge` (docs/reliability.md)", parseShardOption);
}

/** Options of retrace's own graph that `eval --graph` does not use (the graph brings its own store and retriever). */
export const UNUSED_WITH_GRAPH = ["--store", "--dense-k", "--bm25-k", "--mode", "--embedder", "--rerank", "--data-dir", "--timeout", "--config"] as const;

/** `--history N` with `--graph` (eval and trace): the window is a setting of retrace's contextualizer, a node your graph does not run. */
export const HISTORY_REFUSAL: ModeRule<{ graph?: string }> = {
  when: (o) => o.graph !== undefined,
  mode: "with --graph (it sets how many earlier turns retrace's own contextualizer may use; your graph builds its query with its own steps, which retrace does not configure)",
  unused: ["--history"],
};

/** `--history <n>` (eval, start and trace): earlier turns the built-in contextualizer may use. */
export const HISTORY_HELP = "earlier turns the contextualizer may use to build the query (default: all; 0 retrieves with the raw message)";

/**
 * The refusals of `eval --graph`, each with its true reason: retrace's
 * retrieval options (the graph brings its own store and retriever), and
 * `--workers` (the graph module is loaded into this thread, and a graph's
 * nodes and retrievers cannot be handed to worker threads; its sweep waits on
 * I/O, so `--concurrency` gives the speed-up instead).
 */
export const GRAPH_REFUSALS: readonly ModeRule<{ graph?: string }>[] = [
  { when: (o) => o.graph !== undefined, mode: "with --graph (your graph brings its own store and retriever)", unused: UNUSED_WITH_GRAPH },
  HISTORY_REFUSAL,
  {
    when: (o) => o.graph !== undefined,
    mode: "with --graph (your graph module is loaded into this one thread and cannot be shared with worker threads; a graph sweep waits on I/O, so raise --concurrency instead)",
    unused: ["--workers"],
  },
];

/** `eval --traces PATH`: score recorded traces (docs/recorded-traces.md); the four options it adds to `eval`. */
export function addTracesOptions(cmd: Command): Command {
  return cmd
    .option("--traces <path>", "score recorded traces instead of running a graph: an OTLP/JSON export (OpenInference / OTel GenAI spans) or LangSmith runs (listRuns() output), a file or a folder of them; conversations join cases by id (docs/recorded-traces.md)")
    .addOption(new Option("--traces-format <format>", "with --traces: the format of the files (default: detected per record)").choices([...TRACE_FORMATS]))
    .option("--annotations-out <file>", "with --traces (OTLP): also write Phoenix span annotations, the body of POST /v1/span_annotations, one per scored turn and metric")
    .option("--feedback-out <file>", "with --traces (LangSmith): also write LangSmith feedback records (run_id, key, score, comment), one a line, one per scored turn and metric");
}

/** The options that mean something only with `--traces` (refused without it). */
export const TRACES_ONLY = ["--traces-format", "--annotations-out", "--feedback-out"] as const;

/**
 * The refusals of `eval --traces`, each with its reason: what runs a graph
 * (the traces are scored as recorded: nothing is run), and retrace's own
 * retrieval options. `--config` is read for its `traces` section (filters).
 */
export const TRACES_REFUSALS: readonly ModeRule<{ traces?: string; graph?: string }>[] = [
  { when: (o) => o.traces !== undefined, mode: "with --traces (the traces are scored as recorded: no graph runs)", unused: ["--graph", "--input", "--configurable", "--turn-timeout", "--max-state-mb", "--counterfactual", "--repeat", "--max-flaky", "--concurrency", "--workers", "--history", "--judge", "--judge-cache"] },
  { when: (o) => o.traces !== undefined, mode: "with --traces (retrace's own retrieval does not run)", unused: UNUSED_WITH_GRAPH.filter((f) => f !== "--config") },
];

/** The options that mean something only with `--graph` (refused without it: refuseInMode). */
export const GRAPH_ONLY = ["--input", "--id-key", "--id-map", "--retrieval-call", "--configurable", "--max-errors", "--max-no-retrieval", "--allow-no-retrieval", "--catalog", "--turn-timeout", "--max-state-mb"] as const;

/** The `--graph` options (added to `eval` and, without the gate's `--max-errors`/`--max-no-retrieval`/`--allow-no-retrieval`, to `trace`). */
export function addGraphOptions(cmd: Command, { gate = true }: { gate?: boolean } = {}): Command {
  cmd
    .option("--graph <file[#export]>", "evaluate your own LangGraph graph: a .ts/.mts/.js/.mjs module exporting a compiled graph or a factory (default export name: graph)")
    .option("--input <module[#export]>", "with --graph: a module whose function (turn, case) => input builds each turn's graph input (default: a human message on the messages channel)")
    .option("--id-key <field>", "with --graph: metadata field holding the card id (default: parentId, doc_id, id, source, then Document.id)")
    .option("--id-map <module[#export]>", "with --graph: a module whose function (document) => id maps a retrieved document to a card id")
    .addOption(new Option("--retrieval-call <which>", "with --graph: which retriever calls of a turn are scored: last = the last step (all calls overlapping in time), first = the first step, all = every call").choices([...RETRIEVAL_CALLS]).default("last"))
    .option("--configurable <json|file>", "with --graph: `configurable` for your graph on every turn, a JSON object or a .json file holding one; merged under retrace's thread_id (one thread per case: retrace's thread_id wins); recorded in the report as a hash and its keys");
  if (gate)
    cmd
      .option("--max-errors <n>", "with --graph: turns whose graph run throws that the gate tolerates (default 0)", countOption("--max-errors"))
      .option("--max-no-retrieval <n>", "with --graph: gold-bearing turns with no retriever run (scored as misses) the gate tolerates (default: not gated)", countOption("--max-no-retrieval"))
      .option("--repeat <n>", "run every case n times, each on fresh threads; the report gives per-turn hit rates over the repeats, flaky turns, two-stage intervals and variance shares, and the baseline gate tests intervals (docs/ci.md); retrace's own graph is deterministic: its report says once that the repeats were identical", positiveIntOption("--repeat"), 1)
      .option("--max-flaky <n>", "with --repeat: flaky turns (hit in some repeats, missed in others) the gate tolerates (default: not gated)", countOption("--max-flaky"))
      .option("--allow-no-retrieval", "with --graph: deprecated, no effect (a turn with empty gold and no retrieval passes; a gold-bearing one is a miss: gate them with --max-no-retrieval)");
  cmd.option(
    "--counterfactual",
    "with --graph: query attribution — after each gold-bearing turn, invoke the scored retriever again with the raw message and the standalone question (extra retriever calls, counted in the report; the retriever must be side-effect free; not with --repeat; docs/query-attribution.md)",
  );
  return cmd
    .option("--catalog <file>", "with --graph: id<TAB>locale a line, standing in for --kb when your documents live in your own store")
    .option("--turn-timeout <seconds>", "with --graph: deadline of each turn; a turn still running then is an error turn and the sweep goes on (docs/reliability.md)", positiveNumberOption("--turn-timeout", "seconds"), DEFAULT_TURN_TIMEOUT_S)
    .option("--max-state-mb <n>", "with --graph: a turn whose state (serialized) exceeds this many MB is listed in the report (never failed)", positiveNumberOption("--max-state-mb", "MB"), DEFAULT_MAX_STATE_MB);
}
