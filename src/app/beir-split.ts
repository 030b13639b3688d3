/**
 * The `--split` of `retrace beir --tune` (./beir.ts `tuneBeir`): which
 * queries it tunes on and which it reports (the collection's own train
 * part, else a seeded split), and the scores of the reported part.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { InvalidArgumentError } from "../errors.js";
import { BEIR_FILES, BEIR_TRAIN_FILES, loadBeirDataset, type BeirDataset } from "../research/beir.js";
import { bm25Key, candidateKey, scoreUnit, type Candidate, type TuneUnit } from "../research/tune.js";
import { mulberry32, pairedComparison, type PairedComparison } from "../eval/stats/bootstrap.js";
import { log } from "../log.js";

/** Share of the judged queries the seeded split gives the tune part (the rest is the reported part). */
export const BEIR_SPLIT_TUNE_SHARE = 0.5;

/** Which queries a `--split` tunes on and which it reports, and where the parts come from. */
export interface BeirSplit {
  /** `own` (the collection's train part: queries_train.jsonl + qrels/train.tsv) or `seeded` (its judged queries split in two). */
  kind: "own" | "seeded";
  tune: BeirDataset;
  report: BeirDataset;
  description: string;
}

/**
 * The seeded query split of a collection without its own train part: the
 * judged query ids in code-unit order, shuffled by a mulberry32(seed)
 * Fisher–Yates; the first ⌈n·BEIR_SPLIT_TUNE_SHARE⌉ are the tune part, the
 * rest the reported part. The same ids and seed give the same parts on
 * every machine.
 */
export function splitQueryIds(ids: readonly string[], seed: number): { tune: string[]; report: string[] } {
  const a = [...ids].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
  const rand = mulberry32(seed);
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [a[i], a[j]] = [a[j] as string, a[i] as string];
  }
  const n = Math.ceil(a.length * BEIR_SPLIT_TUNE_SHARE);
  const byId = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);
  return { tune: a.slice(0, n).sort(byId), report: a.slice(n).sort(byId) };
}

/**
 * The two parts of `--split`: the collection's own train part when it has
 * one (`queries_train.jsonl` + `qrels/train.tsv`, BEIR's SciFact layout: tune
 * on it, report its test queries), else the seeded split of its judged
 * queries (`splitQueryIds`). A train query whose id is also a reported
 * (test) query is dropped from the tune part, with a warning: the reported
 * figure never contains a query the tuning saw.
 */
export async function splitBeirQueries(data: BeirDataset, seed: number): Promise<BeirSplit> {
  const { dir } = data;
  if (existsSync(path.join(dir, BEIR_TRAIN_FILES.queries)) && existsSync(path.join(dir, BEIR_TRAIN_FILES.qrels))) {
    const read = await loadBeirDataset(dir, BEIR_TRAIN_FILES);
    const reported = new Set(data.queries.map((q) => q.id));
    const both = read.queries.filter((q) => reported.has(q.id)).map((q) => q.id);
    if (both.length > 0)
      log.warn(
        `--split: ${both.length} query id(s) of ${BEIR_TRAIN_FILES.queries} are also judged in ${BEIR_FILES.qrels} (e.g. ${JSON.stringify(both[0])}): left out of the tune part`,
      );
    const train =
      both.length === 0
        ? read
        : {
            ...read,
            queries: read.queries.filter((q) => !reported.has(q.id)),
            qrels: new Map([...read.qrels].filter(([q]) => !reported.has(q))),
          };
    if (train.queries.length === 0)
      throw new InvalidArgumentError(
        "--split",
        `a train part (${BEIR_TRAIN_FILES.queries}) with judged queries not in the reported part`,
        `${read.queries.length} train queries, all also in ${BEIR_FILES.queries}`,
      );
    return {
      kind: "own",
      tune: train,
      report: data,
      description: `the collection's own split: tuned on ${BEIR_TRAIN_FILES.queries} + ${BEIR_TRAIN_FILES.qrels} (${train.queries.length} judged queries), reported on ${BEIR_FILES.queries} + ${BEIR_FILES.qrels} (${data.queries.length})`,
    };
  }
  const { tune, report } = splitQueryIds(
    data.queries.map((q) => q.id),
    seed,
  );
  const part = (ids: readonly string[]): BeirDataset => {
    const keep = new Set(ids);
    return {
      ...data,
      queries: data.queries.filter((q) => keep.has(q.id)),
      qrels: new Map([...data.qrels].filter(([q]) => keep.has(q))),
    };
  };
  return {
    kind: "seeded",
    tune: part(tune),
    report: part(report),
    description: `a seeded split of the ${data.queries.length} judged queries (no ${BEIR_TRAIN_FILES.queries} + ${BEIR_TRAIN_FILES.qrels}; mulberry32(${seed}) shuffle of the sorted ids, ${tune.length} tuned on, ${report.length} reported)`,
  };
}

/** The reported part of `--split`: each query scored (nDCG@10, graded) by the stages, the defaults and the configuration the tuning writes. */
export interface BeirSplitReport {
  description: string;
  /** Where the parts came from (`own`: the collection's train part; `seeded`: splitQueryIds). */
  kind: "own" | "seeded";
  /** The query ids of each part (sorted): the tuning read only `tune`, every figure below is over `report`. */
  queries: { tune: string[]; report: string[] };
  n: number;
  /** Means over the reported queries. */
  mean: { bm25: number; dense: number; defaults: number; tuned: number; written: number };
  /** The configuration best on all tune-part queries (what is written when adopted), whatever the decision: what tuning on the labelled part is worth on queries it never saw. */
  tuned: { candidate: string };
  /** What the tuning writes (the defaults unless it clearly won on the tune part) and whether that is the tuned configuration. */
  written: { candidate: string; adopted: boolean };
  /** tuned − defaults, written − defaults, and each of them − the better stage (paired over the reported queries; sign-flip test, bootstrap CI, seed). */
  tunedMinusDefaults: PairedComparison | null;
  writtenMinusDefaults: PairedComparison | null;
  defaultsMinusBest: { bestStage: "bm25" | "dense"; comparison: PairedComparison | null };
  writtenMinusBest: { bestStage: "bm25" | "dense"; comparison: PairedComparison | null };
}

/** Scores the reported part of `--split` (pure; the units' lists are already computed): `tuned` is the tune part's best candidate, written only when `adopted`. */
export function scoreReportPart(
  units: readonly TuneUnit[],
  defaults: Candidate,
  tunedCandidate: Candidate,
  adopted: boolean,
  split: Pick<BeirSplit, "kind" | "description" | "tune">,
  seed: number,
): BeirSplitReport {
  const written = adopted ? tunedCandidate : defaults;
  const per = {
    bm25: new Map<string, number>(),
    dense: new Map<string, number>(),
    defaults: new Map<string, number>(),
    tuned: new Map<string, number>(),
    written: new Map<string, number>(),
  };
  for (const u of units) {
    const bm25 = u.bm25.get(bm25Key(defaults.bm25)) ?? [];
    const put = (m: Map<string, number>, v: number | null) => {
      if (v !== null) m.set(u.group, v);
    };
    put(per.bm25, u.evaluate(bm25));
    put(per.dense, u.evaluate(u.dense));
    put(per.defaults, scoreUnit(u, defaults));
    put(per.tuned, scoreUnit(u, tunedCandidate));
    put(per.written, scoreUnit(u, written));
  }
  const mean = (m: Map<string, number>) => (m.size === 0 ? 0 : [...m.values()].reduce((a, b) => a + b, 0) / m.size);
  const means = {
    bm25: mean(per.bm25),
    dense: mean(per.dense),
    defaults: mean(per.defaults),
    tuned: mean(per.tuned),
    written: mean(per.written),
  };
  const bestStage = means.dense > means.bm25 ? "dense" : "bm25";
  const best = per[bestStage];
  const byId = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);
  const tuned = new Set(split.tune.queries.map((q) => q.id));
  const leaked = units.filter((u) => tuned.has(u.group)).map((u) => u.group);
  if (leaked.length > 0)
    throw new Error(
      `--split: ${leaked.length} reported query id(s) were tuned on (e.g. ${JSON.stringify(leaked[0])}); the parts must be disjoint`,
    );
  return {
    description: split.description,
    kind: split.kind,
    queries: { tune: split.tune.queries.map((q) => q.id).sort(byId), report: units.map((u) => u.group).sort(byId) },
    n: per.defaults.size,
    mean: means,
    tuned: { candidate: candidateKey(tunedCandidate) },
    written: { candidate: candidateKey(written), adopted },
    tunedMinusDefaults: pairedComparison(per.defaults, per.tuned, { seed }),
    writtenMinusDefaults: pairedComparison(per.defaults, per.written, { seed }),
    defaultsMinusBest: { bestStage, comparison: pairedComparison(best, per.defaults, { seed }) },
    writtenMinusBest: { bestStage, comparison: pairedComparison(best, per.written, { seed }) },
  };
}
