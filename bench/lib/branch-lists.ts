/**
 * Each shared collection's two branch lists, computed once and cached
 * (docs/fusion-and-tuning.md, "A default fitted across collections"): the
 * BM25 list (k1 0.9, b 0.4, `LSA_HYBRID_BM25`) and the dense list (corpus-fit
 * LSA, exact cosine in memory) of every judged query, top DEPTH with their
 * scores, plus the fitted embedder's latent share, chance share and κ. These
 * are the lists `retrace beir DIR` fuses with its shipped defaults (depth 100
 * per branch), so any fusion rule can be scored offline, many times, without
 * refitting LSA (the expensive part).
 *
 * Cache: `<cacheDir>/<collection>-<corpus hash 12>.json` (default
 * `.retrace/bench-branches/`, `BENCH_BRANCH_CACHE=DIR` elsewhere); the LSA
 * state under `<cacheDir>/lsa/` as `retrace` itself saves it.
 *
 * With `model` (a transformers.js model such as `Xenova/bge-small-en-v1.5`
 * and its precision; loco-fusion-model.bench.ts) the dense list is that
 * model's instead (exact cosine in memory over its vectors, BGE's query
 * instruction on queries), the documents embedded through the
 * content-addressed vector cache (src/retrieval/vector-cache.ts), so each
 * corpus is embedded once; the cache file is then
 * `<collection>-<corpus hash 12>-<queries>-<model>-<precision>.json` and
 * `latent` is zeros (a model has no κ).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { beirChunks, loadBeirDataset, type BeirDataset } from "../../src/research/beir.js";
import { DEFAULT_ANALYZERS } from "../../src/retrieval/analyzer.js";
import { BM25Index } from "../../src/retrieval/bm25.js";
import { InMemoryDenseIndex } from "../../src/retrieval/dense.js";
import { loadOrFitLsa } from "../../src/retrieval/embedders/lsa.js";
import { TransformersEmbedder, type ModelDtype } from "../../src/retrieval/embedders/transformers.js";
import { fingerprinted } from "../../src/retrieval/fingerprint.js";
import { vectorCacheStatsOf, withVectorCache } from "../../src/retrieval/vector-cache.js";
import type { Embedder } from "../../src/retrieval/types.js";
import { LSA_HYBRID_BM25 } from "../../src/retrieval/hybrid.js";
import type { Ranked } from "../../src/retrieval/types.js";
import { REPO_ROOT } from "./eval-set.js";

export const BRANCH_DEPTH = 100;

export interface BranchQuery {
  id: string;
  text: string;
  dense: Ranked[];
  bm25: Ranked[];
}

export interface BranchLists {
  name: string;
  latent: { share: number; chance: number; structure: number };
  queries: BranchQuery[];
  /** query id → document id → grade (positive judgments only, as loadBeirDataset reads them). */
  qrels: Map<string, Map<string, number>>;
}

export const SHARED_COLLECTIONS = ["cranfield", "cacm", "npl", "scifact"] as const;

export function sharedDir(name: string): string {
  return path.resolve(process.env.BENCH_SHARED_DATASETS ?? path.join(REPO_ROOT, "..", "shared", "datasets"), name);
}

const slim = (r: readonly Ranked[]): Ranked[] =>
  r.map((x) => ({ id: x.id, parentId: x.parentId, score: x.score, rank: x.rank }));

/** A dataset's lists from `queries` (default: its judged queries), from the cache when present. */
export async function branchLists(
  name: string,
  options: {
    dir?: string;
    cacheDir?: string;
    data?: BeirDataset;
    log?: (s: string) => void;
    /** A transformers.js model for the dense branch instead of LSA (loaded from $RETRACE_MODELS_DIR). */
    model?: { id: string; dtype: ModelDtype };
  } = {},
): Promise<BranchLists> {
  const dir = options.dir ?? sharedDir(name);
  const cacheDir =
    options.cacheDir ?? process.env.BENCH_BRANCH_CACHE ?? path.join(REPO_ROOT, ".retrace", "bench-branches");
  const data = options.data ?? (await loadBeirDataset(dir));
  const modelPart =
    options.model === undefined ? "" : `-${options.model.id.replace(/[^A-Za-z0-9.]+/g, "_")}-${options.model.dtype}`;
  const file = path.join(cacheDir, `${name}-${data.corpusHash.slice(0, 12)}-${data.queries.length}${modelPart}.json`);
  if (existsSync(file)) {
    const c = JSON.parse(readFileSync(file, "utf8")) as Omit<BranchLists, "qrels">;
    return { ...c, qrels: data.qrels };
  }
  const log = options.log ?? ((s: string) => process.stderr.write(`${s}\n`));
  const t0 = performance.now();
  const chunks = beirChunks(data.corpus);
  const bm25 = BM25Index.build(chunks, LSA_HYBRID_BM25, DEFAULT_ANALYZERS);
  let embedder: Embedder;
  let dispose = async () => {};
  if (options.model === undefined) {
    ({ embedder } = await loadOrFitLsa(chunks, { dir: path.join(cacheDir, "lsa"), analyzers: DEFAULT_ANALYZERS }));
  } else {
    const model = await TransformersEmbedder.load({
      model: options.model.id,
      quantized: options.model.dtype === "q8",
    });
    if (model.dtype !== options.model.dtype)
      throw new Error(`${options.model.id}: loaded ${model.dtype}, not ${options.model.dtype}`);
    dispose = () => model.dispose();
    embedder = withVectorCache(await fingerprinted(model), { precision: model.dtype });
  }
  const tEmbed = performance.now();
  if (options.model !== undefined) {
    // Fill the vector cache in order of length first: a batch is padded to its longest text, so like lengths
    // together cost the least; fromChunks then reads every vector back from the cache.
    const texts = [...new Set(chunks.map((c) => c.text))].sort((a, b) => a.length - b.length);
    for (let i = 0; i < texts.length; i += 32) {
      await embedder.embedDocuments(texts.slice(i, i + 32));
      if ((i / 32) % 20 === 0)
        log(`${name}: ${i + Math.min(32, texts.length - i)} / ${texts.length} documents embedded`);
    }
  }
  const dense = await InMemoryDenseIndex.fromChunks(chunks, embedder);
  const stats = vectorCacheStatsOf(embedder);
  if (stats !== undefined)
    log(
      `${name}: ${stats.embedded} documents embedded, ${stats.hits} read from the vector cache, in ${((performance.now() - tEmbed) / 1000).toFixed(1)} s`,
    );
  const queries: BranchQuery[] = [];
  for (const q of data.queries) {
    const v = await embedder.embedQuery(q.text, { locale: "en" });
    queries.push({
      id: q.id,
      text: q.text,
      dense: slim(await dense.search(v, { topN: BRANCH_DEPTH, locale: "en" })),
      bm25: slim(bm25.search(q.text, { topN: BRANCH_DEPTH, locale: "en" })),
    });
  }
  await dispose();
  const out = {
    name,
    latent: {
      share: embedder.latentShare ?? 0,
      chance: embedder.chanceShare ?? 0,
      structure: embedder.structure ?? 0,
    },
    queries,
  };
  mkdirSync(cacheDir, { recursive: true });
  writeFileSync(file, JSON.stringify(out));
  log(`${name}: branch lists computed in ${((performance.now() - t0) / 1000).toFixed(1)} s (cached at ${file})`);
  return { ...out, qrels: data.qrels };
}
