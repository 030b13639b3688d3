/**
 * The system family `retrace beir --synthetic` orders (docs/synthetic-cases.md#the-family):
 * twelve retrieval variants over one corpus's dense (LSA by default) and BM25
 * lists, chosen to span lexical and semantic retrieval and the fusions
 * between them:
 *
 *  1–4. BM25 alone at k1/b = 1.2/0.75 (Robertson's), 0.9/0.4 (Anserini's), 1.5/0.9, 2.0/0.3;
 *  5.   dense alone;
 *  6–8. min-max fusion, dense weight 0.2, 0.5, 0.8 (BM25 at the shipped k1/b);
 *  9.   RRF (k = 60), equal weights;
 *  10.  z-score fusion, equal weights;
 *  11.  CombMNZ;
 *  12.  the shipped default (the retriever's own fusion, weights, depths and BM25 k1/b).
 *
 * Pure: a variant's ranking is a function of the query's cached lists.
 */
import { fuse, type FusionMethod } from "../retrieval/fusion.js";
import type { Ranked } from "../retrieval/types.js";
import { bm25Key } from "./tune.js";

export interface BM25Setting {
  k1: number;
  b: number;
}

export type Variant =
  | { name: string; kind: "bm25"; bm25: BM25Setting }
  | { name: string; kind: "dense" }
  | {
      name: string;
      kind: "fused";
      fusion: FusionMethod;
      weights: { dense: number; bm25: number };
      rrfK: number;
      signalsShift?: number;
      bm25: BM25Setting;
      denseK: number;
      bm25K: number;
    };

/** BM25 settings of variants 1–4. */
export const FAMILY_BM25: readonly BM25Setting[] = Object.freeze([
  { k1: 1.2, b: 0.75 },
  { k1: 0.9, b: 0.4 },
  { k1: 1.5, b: 0.9 },
  { k1: 2.0, b: 0.3 },
]);

/** The shipped settings the family's fusions and variant 12 use (from the retriever). */
export interface ShippedSettings {
  fusion: FusionMethod;
  rrfK: number;
  weights: { dense: number; bm25: number };
  /** δ of `signals` (the retriever's `HybridDefaults.signalsShift`). */
  signalsShift?: number;
  denseK: number;
  bm25K: number;
  bm25: BM25Setting;
}

/** The twelve variants, in the order above. `depth`: the branch depth of variants 6–11. */
export function systemFamily(shipped: ShippedSettings, depth: number): Variant[] {
  const b = shipped.bm25;
  const fused = (name: string, fusion: FusionMethod, dense: number): Variant => ({
    name,
    kind: "fused",
    fusion,
    weights: { dense, bm25: Math.round((1 - dense) * 100) / 100 },
    rrfK: 60,
    bm25: b,
    denseK: depth,
    bm25K: depth,
  });
  return [
    ...FAMILY_BM25.map((p): Variant => ({ name: `bm25 k1=${p.k1} b=${p.b}`, kind: "bm25", bm25: p })),
    { name: "dense", kind: "dense" },
    fused("minmax dense=0.2", "minmax", 0.2),
    fused("minmax dense=0.5", "minmax", 0.5),
    fused("minmax dense=0.8", "minmax", 0.8),
    fused("rrf k=60", "rrf", 0.5),
    fused("zscore dense=0.5", "zscore", 0.5),
    fused("combmnz", "combmnz", 0.5),
    {
      name: `shipped (${shipped.fusion} dense=${shipped.weights.dense})`,
      kind: "fused",
      fusion: shipped.fusion,
      weights: shipped.weights,
      rrfK: shipped.rrfK,
      ...(shipped.signalsShift !== undefined ? { signalsShift: shipped.signalsShift } : {}),
      bm25: shipped.bm25,
      denseK: shipped.denseK,
      bm25K: shipped.bm25K,
    },
  ];
}

/** The BM25 settings a family needs lists for. */
export function familyBm25Settings(family: readonly Variant[]): BM25Setting[] {
  const out = new Map<string, BM25Setting>();
  for (const v of family) if (v.kind !== "dense") out.set(bm25Key(v.bm25), v.bm25);
  return [...out.values()];
}

/** A query's cached lists: dense, and BM25 per `bm25Key`. */
export interface QueryLists {
  dense: readonly Ranked[];
  bm25: ReadonlyMap<string, readonly Ranked[]>;
}

/** The document ids a variant ranks for a query, in rank order. */
export function variantRanking(v: Variant, lists: QueryLists): string[] {
  if (v.kind === "dense") return lists.dense.map((r) => r.id);
  const bm25 = lists.bm25.get(bm25Key(v.bm25));
  if (bm25 === undefined) throw new RangeError(`Expected a BM25 list for ${bm25Key(v.bm25)}`);
  if (v.kind === "bm25") return bm25.map((r) => r.id);
  return fuse(
    [
      { name: "dense", ranked: lists.dense.slice(0, v.denseK), weight: v.weights.dense },
      { name: "bm25", ranked: bm25.slice(0, v.bm25K), weight: v.weights.bm25 },
    ],
    { method: v.fusion, rrfK: v.rrfK, ...(v.signalsShift !== undefined ? { shift: v.signalsShift } : {}) },
  ).map((r) => r.id);
}
