/**
 * `retrace tune`: the cross-validated search of fusion method, weights, RRF
 * k, depths and BM25 k1/b on the eval cases' tune part (src/app/tune.ts),
 * printed, and its configuration file written (`--out`), which `retrace
 * eval --config` and `retrace beir --config` read; `printTuning` does the
 * same for `retrace beir --tune` (docs/fusion-and-tuning.md). Progress on
 * stderr; result on stdout.
 */
import type { Command } from "commander";
import { EVAL_DEFAULTS } from "../../app/eval-defaults.js";
import { DEFAULT_FOLDS, runTune, type TuneOptions, type TuneOutcome } from "../../app/tune.js";
import { checkOutputs, writeOutputs } from "../../output-set.js";
import { candidateKey, type Candidate } from "../../research/tune.js";
import { action, out, outText } from "../io.js";
import { intOption, positiveIntOption } from "../options.js";
import { addRetired } from "../old-spellings.js";
import { addConfigOption } from "../settings.js";
import { addOutOption, outFile, renderOuts, type OutTarget } from "../out-formats.js";
import { progressReporter } from "../progress.js";

/** Where a tuning goes: the configuration file (`--out`) and JSON instead of text (`--json`). */
export interface TuningOutputs {
  out?: string;
  json?: boolean;
  /** When the tuning is not adopted (TUNE_MIN_GAIN), write nothing rather than the defaults. */
  keepDefaults?: boolean;
}

/** The preflight of a tuning's configuration file (`--out`, or `option` naming it), before anything starts: exit 2 naming the option and the path. */
export function checkTuningOutputs(o: TuningOutputs, option = "--out"): Promise<void> {
  return checkOutputs(o.out !== undefined ? [{ option, path: o.out }] : []);
}

/** Writes the configuration file (with `out`; `option` names it in messages), then prints the tuning: JSON, or the text account. */
export async function printTuning(
  t: TuneOutcome,
  o: TuningOutputs,
  option = "--out",
  extra?: { json: Record<string, unknown>; lines: readonly string[] },
): Promise<number> {
  const { cv, candidates, config, decision } = t;
  // Not adopted: the file holds the defaults, or (--keep-defaults) nothing is written.
  const write = o.out !== undefined && (decision.adopted || o.keepDefaults !== true);
  // Rendered by the output registry's `config` format (src/cli/out/config.ts), the one writer of a configuration file.
  if (write)
    await writeOutputs(
      (await renderOuts({ kind: "tuning", config }, [{ format: "config", file: o.out as string, option }])).outputs,
    );
  const written = o.out === undefined ? null : !write ? "nothing" : decision.adopted ? "tuned" : "defaults";
  if (o.json) {
    out(
      JSON.stringify(
        {
          version: 1,
          ...(t.warning !== undefined ? { warning: t.warning } : {}),
          config,
          decision: { ...decision, written },
          cv: {
            ...cv,
            heldOut: undefined,
            chosenPerFold: cv.chosenPerFold.map((i) => candidateKey(candidates[Number(i)] as Candidate)),
          },
          ...(extra?.json ?? {}),
        },
        null,
        2,
      ),
    );
    return 0;
  }
  const p = cv.paired;
  const final = candidates[decision.adopted ? cv.final : 0] as Candidate;
  outText(
    [
      `Tuned on ${t.source}: ${cv.n} groups with gold, ${candidates.length} configurations, ${t.folds}-fold cross-validation (seed ${t.seed}).`,
      `Metric: ${t.metric}.`,
      `Current defaults: ${candidateKey(candidates[0] as Candidate)} → ${cv.defaultScore.toFixed(4)} (nothing fitted).`,
      `Cross-validated score of the tuning (each group scored by the configuration chosen on the other folds): ${cv.cvScore.toFixed(4)}`,
      p === null
        ? "Paired test: n/a"
        : `Paired, tuned − defaults over groups: ${p.diff >= 0 ? "+" : ""}${p.diff.toFixed(4)}${p.ci95 === null ? "" : ` [${p.ci95[0].toFixed(4)}, ${p.ci95[1].toFixed(4)}]`} p=${p.pValue.toFixed(4)} (sign-flip randomization, ${p.method}; bootstrap CI over groups, seed ${t.seed})`,
      `Chosen per fold: ${cv.chosenPerFold.map((i) => candidateKey(candidates[Number(i)] as Candidate)).join(" | ")}`,
      `Best on all ${cv.n} groups (its in-sample score is not a held-out figure and is not shown): ${candidateKey(candidates[cv.final] as Candidate)}`,
      `Decision: ${decision.reason}.`,
      t.perLocaleNote,
      o.out === undefined
        ? "No --out given: nothing was written."
        : !write
          ? `--keep-defaults: nothing written to ${o.out} (the shipped defaults stay in force).`
          : `Config file: ${o.out} (${decision.adopted ? "the tuned configuration" : `the defaults: ${candidateKey(final)}`}).`,
      ...(t.warning !== undefined ? [`warning: ${t.warning}`] : []),
      ...(extra?.lines ?? []),
    ].join("\n"),
  );
  return 0;
}

export function register(program: Command): void {
  const cmd = program
    .command("tune")
    .description(
      "Cross-validated search of fusion method, weights, RRF k, depths and BM25 k1/b on the eval cases' tune part; writes a config file",
    )
    .option(
      "--store <auto|local|url|memory>",
      "auto: CHROMA_URL if set, else local; local: a Chroma started (and stopped) by retrace; a Chroma URL; memory: exact in-process dense index",
      EVAL_DEFAULTS.store,
    )
    .option("--kb <dir>", "knowledge-base folder", "kb")
    .option("--cases <file>", "eval cases JSONL (default <kb>/eval/cases.jsonl)")
    .option("--data-dir <dir>", "data folder of the local Chroma (default .retrace/chroma)")
    .option("-k, --k <n>", "cards scored per turn (nDCG@k)", positiveIntOption("-k"), EVAL_DEFAULTS.k)
    .option(
      "--folds <n>",
      "cross-validation folds",
      intOption("--folds", { min: 2, note: "cross-validation needs at least 2" }),
      DEFAULT_FOLDS,
    )
    .option(
      "--keep-defaults",
      "when the tuning does not clearly beat the defaults, write nothing to --out (instead of the defaults)",
    )
    .option("--json", "print JSON instead of text")
    .option(
      "--allow-synthetic",
      "tune even when every case is synthetic (refused otherwise; the warning goes into the output and the config's provenance)",
    );
  addOutOption(
    cmd,
    "tuning",
    "the chosen configuration (read by --config; the defaults when the tuning does not clearly beat them)",
  );
  // retrieval.embedder and run.{seed, maxCardBytes} are settings of --config, as on eval; the rest of retrieval is what tune searches.
  addRetired(
    addConfigOption(cmd, {
      retrievalWhy: "not a setting of retrace tune (it searches the retrieval settings and writes them)",
    }),
  ).action(
    action(async ({ outputs, ...rest }: TuneOptions & Omit<TuningOutputs, "out"> & { outputs?: OutTarget[] }) => {
      const file = outFile(outputs, "config");
      const o = { ...rest, ...(file !== undefined ? { out: file } : {}) };
      const option = outputs?.[0]?.option ?? "--out";
      await checkTuningOutputs(o, option); // --out before a store starts (exit 2)
      return printTuning(await runTune(o, { progress: progressReporter }), o, option);
    }),
  );
}
