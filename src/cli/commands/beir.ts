/**
 * `retrace beir DIR`: a BEIR-layout dataset benchmarked through the real
 * retrieval stack (src/app/beir.ts; docs/fusion-and-tuning.md), printed:
 * per mode nDCG@10 (graded gains), R@100, MRR@10, success@10, each with n and
 * a bootstrap interval over queries, paired tests between modes, and
 * queries/s and p50/p95 latency per mode; `--run-out DIR` keeps each mode's
 * TREC run. `--tune` cross-validates the hybrid settings instead (printed as
 * `retrace tune` prints).
 *
 * stdout: the result (table, or JSON with --json). stderr: progress and logs.
 * Exit 0; 2 bad dataset, config or option; 3 Chroma or model unavailable.
 */
import path from "node:path";
import type { Command } from "commander";
import {
  BEIR_DEPTH,
  runBeir,
  tuneBeir,
  type BeirOptions,
  type BeirOutcome,
  type BeirSplitReport,
  type FusedMargin,
  type ModeResult,
} from "../../app/beir.js";
import type { PairedComparison } from "../../eval/stats/bootstrap.js";
import { EVAL_DEFAULTS } from "../../app/eval-defaults.js";
import { DEFAULT_FOLDS } from "../../app/tune.js";
import { BEIR_MEASURES, MARGIN_MEASURES, compareModes, type BeirDataset } from "../../research/beir.js";
import { embedderSetupText } from "../../eval/report/render/table.js";
import { action, out, outText } from "../io.js";
import { intOption, positiveIntOption, probabilityOption, refuseInMode } from "../options.js";
import { addRetired } from "../old-spellings.js";
import { addConfigOption } from "../settings.js";
import { refuseSyntheticTuning, withSyntheticWarning } from "../../app/synthetic-guard.js";
import { syntheticCommand, type SyntheticFlags } from "./beir-synthetic.js";
import { progressReporter } from "../progress.js";
import { checkTuningOutputs, printTuning } from "./tune.js";

/** The options as parsed: `--modes` is a comma-separated list. */
type BeirCommandOptions = Omit<BeirOptions, "modes"> & {
  modes?: string;
  depth: number;
  seed: number;
  json?: boolean;
  tune?: boolean;
  keepDefaults?: boolean;
  split?: boolean;
  /** The `--config` values as typed (src/cli/settings.ts), named in the header. */
  configArgs?: string[];
} & SyntheticFlags;

const f4 = (x: number) => x.toFixed(4);
const ci = (c: [number, number] | null) => (c === null ? "" : ` [${f4(c[0])}, ${f4(c[1])}]`);
const signed = (x: number) => `${x >= 0 ? "+" : ""}${x.toFixed(4)}`;

function table(headers: string[], rows: string[][], right: (i: number) => boolean): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (right(i) ? c.padStart(widths[i] ?? 0) : c.padEnd(widths[i] ?? 0)))
      .join("  ")
      .trimEnd();
  return [line(headers), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n");
}

const MEASURE_LABEL = { "ndcg@10": "nDCG@10", "recall@100": "R@100" } as const;

/**
 * The headline: each fused mode − the better of bm25 and dense, one line per
 * measure (paired over queries; the stages' means are in the table below), e.g.
 * `hybrid − best stage (dense): nDCG@10 +0.0039 [-0.0123, 0.0207] p=0.6292`.
 */
export function marginLines(margins: readonly FusedMargin[]): string[] {
  return margins.flatMap((f) =>
    MARGIN_MEASURES.map((m) => {
      const x = f.byMeasure[m];
      if (x === null) return `${f.mode} − best stage: ${MEASURE_LABEL[m]} n/a`;
      const c = x.comparison;
      return `${f.mode} − best stage (${x.bestStage}): ${MEASURE_LABEL[m]} ${signed(c.diff)}${ci(c.ci95)} p=${c.pValue.toFixed(4)}`;
    }),
  );
}

/** The text report: quality (deterministic for the same data, config and seed), then speed (measured, varies run to run). */
export function renderBeir(
  data: BeirDataset,
  results: readonly ModeResult[],
  header: string[],
  seed: number,
  margins: readonly FusedMargin[] = [],
): string {
  // The headline first: the fused mode's margin over its best stage (paired over queries).
  const lines = [...marginLines(margins), ...header, ""];
  lines.push(
    table(
      ["mode", "n", ...BEIR_MEASURES.map((m) => `${m} [95% CI]`)],
      results.map((r) => [
        r.mode,
        String(r.scores.n),
        ...BEIR_MEASURES.map((m) => `${f4(r.scores.mean[m])}${ci(r.scores.ci95[m])}`),
      ]),
      (i) => i > 0,
    ),
  );
  lines.push(
    "",
    `Intervals: percentile bootstrap over queries (2,000 resamples, seed ${seed}). Paired tests (B − A, sign-flip randomization over queries, seed ${seed}, unadjusted):`,
  );
  for (let i = 0; i < results.length; i++) {
    for (let j = i + 1; j < results.length; j++) {
      const a = results[i] as ModeResult;
      const b = results[j] as ModeResult;
      const parts = (["ndcg@10", "recall@100"] as const).map((m) => {
        const c = compareModes(a.scores, b.scores, m, seed);
        return c === null ? `${m} n/a` : `Δ${m} ${signed(c.diff)}${ci(c.ci95)} p=${c.pValue.toFixed(4)}`;
      });
      lines.push(`  ${b.mode} − ${a.mode}: ${parts.join("; ")}`);
    }
  }
  lines.push("", "Speed (this machine, this run; sequential queries):");
  lines.push(
    table(
      ["mode", "queries", "queries/s", "p50 ms", "p95 ms"],
      results.map((r) => [
        r.mode,
        String(r.timing.queries),
        r.timing.qps.toFixed(1),
        r.timing.p50Ms.toFixed(2),
        r.timing.p95Ms.toFixed(2),
      ]),
      (i) => i > 0,
    ),
  );
  lines.push(`Documents: ${data.corpus.length}; judged queries run: ${data.queries.length}.`);
  return `${lines.join("\n")}\n`;
}

/** The reported part of `--tune --split`: text lines and the JSON `split` field. */
export function splitReportOutput(
  r: BeirSplitReport,
  seed: number,
): { json: Record<string, unknown>; lines: string[] } {
  const cmp = (c: PairedComparison | null) =>
    c === null ? "n/a" : `${signed(c.diff)}${ci(c.ci95)} p=${c.pValue.toFixed(4)}`;
  const json = (c: PairedComparison | null) =>
    c === null ? null : { diff: c.diff, ci95: c.ci95, pValue: c.pValue, n: c.n };
  return {
    json: {
      split: {
        description: r.description,
        kind: r.kind,
        n: r.n,
        queries: r.queries,
        mean: r.mean,
        tuned: r.tuned,
        written: r.written,
        tunedMinusDefaults: json(r.tunedMinusDefaults),
        writtenMinusDefaults: json(r.writtenMinusDefaults),
        defaultsMinusBestStage: { bestStage: r.defaultsMinusBest.bestStage, ...json(r.defaultsMinusBest.comparison) },
        writtenMinusBestStage: { bestStage: r.writtenMinusBest.bestStage, ...json(r.writtenMinusBest.comparison) },
        test: `paired sign-flip randomization, bootstrap CI over the reported queries, seed ${seed}, unadjusted`,
      },
    },
    lines: [
      "",
      `Split: ${r.description}.`,
      `Reported part (${r.n} queries, nDCG@10; none of the ${r.queries.tune.length} tuned-on queries among them): bm25 ${f4(r.mean.bm25)}, dense ${f4(r.mean.dense)}, defaults ${f4(r.mean.defaults)}, tuned (${r.tuned.candidate}) ${f4(r.mean.tuned)}, written (${r.written.adopted ? "tuned" : "the defaults"}) ${f4(r.mean.written)}`,
      `  tuned − defaults: ${cmp(r.tunedMinusDefaults)}`,
      `  written − defaults: ${cmp(r.writtenMinusDefaults)}`,
      `  defaults − best stage (${r.defaultsMinusBest.bestStage}): ${cmp(r.defaultsMinusBest.comparison)}`,
      `  written − best stage (${r.writtenMinusBest.bestStage}): ${cmp(r.writtenMinusBest.comparison)}`,
      `  (paired over the reported queries: sign-flip randomization, bootstrap CI, seed ${seed}, unadjusted)`,
    ],
  };
}

export async function beirCommand(dir: string, o: BeirCommandOptions): Promise<number> {
  const options: BeirOptions = {
    ...o,
    modes: o.modes
      ?.split(",")
      .map((m) => m.trim())
      .filter((m) => m !== ""),
  };
  // --synthetic: the family measured on synthetic and real queries (src/app/beir-synthetic.ts); with --tune, the guard rail.
  if (o.synthetic !== undefined && o.tune !== true) return syntheticCommand(dir, options, o);
  const warning =
    o.synthetic !== undefined
      ? refuseSyntheticTuning(o.allowSynthetic === true, "retrace beir --tune --synthetic")
      : null;
  if (warning !== null) options.tuneOnSynthetic = o.synthetic;
  if (o.tune) {
    const outputs = {
      ...(o.runOut !== undefined ? { out: path.join(o.runOut, "tuned-config.json") } : {}),
      ...(o.json ? { json: true } : {}),
      ...(o.keepDefaults ? { keepDefaults: true } : {}),
    };
    await checkTuningOutputs(outputs, "--run-out"); // before a store starts (exit 2)
    const t = await tuneBeir(dir, options, { progress: progressReporter });
    return printTuning(
      withSyntheticWarning(t, warning),
      outputs,
      "--run-out",
      t.report === undefined ? undefined : splitReportOutput(t.report, o.seed),
    );
  }
  const r = await runBeir(dir, options, { progress: progressReporter });
  const config = o.configArgs?.join(" ");
  if (o.json) out(beirJson(dir, r, config));
  else {
    outText(renderBeir(r.data, r.results, beirHeader(dir, r, config), r.seed, r.margins));
    const t = r.timing;
    const sec = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
    const words = {
      "lsa-fit": "LSA fit",
      "lsa-load": "LSA state loaded",
      "model-load": "model loaded",
      none: "built-in embedder",
    } as const;
    outText(
      `Wall time: ${embedderSetupText(t.embedder, words, sec)}; store write ${sec(t.storeWriteMs)} (${r.ingestStatus === "ingested" ? "embed + write" : "up to date"}); ingest (embedder included) + BM25 index ${sec(t.ingestAndIndexMs)}; ingest + all modes ${sec(t.totalMs)}.`,
    );
  }
  return 0;
}

/** The settings line: fusion and the parameters it uses (rrfK only with rrf: it is rrf's `k`, src/retrieval/fusion.ts), BM25 parameters, depths. */
export function settingsText(r: Pick<BeirOutcome, "settings" | "retrievalConfig" | "depth">): string {
  const { settings: d, retrievalConfig: c, depth } = r;
  const hybridDepth =
    c.denseK !== undefined || c.bm25K !== undefined
      ? `depth ${depth} (hybrid branches: dense ${c.denseK ?? depth}, bm25 ${c.bm25K ?? depth})`
      : `depth ${depth} per branch`;
  const shift = d.signalsShift === undefined ? "" : `; signals shift ${d.signalsShift}`;
  const kappa =
    d.latent?.structure === null || d.latent?.structure === undefined
      ? "n/a (full rank)"
      : d.latent.structure.toFixed(4);
  const latent =
    d.latent === undefined
      ? ""
      : `; LSA latent share ${d.latent.share.toFixed(4)}, chance ${d.latent.chance.toFixed(4)}, κ ${kappa}`;
  const rrfK = d.fusion === "rrf" ? ` rrfK=${d.rrfK}` : "";
  return `fusion=${d.fusion}${rrfK} weights dense ${d.weights.dense}, bm25 ${d.weights.bm25}${shift}; BM25 k1=${d.bm25.k1} b=${d.bm25.b}; ${hybridDepth}; exact dense search${latent}`;
}

function beirHeader(dir: string, r: BeirOutcome, config: string | undefined): string[] {
  const { data } = r;
  return [
    `BEIR ${dir}: ${data.corpus.length} documents, ${data.queries.length} judged queries (${r.results[0]?.scores.n ?? 0} with a positive judgment scored)`,
    `Embedder: ${r.embedder.id} (${r.embedder.description}); collection ${r.collection} (${r.ingestStatus})`,
    `Hybrid settings: ${settingsText(r)}${config !== undefined ? ` (from ${config})` : " (shipped defaults)"}`,
    `Scored with retrace's trec_eval-exact scorer: ndcg_cut_10 with graded gains, recall_100, success_10, recip_rank of the run cut at 10; -c.`,
  ];
}

function beirJson(dir: string, r: BeirOutcome, config: string | undefined): string {
  const { data, settings: d, retrievalConfig: c, depth } = r;
  return JSON.stringify(
    {
      version: 1,
      dataset: { dir, documents: data.corpus.length, queries: data.queries.length, corpusHash: data.corpusHash },
      embedder: r.embedder.id,
      collection: r.collection,
      settings: {
        fusion: d.fusion,
        rrfK: d.rrfK,
        weights: d.weights,
        ...(d.signalsShift !== undefined ? { signalsShift: d.signalsShift } : {}),
        ...(d.latent !== undefined ? { latent: d.latent } : {}),
        bm25: d.bm25,
        depth,
        hybridDenseK: c.denseK ?? depth,
        hybridBm25K: c.bm25K ?? depth,
        denseSearch: "exact",
        config: config ?? null,
      },
      seed: r.seed,
      // The headline: fused − the better stage per measure (paired over queries; null when not measurable).
      marginOverBestStage: Object.fromEntries(
        r.margins.map((f) => [
          f.mode,
          Object.fromEntries(
            MARGIN_MEASURES.map((m) => {
              const x = f.byMeasure[m];
              return [
                m,
                x === null
                  ? null
                  : {
                      bestStage: x.bestStage,
                      bestStageMean: x.comparison.meanA,
                      fusedMean: x.comparison.meanB,
                      diff: x.comparison.diff,
                      ci95: x.comparison.ci95,
                      pValue: x.comparison.pValue,
                      n: x.comparison.n,
                      test: `paired sign-flip randomization (${x.comparison.method}), bootstrap CI over queries, seed ${r.seed}, unadjusted`,
                    },
              ];
            }),
          ),
        ]),
      ),
      modes: r.results.map((m) => ({
        mode: m.mode,
        n: m.scores.n,
        mean: m.scores.mean,
        ci95: m.scores.ci95,
        timing: m.timing,
      })),
      timing: r.timing,
    },
    null,
    2,
  );
}

export function register(program: Command): void {
  const cmd = program
    .command("beir")
    .description(
      "Benchmark a BEIR-layout dataset (corpus.jsonl, queries.jsonl, qrels/test.tsv) through the real retrieval stack",
    )
    .argument("<dir>", "the dataset folder")
    .option(
      "--store <auto|local|url>",
      "auto: CHROMA_URL if set, else local; local: a Chroma started (and stopped) by retrace; or a Chroma URL",
      EVAL_DEFAULTS.store,
    )
    .option("--data-dir <dir>", "data folder of the local Chroma (default .retrace/chroma)")
    .option("--modes <list>", "comma-separated modes: bm25, dense, hybrid, hybrid+rerank (default all that apply)")
    .option(
      "--depth <n>",
      "documents retrieved per query, and asked of each branch (hybrid: a --config file's denseK/bm25K win)",
      positiveIntOption("--depth"),
      BEIR_DEPTH,
    )
    .option("--run-out <dir>", "write one TREC run file per mode there (<mode>.trec)")
    .option(
      "--tune",
      "cross-validate the hybrid settings on the dataset's queries (retrace tune) instead of benchmarking",
    )
    .option(
      "--split",
      "with --tune: tune on one part of the queries and report the other (the collection's own train part, queries_train.jsonl + qrels/train.tsv, when it has one; else a seeded half of its judged queries, --seed)",
    )
    .option(
      "--folds <n>",
      "folds of --tune",
      intOption("--folds", { min: 2, note: "cross-validation needs at least 2" }),
      DEFAULT_FOLDS,
    )
    .option(
      "--keep-defaults",
      "with --tune and --run-out: when the tuning does not clearly beat the defaults, write no tuned-config.json",
    )
    .option("--json", "print JSON (with a version field) instead of the tables")
    .option(
      "--synthetic <n>",
      "score the 12-variant family on N synthetic known-item queries and on the real qrels, and print Kendall's τ-b between the two orders (docs/synthetic-cases.md)",
      positiveIntOption("--synthetic"),
    )
    .option("--strategy <list>", "with --synthetic: comma-separated term models (naive, title, neighbours, mismatch)")
    .option(
      "--noise <p>",
      "with --synthetic: known-item noise (share of terms drawn from the collection)",
      probabilityOption("--noise"),
    )
    .option(
      "--allow-synthetic",
      "let --tune run on synthetic queries (refused otherwise: they misorder lexical and semantic retrieval)",
    )
    .action(action((dir: string, o: BeirCommandOptions) => beirCommand(dir, o)));
  // retrieval.* (embedder, rerank: also run hybrid+rerank, fusion, depths) and run.{timeout, seed} are settings of --config, as on eval.
  addRetired(addConfigOption(cmd, { retrieval: true }));
  refuseInMode<BeirCommandOptions>(cmd, [
    {
      when: (o) => o.tune === true,
      mode: "with --tune (it cross-validates the hybrid settings; nothing is benchmarked per mode or reranked)",
      unused: ["--modes", "--rerank"],
    },
    { when: (o) => o.tune !== true, mode: "without --tune", unused: ["--folds", "--keep-defaults", "--split"] },
  ]);
}
