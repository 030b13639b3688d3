/**
 * `retrace score QRELS RUN` (trec_eval's own order, qrels first; or
 * `--qrels FILE --run FILE`): score a TREC run against TREC qrels
 * with trec_eval 10's definitions (success.k, recall.k, ndcg_cut.k, P.k and
 * recip_rank by default; map, map_cut, Rprec, bpref, infAP, rbp, rbp_resid,
 * unj and the counts with `-m`), printed in trec_eval's layout (`%-22s\t%s\t%6.4f`), so scripts
 * that parse trec_eval's output read this unchanged. `--json` prints the same
 * numbers as JSON. Warnings (queries left out, duplicates, skipped empty
 * queries) go to stderr. Exit 0, or 2 on bad usage or invalid files (nothing
 * is printed on stdout then). Reads only; writes nothing.
 */
import { addConfigOption } from "../settings.js";
import type { Command } from "commander";
import {
  formatTrecText,
  readQrels,
  readRunCompact,
  scoreCompact,
  scorePlan,
  toTrecJson,
  type TrecOptions,
  type TrecScores,
} from "../../eval/ir/trec.js";
import { InvalidArgumentError } from "../../errors.js";
import { log } from "../../log.js";
import { action, out } from "../io.js";
import { intListOption, intOption } from "../options.js";

export interface ScoreOptions {
  qrels: string;
  run: string;
  /** Cutoffs of the default measures (5,10 when not given); not with `measure`. */
  k?: number[];
  /** trec_eval's -m arguments, in the order given. */
  measure?: string[];
  judgedOnly?: boolean;
  depth?: number;
  level?: number;
  complete?: boolean;
  skipEmpty?: boolean;
  graded?: boolean;
  json?: boolean;
  query?: boolean;
}

/** Read both files (streaming) and score them; the in-process path the CLI and the benchmark share. */
export async function scoreFiles(
  opts: Pick<
    ScoreOptions,
    "qrels" | "run" | "k" | "measure" | "judgedOnly" | "depth" | "level" | "complete" | "skipEmpty" | "graded"
  >,
): Promise<TrecScores> {
  if (opts.measure !== undefined && opts.k !== undefined)
    throw new InvalidArgumentError(
      "-k",
      "no -k with -m (give cutoffs in trec_eval's syntax: -m P.5,10)",
      opts.k.join(","),
    );
  const options: TrecOptions = {
    ks: opts.k ?? DEFAULT_KS,
    measures: opts.measure,
    judgedOnly: opts.judgedOnly,
    depth: opts.depth,
    relevanceLevel: opts.level,
    complete: opts.complete,
    skipEmpty: opts.skipEmpty,
    graded: opts.graded,
  };
  scorePlan(options); // options checked before the files are read
  const qrels = await readQrels(opts.qrels);
  const run = await readRunCompact(opts.run);
  return scoreCompact(qrels, run, options, { qrels: opts.qrels, run: opts.run });
}

/** The default measures' cutoffs. */
const DEFAULT_KS = [5, 10];

export function register(program: Command): void {
  const cmd = program
    .command("score")
    .description(
      "Score a TREC run file against TREC qrels as trec_eval 10 does (success, recall, ndcg_cut, P at k; recip_rank; with -m: map, map_cut, Rprec, bpref, infAP, rbp, rbp_resid, unj, num_*)",
    )
    .argument("[qrels]", "TREC qrels (as trec_eval: qrels first, then the run; or --qrels)")
    .argument("[run]", "TREC run (or --run; `-` reads stdin)")
    .option("--qrels <file>", "TREC qrels: `qid iter docno rel` per line (rel >= 1 is relevant)")
    .option(
      "--run <file>",
      "TREC run: `qid Q0 docno rank score tag` per line (`-` reads stdin); ranked by score, ties by docno, as trec_eval",
    )
    .option(
      "-k, --k <list>",
      "cutoffs of the default measures (recip_rank, P, recall, ndcg_cut, success), comma-separated (default: 5,10)",
      intListOption("-k", { min: 1 }),
    )
    .option(
      "-m, --measure <measure>",
      "trec_eval's -m (repeatable): a measure with optional cutoffs (map, map_cut.10, P.5,10, unj.5,10, bpref, infAP, Rprec, rbp, rbp_resid, num_ret...) or a set (official, all_trec)",
      (raw: string, prev: string[] | undefined) => [...(prev ?? []), raw],
    )
    .option("-J, --judged-only", "rank only the judged documents (trec_eval -J: the condensed ranking)")
    .option(
      "-M, --depth <n>",
      "only the first n documents of each query count (trec_eval -M)",
      intOption("-M", { min: 1 }),
    )
    .option("-l, --level <n>", "rel >= n is relevant (trec_eval -l; default 1)", intOption("-l", { min: 1 }))
    .option("-c, --complete", "score judged queries that have no results as 0 and count them, as trec_eval -c")
    .option(
      "--skip-empty",
      "judged queries with no relevant document get no score and are not counted (the empty-gold rule)",
    )
    .option(
      "--graded",
      "use the qrels relevance values as gains for ndcg_cut and rbp, as trec_eval (default: binary gains)",
    )
    .option("--json", "print JSON {version, measures, perQuery, all, numQueries, warnings}")
    .option("-q, --query", "also print each query's values before the `all` rows, as trec_eval -q");
  // It reads no setting: --config and the project file are checked as every command checks them (the project's `k`, cards scored per turn, is not -k's cutoffs).
  addConfigOption(cmd, {
    retrievalWhy: "not a setting of retrace score (it scores a TREC run)",
    projectKeys: [],
    projectGates: false,
  })
    .addHelpText(
      "after",
      "\nOutput rows are `measure<TAB>qid<TAB>value` with trec_eval's padding and %6.4f values.\n" +
        "Unlike trec_eval, a duplicate document is kept once (first in trec order) instead of stopping the run, and a\n" +
        "judged query without results is left out with a warning; -c scores it as 0, as trec_eval -c does.",
    )
    .action(
      action(
        async (
          qrelsArg: string | undefined,
          runArg: string | undefined,
          o: Omit<ScoreOptions, "qrels" | "run"> & { qrels?: string; run?: string },
        ) => {
          const files = { qrels: [qrelsArg, o.qrels], run: [runArg, o.run] } as const;
          for (const [name, [positional, option]] of Object.entries(files))
            if (positional !== undefined && option !== undefined)
              throw new InvalidArgumentError(
                `--${name}`,
                `the ${name} file given once (as an argument or as --${name}, not both)`,
                `${positional} / ${option}`,
              );
          const qrels = qrelsArg ?? o.qrels;
          const run = runArg ?? o.run;
          if (qrels === undefined || run === undefined)
            throw new InvalidArgumentError(
              qrels === undefined ? "QRELS" : "RUN",
              "the qrels and the run file: retrace score QRELS RUN (trec_eval's order), or --qrels FILE --run FILE",
              undefined,
            );
          const opts: ScoreOptions = { ...o, qrels, run };
          const scores = await scoreFiles(opts);
          for (const w of scores.warnings) log.warn(w);
          out(
            opts.json
              ? JSON.stringify(toTrecJson(scores), null, 2)
              : formatTrecText(scores, { perQuery: opts.query ?? false }),
          );
        },
      ),
    );
}
