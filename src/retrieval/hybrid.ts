/**
 * The hybrid retriever (docs/architecture.md §4; docs/decisions/0004-fusion-keyed-by-id.md):
 *
 *   query → (embed → dense top denseK) ‖ (BM25 top bm25K) → fusion (rrf | minmax | zscore | combmnz |
 *           adaptive | signals, per-list weights; docs/fusion-and-tuning.md)
 *         → optional cross-encoder rerank of the fused head → parent dedup → top-k card ids
 *
 * Every call returns the full RetrievalTrace (docs/architecture.md §5): each stage's ranked list,
 * the resolved configuration, and per-stage timings in milliseconds (`embed`,
 * `dense`, `bm25`, `fusion`, `rerank`, `parents`, `total`; a stage that did not
 * run has no key). Modes: "hybrid" (both branches fused), "dense" (fused = the
 * dense list, BM25 not run) and "bm25" (fused = the BM25 list, nothing embedded).
 * The branches run one after the other so that each timing is its own.
 */
import { RETRIEVAL_MODES, type OpaqueSetting } from "../contract/trace.js";
import { InvalidArgumentError } from "../errors.js";
import { LOCALE_EXPECTED, NON_BLANK_QUERY, isBlankText, isLocale, type Chunk } from "../kb/types.js";
import type { Analyzers } from "./analyzer.js";
import { BM25Index, BM25_B, BM25_K1, type BM25Params } from "./bm25.js";
import type { DenseIndex } from "./dense.js";
import {
  RRF_K,
  assertFusionParam,
  assertNonNegativeFinite,
  assertPositiveInteger,
  fuse,
  fuseParams,
  fusionMethod,
  renumber,
  SIGNALS_SHIFT,
  type FusionInput,
  type FusionMethod,
} from "./fusion.js";
import { dedupeParents, topK } from "./parents.js";
import { rerankHead } from "./rerank.js";
import type {
  Embedder,
  Ranked,
  RetrievalMode,
  RetrievalStages,
  RetrievalTrace,
  Reranker,
  RetrieveOptions,
  Retriever,
} from "./types.js";

export { RETRIEVAL_MODES };

export interface HybridDefaults {
  /** Final number of card ids (top-k after parent dedup). */
  k: number;
  /** Chunks asked of the dense index. */
  denseK: number;
  /** Chunks asked of BM25. */
  bm25K: number;
  /** How the two branches are fused in hybrid mode. */
  fusion: FusionMethod;
  /** The RRF constant (used when `fusion` is "rrf"). */
  rrfK: number;
  mode: RetrievalMode;
  /** Rerank the fused head with the cross-encoder (needs `reranker`). */
  rerank: boolean;
  /** How many fused chunks the cross-encoder rescored. */
  rerankHead: number;
  /** Fusion weight of each branch (0 allowed); for min-max CombSUM, α = dense / (dense + bm25). */
  weights: { dense: number; bm25: number };
  /** δ of the `signals` fusion (used when `fusion` is "signals"): 0 over an LSA embedder with κ (its weight is λ·κ already), else SIGNALS_SHIFT. */
  signalsShift: number;
}

export const HYBRID_DEFAULTS: Readonly<HybridDefaults> = Object.freeze({
  k: 5,
  denseK: 20,
  bm25K: 20,
  fusion: "rrf",
  rrfK: RRF_K,
  mode: "hybrid",
  rerank: false,
  signalsShift: SIGNALS_SHIFT,
  rerankHead: 20,
  weights: Object.freeze({ dense: 1, bm25: 1 }),
});

/**
 * The shipped defaults over the corpus-fit LSA embedder (docs/fusion-and-tuning.md,
 * "Choosing the shipped default" and "A default fitted across collections"):
 * min-max CombSUM over top 20 dense and top 50 BM25 chunks, with BM25 k1
 * 0.9, b 0.4 (`LSA_HYBRID_BM25`, Anserini's), depths and BM25 chosen by
 * pooled 5-fold cross-validation over the eval set's tune part and Cranfield
 * (bench/choose-default.ts). The weights here (dense 0.9 / BM25 0.1) are the
 * upper end: a HybridRetriever sets the collection-level dense weight from
 * the fitted embedder's chance-corrected latent share, α = λ·κ
 * (`lsaStructureWeight`, λ fitted across four collections and chosen by its
 * worst leave-one-collection-out case, bench/loco-fusion.bench.ts; the latent
 * share, `lsaDenseWeight`, for a state without a chance baseline;
 * `hybridDefaultsFor`). Until issue 37 the fusion was the per-query
 * `signals` (λ 5.4, fitted on Cranfield alone), which lost 0.05–0.08
 * nDCG@10 to BM25 on CACM, NPL and SciFact; it stays selectable
 * (`fusion: "signals"`). They are tied to the embedder: a dense weight of
 * 0.9 over the hashed n-grams (a weaker, lexical copy of BM25) would lose to
 * BM25 alone, so a model embedder has its own (MODEL_HYBRID_DEFAULTS) and
 * every other embedder keeps HYBRID_DEFAULTS (RRF).
 */
export const LSA_HYBRID_DEFAULTS: Readonly<HybridDefaults> = Object.freeze({
  ...HYBRID_DEFAULTS,
  bm25K: 50,
  fusion: "minmax",
  weights: Object.freeze({ dense: 0.9, bm25: 0.1 }),
});

/** BM25 k1 and b of the index a HybridRetriever over the LSA embedder builds when none are given. */
export const LSA_HYBRID_BM25: Readonly<{ k1: number; b: number }> = Object.freeze({ k1: 0.9, b: 0.4 });

/**
 * The shipped defaults over a **model embedder** (a transformers.js model named
 * by id and precision, `Xenova/bge-small-en-v1.5@fp32` / `@q8`; issue 56;
 * docs/fusion-and-tuning.md, "The default over a model embedder"): CombMNZ
 * over min-max normalised scores with dense 0.6 / BM25 0.4, and BM25 k1 0.9,
 * b 0.4 (MODEL_HYBRID_BM25). Chosen leave-one-collection-out across Cranfield,
 * CACM, NPL and SciFact with bge-small-en-v1.5 (bench/loco-model.bench.ts): the
 * candidate with the highest worst held-out nDCG@10 margin over the better
 * stage among those whose held-out R@100 never falls more than 0.01 below
 * the better stage's; the weight is the one fitted on all four. Depths stay
 * HYBRID_DEFAULTS' (20 per branch over a KB; `retrace beir` searches 100).
 */
export const MODEL_HYBRID_DEFAULTS: Readonly<HybridDefaults> = Object.freeze({
  ...HYBRID_DEFAULTS,
  fusion: "combmnz",
  weights: Object.freeze({ dense: 0.6, bm25: 0.4 }),
});

/** BM25 k1 and b of the index a HybridRetriever over a model embedder builds when none are given (those of the study). */
export const MODEL_HYBRID_BM25: Readonly<{ k1: number; b: number }> = LSA_HYBRID_BM25;

/** An embedder id that names one transformers.js model and its precision (`<model>@fp32`, `<model>@q8`), not a per-locale mix. */
export function isModelEmbedderId(id: string): boolean {
  return !id.startsWith("locales(") && /^[^\s@]+\/[^\s@]+@(fp32|q8)$/.test(id);
}

/** Bounds of the LSA default dense weight (`lsaDenseWeight`). */
export const LSA_DENSE_WEIGHT_RANGE: Readonly<{ min: number; max: number }> = Object.freeze({ min: 0.1, max: 0.9 });

/**
 * The collection-level dense weight α of the fusion over an LSA embedder
 * whose state has no chance baseline (before κ; `lsaStructureWeight` is the
 * default otherwise; the `signals` fusion then shifts it by SIGNALS_SHIFT
 * and moves it per query): its `latentShare` (the share of the corpus's TF-IDF energy the latent axes
 * keep) clamped to [0.1, 0.9] and rounded to 0.01; BM25 weighs 1 − α. No
 * labels are read: a latent space that explains most of the corpus's term
 * structure is trusted most (the shipped KB: 0.90), one that explains little
 * least (Cranfield 0.43; a random-word corpus 0.10, where BM25 alone is
 * near perfect). 0.9 when the share is unknown.
 */
export function lsaDenseWeight(latentShare?: number): number {
  if (latentShare === undefined || !Number.isFinite(latentShare)) return LSA_DENSE_WEIGHT_RANGE.max;
  const a = Math.min(LSA_DENSE_WEIGHT_RANGE.max, Math.max(LSA_DENSE_WEIGHT_RANGE.min, latentShare));
  return Math.round(a * 100) / 100;
}

/**
 * λ of `lsaStructureWeight`: the collection-level dense weight per unit of κ.
 * Fitted across the four shared collections (Cranfield, CACM, NPL, SciFact)
 * with min-max CombSUM and judged leave-one-collection-out
 * (bench/loco-fusion.bench.ts; docs/fusion-and-tuning.md, "A default fitted
 * across collections"). Until issue 37: 5.4, fitted on Cranfield alone with
 * the `signals` fusion.
 */
export const LSA_STRUCTURE_LAMBDA = 2.5;

/**
 * The collection-level dense weight α over an LSA embedder whose
 * chance-corrected latent share is `structure` (κ, `LsaEmbedder.structure`):
 * λ·κ clamped to [0.1, 0.9] (LSA_DENSE_WEIGHT_RANGE) and rounded to 0.01,
 * λ = LSA_STRUCTURE_LAMBDA. A latent space that keeps no more than chance
 * (κ ≤ 0: words without co-occurrence structure, at any corpus size) gets
 * the lower bound; unlike the raw latent share, κ does not grow as the
 * corpus shrinks.
 */
export function lsaStructureWeight(structure: number, lambda: number = LSA_STRUCTURE_LAMBDA): number {
  if (!Number.isFinite(structure)) return LSA_DENSE_WEIGHT_RANGE.min;
  const a = Math.min(LSA_DENSE_WEIGHT_RANGE.max, Math.max(LSA_DENSE_WEIGHT_RANGE.min, lambda * structure));
  return Math.round(a * 100) / 100;
}

/**
 * The defaults a HybridRetriever over this embedder starts from: for the
 * corpus-fit LSA embedder (id `lsa-…`) LSA_HYBRID_DEFAULTS (min-max fusion) with the dense
 * weight `lsaStructureWeight(embedder.structure)` and signals shift 0, used only if a caller
 * selects `signals` (when κ is not known: `lsaDenseWeight(embedder.latentShare)` and SIGNALS_SHIFT) and
 * LSA_HYBRID_BM25; for a model embedder (`isModelEmbedderId`) MODEL_HYBRID_DEFAULTS and
 * MODEL_HYBRID_BM25; HYBRID_DEFAULTS and BM25's own k1 1.2, b 0.75 for every
 * other embedder (the built-in hashed n-grams, a per-locale mix `locales(…)`).
 * Computable without labels: it reads the embedder's id, latent share and κ only.
 */
export function hybridDefaultsFor(embedder: { id: string; latentShare?: number; structure?: number }): {
  defaults: Readonly<HybridDefaults>;
  bm25: Readonly<{ k1: number; b: number }>;
} {
  if (isModelEmbedderId(embedder.id)) return { defaults: MODEL_HYBRID_DEFAULTS, bm25: MODEL_HYBRID_BM25 };
  if (!/^lsa-\d+-/.test(embedder.id)) return { defaults: HYBRID_DEFAULTS, bm25: { k1: BM25_K1, b: BM25_B } };
  // κ known (every fit since the chance baseline): α = λ·κ, no signals shift (λ includes it); else the latent share and the fixed shift.
  const known = embedder.structure !== undefined && Number.isFinite(embedder.structure);
  const dense = known ? lsaStructureWeight(embedder.structure as number) : lsaDenseWeight(embedder.latentShare);
  const weights = Object.freeze({ dense, bm25: Math.round((1 - dense) * 100) / 100 });
  return {
    defaults: Object.freeze({ ...LSA_HYBRID_DEFAULTS, weights, signalsShift: known ? 0 : SIGNALS_SHIFT }),
    bm25: LSA_HYBRID_BM25,
  };
}

export interface HybridRetrieverOptions {
  /** The chunks behind both indexes: BM25 is built from them (unless given) and the reranker reads their text. */
  chunks: readonly Chunk[];
  embedder: Embedder;
  dense: DenseIndex;
  /** A prebuilt BM25 index over the same chunks; built from `chunks` with `bm25Params` (unset keys: the embedder's, `hybridDefaultsFor`) when absent. */
  bm25?: BM25Index;
  bm25Params?: BM25Params;
  /**
   * The analyzers the BM25 index is built with (a KB's `<kb>/analyzers.json`:
   * `loadKbAnalyzers`, `createAnalyzers`); default: the default profile. With a
   * prebuilt `bm25`, its own (giving different ones is an error).
   */
  analyzers?: Analyzers;
  reranker?: Reranker;
  defaults?: Partial<Omit<HybridDefaults, "weights">> & { weights?: Partial<HybridDefaults["weights"]> };
}

function assertMode(name: string, mode: unknown): asserts mode is RetrievalMode {
  if (!(RETRIEVAL_MODES as readonly unknown[]).includes(mode)) {
    throw new InvalidArgumentError(name, `one of ${RETRIEVAL_MODES.join(", ")}`, mode);
  }
}

/** The method name is checked by the fusion registry (src/retrieval/fusion/registry.ts), the one place that knows the methods. */
function assertFusion(name: string, value: unknown): asserts value is FusionMethod {
  fusionMethod(value, name);
}

function assertBoolean(name: string, value: unknown): asserts value is boolean {
  if (typeof value !== "boolean") throw new InvalidArgumentError(name, "a boolean", value);
}

/** The settings a retrieval runs with, checked the same way as defaults and per call. */
type CheckedSettings = Pick<
  HybridDefaults,
  "k" | "denseK" | "bm25K" | "rrfK" | "fusion" | "mode" | "rerank" | "weights"
> & { rerankHead?: number };

/** Throws InvalidArgumentError naming the first setting out of range (rerank needs a reranker). */
function assertSettings(s: CheckedSettings, hasReranker: boolean): void {
  assertPositiveInteger("k", s.k);
  assertPositiveInteger("denseK", s.denseK);
  assertPositiveInteger("bm25K", s.bm25K);
  assertFusionParam("rrf", "k", s.rrfK, "rrfK");
  assertFusion("fusion", s.fusion);
  assertMode("mode", s.mode);
  assertBoolean("rerank", s.rerank);
  if (s.rerankHead !== undefined) assertPositiveInteger("rerankHead", s.rerankHead);
  assertNonNegativeFinite("weights.dense", s.weights.dense);
  assertNonNegativeFinite("weights.bm25", s.weights.bm25);
  if (s.rerank && !hasReranker) throw new InvalidArgumentError("rerank", "false when no reranker is configured", true);
}

/** Milliseconds since `start`, to the microsecond. */
function since(start: number): number {
  return Math.round((performance.now() - start) * 1000) / 1000;
}

export class HybridRetriever implements Retriever {
  readonly embedder: Embedder;
  readonly dense: DenseIndex;
  readonly bm25: BM25Index;
  readonly reranker: Reranker | undefined;
  readonly defaults: Readonly<HybridDefaults>;
  private readonly textById: Map<string, string>;

  constructor(options: HybridRetrieverOptions) {
    const d = options.defaults ?? {};
    // The embedder decides the base defaults (hybridDefaultsFor); the given ones win.
    const base = hybridDefaultsFor(options.embedder);
    const defaults: HybridDefaults = {
      k: d.k ?? base.defaults.k,
      denseK: d.denseK ?? base.defaults.denseK,
      bm25K: d.bm25K ?? base.defaults.bm25K,
      fusion: d.fusion ?? base.defaults.fusion,
      rrfK: d.rrfK ?? base.defaults.rrfK,
      mode: d.mode ?? base.defaults.mode,
      rerank: d.rerank ?? base.defaults.rerank,
      rerankHead: d.rerankHead ?? base.defaults.rerankHead,
      signalsShift: d.signalsShift ?? base.defaults.signalsShift,
      weights: {
        dense: d.weights?.dense ?? base.defaults.weights.dense,
        bm25: d.weights?.bm25 ?? base.defaults.weights.bm25,
      },
    };
    assertSettings(defaults, options.reranker !== undefined);
    this.defaults = Object.freeze({ ...defaults, weights: Object.freeze({ ...defaults.weights }) });
    this.embedder = options.embedder;
    this.dense = options.dense;
    this.reranker = options.reranker;
    this.textById = new Map();
    for (const c of options.chunks) {
      if (this.textById.has(c.id)) throw new InvalidArgumentError("chunks", "unique chunk ids", c.id);
      this.textById.set(c.id, c.text);
    }
    if (options.bm25 !== undefined && options.analyzers !== undefined && options.analyzers !== options.bm25.analyzers) {
      throw new InvalidArgumentError(
        "analyzers",
        "the analyzers the given bm25 index was built with (or none)",
        options.analyzers.overrides,
      );
    }
    this.bm25 =
      options.bm25 ??
      BM25Index.build(
        options.chunks,
        { k1: options.bm25Params?.k1 ?? base.bm25.k1, b: options.bm25Params?.b ?? base.bm25.b },
        options.analyzers,
      );
  }

  /** The analyzers of the BM25 branch (its index's). */
  get analyzers(): Analyzers {
    return this.bm25.analyzers;
  }

  async retrieve(query: string, options?: RetrieveOptions): Promise<RetrievalTrace> {
    const start = performance.now();
    if (typeof query !== "string") throw new InvalidArgumentError("query", "a string", query);
    // Blank after Unicode white space and format characters (NBSP, zero-width space, ZWJ, BOM): nothing to retrieve for.
    if (isBlankText(query)) throw new InvalidArgumentError("query", NON_BLANK_QUERY, query);
    const o = options ?? {};
    const k = o.k ?? this.defaults.k;
    const denseK = o.denseK ?? this.defaults.denseK;
    const bm25K = o.bm25K ?? this.defaults.bm25K;
    const mode = o.mode ?? this.defaults.mode;
    const rerank = o.rerank ?? this.defaults.rerank;
    const fusion = o.fusion ?? this.defaults.fusion;
    const rrfK = o.rrfK ?? this.defaults.rrfK;
    const weights = {
      dense: o.weights?.dense ?? this.defaults.weights.dense,
      bm25: o.weights?.bm25 ?? this.defaults.weights.bm25,
    };
    const turn = o.turn ?? 0;
    const locale = o.locale;
    const reranker = this.reranker;
    assertSettings({ k, denseK, bm25K, rrfK, fusion, mode, rerank, weights }, reranker !== undefined);
    if (!Number.isInteger(turn) || turn < 0) throw new InvalidArgumentError("turn", "a non-negative integer", turn);
    if (locale !== undefined && !isLocale(locale)) throw new InvalidArgumentError("locale", LOCALE_EXPECTED, locale);

    const timingsMs: Record<string, number> = {};
    const searchOptions = locale === undefined ? {} : { locale };
    let dense: Ranked[] | undefined;
    let bm25: Ranked[] | undefined;

    if (mode !== "bm25") {
      let t = performance.now();
      const vector = await this.embedder.embedQuery(query, locale === undefined ? undefined : { locale });
      timingsMs.embed = since(t);
      t = performance.now();
      dense = await this.dense.search(vector, { topN: denseK, ...searchOptions });
      timingsMs.dense = since(t);
    }
    if (mode !== "dense") {
      const t = performance.now();
      bm25 = this.bm25.search(query, { topN: bm25K, ...searchOptions });
      timingsMs.bm25 = since(t);
    }

    let t = performance.now();
    let fused: Ranked[];
    if (mode === "hybrid") {
      const lists: FusionInput[] = [
        { name: "dense", ranked: dense ?? [], weight: weights.dense },
        { name: "bm25", ranked: bm25 ?? [], weight: weights.bm25 },
      ];
      fused = fuse(lists, { method: fusion, rrfK, shift: this.defaults.signalsShift });
    } else {
      fused = renumber((mode === "dense" ? dense : bm25) ?? []);
    }
    timingsMs.fusion = since(t);

    let reranked: Ranked[] | undefined;
    if (rerank && reranker !== undefined) {
      t = performance.now();
      reranked = await rerankHead(reranker, query, fused, this.defaults.rerankHead, (id) => this.textOf(id));
      timingsMs.rerank = since(t);
    }

    t = performance.now();
    const parents = dedupeParents(reranked ?? fused);
    const retrievedIds = topK(parents, k).map((r) => r.id);
    timingsMs.parents = since(t);

    // Stage keys in pipeline order; absent stages have no key.
    const stages: RetrievalStages = {
      ...(dense !== undefined ? { dense } : {}),
      ...(bm25 !== undefined ? { bm25 } : {}),
      fused,
      ...(reranked !== undefined ? { reranked } : {}),
      parents,
    };

    timingsMs.total = since(start);
    return {
      turn,
      query,
      k,
      ...(locale !== undefined ? { locale } : {}),
      config: {
        embedder: this.embedder.id,
        denseK,
        bm25K,
        fusion: {
          method: fusion,
          params: fuseParams({ method: fusion, rrfK, shift: this.defaults.signalsShift }) as OpaqueSetting["params"],
        },
        settings: { weights, bm25: { k1: this.bm25.k1, b: this.bm25.b } },
        rerank: rerank && reranker !== undefined ? reranker.id : null,
        mode,
      },
      stages,
      retrievedIds,
      timingsMs,
    };
  }

  /** The indexed text of a chunk (what the cross-encoder reads). */
  textOf(id: string): string {
    const text = this.textById.get(id);
    if (text === undefined) {
      throw new InvalidArgumentError("id", "a chunk id known to the retriever (is the store in sync with the KB?)", id);
    }
    return text;
  }
}
