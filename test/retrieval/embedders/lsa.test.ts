import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { analyze } from "../../../src/retrieval/analyzer.js";
import {
  gaussianColumns,
  orthonormalize,
  randomizedSvd,
  symmetricEigen,
  type CsrMatrix,
} from "../../../src/retrieval/embedders/lsa-math.js";
import {
  LsaEmbedder,
  chanceCorrected,
  fitLsa,
  loadOrFitLsa,
  serializeLsa,
  type LsaChunk,
} from "../../../src/retrieval/embedders/lsa.js";
import { resolveEmbedder } from "../../../src/retrieval/embedders/resolve.js";
import { InMemoryDenseIndex } from "../../../src/retrieval/dense.js";
import { HashingEmbedder } from "../../../src/retrieval/embedders/builtin.js";
import {
  HYBRID_DEFAULTS,
  HybridRetriever,
  LSA_HYBRID_DEFAULTS,
  LSA_STRUCTURE_LAMBDA,
  lsaDenseWeight,
  lsaStructureWeight,
} from "../../../src/retrieval/hybrid.js";
import { SIGNALS_SHIFT, minMaxFusion } from "../../../src/retrieval/fusion.js";
import { mulberry32 } from "../../../src/random.js";
import { embedderFamily } from "../../../src/retrieval/embedders/lsa.js";

function csr(rows: number[][]): CsrMatrix {
  const indptr = [0];
  const indices: number[] = [];
  const values: number[] = [];
  for (const r of rows) {
    r.forEach((x, j) => {
      if (x !== 0) {
        indices.push(j);
        values.push(x);
      }
    });
    indptr.push(indices.length);
  }
  return {
    rows: rows.length,
    cols: rows[0]!.length,
    indptr: Int32Array.from(indptr),
    indices: Int32Array.from(indices),
    values: Float64Array.from(values),
  };
}

const CORPUS: LsaChunk[] = [
  { id: "d1", locale: "en", text: "The card was blocked after a lost wallet; block the card now." },
  { id: "d2", locale: "en", text: "A lost card can be frozen in the app, then a replacement card is sent." },
  { id: "d3", locale: "en", text: "Refunds for a disputed payment take five business days." },
  { id: "d4", locale: "en", text: "Dispute a card payment in the app; the refund arrives in days." },
  { id: "d5", locale: "es-419", text: "La tarjeta perdida se bloquea en la app y enviamos una tarjeta nueva." },
  { id: "d6", locale: "es-419", text: "El reembolso de un pago disputado tarda cinco días hábiles." },
  { id: "d7", locale: "es-419", text: "Bloquea la tarjeta y pide el reembolso del pago en la app." },
];

describe("lsa-math", () => {
  it("symmetricEigen: [[2,1],[1,2]] has eigenvalues 3 and 1 with eigenvectors (1,1)/√2 and (1,−1)/√2", () => {
    const { values, vectors } = symmetricEigen(Float64Array.from([2, 1, 1, 2]), 2);
    expect(values[0]).toBeCloseTo(3, 12);
    expect(values[1]).toBeCloseTo(1, 12);
    expect(Math.abs(vectors[0]![0]!)).toBeCloseTo(Math.SQRT1_2, 12);
    expect(vectors[0]![0]! * vectors[0]![1]!).toBeCloseTo(0.5, 12);
    expect(vectors[1]![0]! * vectors[1]![1]!).toBeCloseTo(-0.5, 12);
  });

  it("orthonormalize: a column in the span of earlier ones becomes zero; the others are orthonormal", () => {
    const cols = orthonormalize([
      Float64Array.from([3, 4, 0]),
      Float64Array.from([6, 8, 0]),
      Float64Array.from([1, 0, 1]),
    ]);
    expect([...cols[0]!]).toEqual([0.6, 0.8, 0]);
    expect([...cols[1]!]).toEqual([0, 0, 0]);
    // (1,0,1) − 0.6·(0.6,0.8,0) = (0.64, −0.48, 1); norm √(0.4096+0.2304+1) = √1.64
    const n = Math.sqrt(1.64);
    expect(cols[2]![0]).toBeCloseTo(0.64 / n, 12);
    expect(cols[2]![1]).toBeCloseTo(-0.48 / n, 12);
    expect(cols[2]![2]).toBeCloseTo(1 / n, 12);
  });

  it("randomizedSvd of [[2,0],[1,1],[0,2]]: AᵀA = [[5,1],[1,5]], so σ = √6, 2 and v = (1,1)/√2, (1,−1)/√2", () => {
    const svd = randomizedSvd(
      csr([
        [2, 0],
        [1, 1],
        [0, 2],
      ]),
      { k: 2, seed: 7 },
    );
    expect(svd.values.length).toBe(2);
    expect(svd.values[0]).toBeCloseTo(Math.sqrt(6), 10);
    expect(svd.values[1]).toBeCloseTo(2, 10);
    // sign convention: the largest-magnitude entry positive, the lower index on a tie
    expect(svd.v[0]![0]).toBeCloseTo(Math.SQRT1_2, 10);
    expect(svd.v[0]![1]).toBeCloseTo(Math.SQRT1_2, 10);
    expect(svd.v[1]![0]).toBeCloseTo(Math.SQRT1_2, 10);
    expect(svd.v[1]![1]).toBeCloseTo(-Math.SQRT1_2, 10);
  });

  it("randomizedSvd drops zero singular values of a rank-deficient matrix (rank 1 of 3 × 3)", () => {
    // [[1,2,2],[2,4,4],[0,0,0]] = (1,2,0)ᵀ(1,2,2): σ1 = √5 · 3
    const svd = randomizedSvd(
      csr([
        [1, 2, 2],
        [2, 4, 4],
        [0, 0, 0],
      ]),
      { k: 3, seed: 1 },
    );
    expect(svd.values.length).toBe(1);
    expect(svd.values[0]).toBeCloseTo(3 * Math.sqrt(5), 10);
    expect(svd.v[0]![1]).toBeCloseTo(2 / 3, 10);
  });

  it("the Gaussian test matrix is the same for the same seed and differs for another", () => {
    const a = gaussianColumns(5, 3, 42);
    expect(gaussianColumns(5, 3, 42)).toEqual(a);
    expect(gaussianColumns(5, 3, 43)).not.toEqual(a);
    const all = a.flatMap((c) => [...c]);
    expect(all.every((x) => Number.isFinite(x))).toBe(true);
  });
});

describe("LSA embedder", () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  it("is deterministic: the same chunks in any order and seed give identical bytes, id and vectors", async () => {
    const a = fitLsa(CORPUS, { dimension: 4 });
    const b = fitLsa([...CORPUS].reverse(), { dimension: 4 });
    expect(serializeLsa(b)).toEqual(serializeLsa(a));
    const ea = new LsaEmbedder(a);
    const eb = new LsaEmbedder(b);
    expect(eb.id).toBe(ea.id);
    expect(ea.id).toMatch(/^lsa-4-[0-9a-f]{12}-v1$/);
    expect(await eb.embedQuery("lost card", { locale: "en" })).toEqual(
      await ea.embedQuery("lost card", { locale: "en" }),
    );
    const other = new LsaEmbedder(fitLsa(CORPUS, { dimension: 4, seed: 43 }));
    expect(other.id).not.toBe(ea.id);
  });

  it("vocabulary and idf follow the formula: minDf 2 keeps 'card' (df 3 of 7): idf = ln(8/4) + 1", () => {
    const s = fitLsa(CORPUS, { dimension: 3 });
    const card = analyze("card", "en")[0]!;
    const j = s.terms.indexOf(card);
    expect(j).toBeGreaterThanOrEqual(0);
    expect(s.idf[j]).toBeCloseTo(Math.log(8 / 4) + 1, 12);
    // "wallet" occurs in one chunk only: below minDf
    expect(s.terms).not.toContain(analyze("wallet", "en")[0]);
    expect([...s.terms]).toEqual([...s.terms].sort());
  });

  it("at full rank, fold-in with p = −1 returns each training chunk's own row of U: UᵀU = I and U Σ Vᵀ = A", () => {
    const s = fitLsa(CORPUS, { dimension: 50, scaling: -1, minDf: 1 });
    const e = new LsaEmbedder(s);
    const r = e.dimension;
    expect(r).toBeLessThanOrEqual(CORPUS.length);
    const u = CORPUS.map((c) => e.project(c.text, c.locale));
    for (let a = 0; a < r; a++) {
      for (let b = 0; b < r; b++) {
        let d = 0;
        for (const row of u) d += row[a]! * row[b]!;
        expect(d).toBeCloseTo(a === b ? 1 : 0, 5);
      }
    }
    // Reconstruct each chunk's TF-IDF row from the formula and compare with U Σ Vᵀ.
    CORPUS.forEach((c, i) => {
      const tf = new Map<string, number>();
      for (const t of analyze(c.text, c.locale)) tf.set(t, (tf.get(t) ?? 0) + 1);
      const x = s.terms.map((t, j) => (tf.has(t) ? (1 + Math.log(tf.get(t)!)) * s.idf[j]! : 0));
      const norm = Math.hypot(...x);
      s.terms.forEach((_, j) => {
        let rec = 0;
        for (let c2 = 0; c2 < r; c2++) rec += u[i]![c2]! * s.sigma[c2]! * s.v[j * r + c2]!;
        expect(rec).toBeCloseTo(x[j]! / norm, 5);
      });
    });
  });

  it("embeddings are unit vectors; a text with no vocabulary term is the first latent axis; the locale changes the analysis", async () => {
    const e = new LsaEmbedder(fitLsa(CORPUS, { dimension: 4 }));
    const v = await e.embedQuery("refund of a card payment", { locale: "en" });
    expect(Math.hypot(...v)).toBeCloseTo(1, 12);
    expect(await e.embedQuery("zzz qqq", { locale: "en" })).toEqual([1, 0, 0, 0]);
    // "tarjetas" stems to the Spanish "tarjet" only under es-419
    expect(await e.embedQuery("tarjetas", { locale: "es-419" })).not.toEqual([1, 0, 0, 0]);
    const docs = await e.embedDocuments(["lost card", "tarjeta perdida"], { locales: ["en", "es-419"] });
    expect(docs[0]).toEqual(await e.embedQuery("lost card", { locale: "en" }));
    await expect(e.embedDocuments(["a", "b"], { locales: ["en"] })).rejects.toThrow(/locales/);
  });

  it("the related document outranks an unrelated one for a query sharing only co-occurring terms", async () => {
    const e = new LsaEmbedder(fitLsa(CORPUS, { dimension: 2 }));
    const q = await e.embedQuery("dispute", { locale: "en" });
    const cos = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * b[i]!, 0);
    const [refund, blocked] = await e.embedDocuments([CORPUS[2]!.text, CORPUS[0]!.text], { locales: ["en", "en"] });
    expect(cos(q, refund!)).toBeGreaterThan(cos(q, blocked!));
  });

  it("loadOrFitLsa saves the state, loads it back, and refits a missing or corrupt file to the same bytes", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "retrace-lsa-"));
    dirs.push(dir);
    const first = await loadOrFitLsa(CORPUS, { dir, params: { dimension: 3 } });
    expect(first.status).toBe("fitted");
    const bytes = await readFile(first.file!);
    const again = await loadOrFitLsa([...CORPUS].reverse(), { dir, params: { dimension: 3 } });
    expect(again.status).toBe("loaded");
    expect(again.embedder.id).toBe(first.embedder.id);
    await rm(first.file!);
    const refit = await loadOrFitLsa(CORPUS, { dir, params: { dimension: 3 } });
    expect(refit.status).toBe("fitted");
    expect((await readFile(first.file!)).equals(bytes)).toBe(true);
    await writeFile(first.file!, "not a state");
    const repaired = await loadOrFitLsa(CORPUS, { dir, params: { dimension: 3 } });
    expect(repaired.status).toBe("refitted");
    expect(repaired.embedder.id).toBe(first.embedder.id);
    expect((await readFile(first.file!)).equals(bytes)).toBe(true);
    // another corpus gets another file and another id
    const other = await loadOrFitLsa(CORPUS.slice(1), { dir, params: { dimension: 3 } });
    expect(other.file).not.toBe(first.file);
    expect(other.embedder.id).not.toBe(first.embedder.id);
  });

  it("rejects bad parameters naming the key", () => {
    expect(() => fitLsa(CORPUS, { dimension: 0 })).toThrow(/lsa\.dimension/);
    expect(() => fitLsa(CORPUS, { scaling: 2 })).toThrow(/lsa\.scaling/);
    expect(() => fitLsa([], {})).toThrow(/chunks/);
  });

  it("resolveEmbedder('lsa') fits on the corpus given (state saved in stateDir) and is a usage error without one", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "retrace-lsa-"));
    dirs.push(dir);
    const r = await resolveEmbedder("lsa", { corpus: { chunks: CORPUS, stateDir: dir } });
    expect(r.embedder).toBeInstanceOf(LsaEmbedder);
    expect(r.reason).toMatch(/corpus-fit LSA.*fitted, state saved to/);
    expect(r.summary).toBe(`${r.embedder.id} (requested; corpus-fit LSA)`);
    expect((await resolveEmbedder("lsa", { corpus: { chunks: CORPUS, stateDir: dir } })).reason).toMatch(
      /state loaded from/,
    );
    await expect(resolveEmbedder("lsa")).rejects.toMatchObject({ code: "INVALID_ARGUMENT", exitCode: 2 });
    // auto: the same LSA embedder, with the one-line pointer to a real model (docs/models.md).
    const auto = await resolveEmbedder("auto", {
      modelsDir: path.join(dir, "no-models"),
      corpus: { chunks: CORPUS, stateDir: dir },
    });
    expect(auto.embedder).toBeInstanceOf(LsaEmbedder);
    expect(auto.summary).toBe(`${auto.embedder.id} (default; real model: npm run models, docs/models.md)`);
    expect(auto.reason).toContain('"embedder":"Xenova/bge-small-en-v1.5"');
  });

  it("lsaDenseWeight: the latent share clamped to [0.1, 0.9], to 0.01; 0.9 when unknown", () => {
    expect(lsaDenseWeight(0.4336)).toBe(0.43);
    expect(lsaDenseWeight(0.1023)).toBe(0.1);
    expect(lsaDenseWeight(0.02)).toBe(0.1);
    expect(lsaDenseWeight(0.9008)).toBe(0.9);
    expect(lsaDenseWeight(1)).toBe(0.9);
    expect(lsaDenseWeight(undefined)).toBe(0.9);
    expect(lsaDenseWeight(Number.NaN)).toBe(0.9);
  });

  it("latentShare is 1 at full rank and below 1 when axes are dropped", () => {
    // Rows are L2-normalised, so keeping every singular value keeps all of ‖A‖²_F = N.
    const full = new LsaEmbedder(fitLsa(CORPUS, { dimension: 64 }));
    expect(full.latentShare).toBeCloseTo(1, 6);
    const one = new LsaEmbedder(fitLsa(CORPUS, { dimension: 1 }));
    expect(one.latentShare).toBeGreaterThan(0);
    expect(one.latentShare).toBeLessThan(0.9);
  });

  it("a HybridRetriever over the LSA embedder starts from the LSA defaults (min-max fusion, dense weight λ·κ, depths 20/50, BM25 k1 0.9 b 0.4); others keep HYBRID_DEFAULTS", async () => {
    const chunks = CORPUS.map((c) => ({ ...c, parentId: c.id, title: "", section: "" }));
    // Full rank: the latent space keeps all the energy, and so does chance: κ is not measurable, so the
    // weight falls back to the latent share (the upper bound 0.9) and the fixed shift, as before κ.
    const lsa = new LsaEmbedder(fitLsa(CORPUS, { dimension: 64 }));
    const r = new HybridRetriever({ chunks, embedder: lsa, dense: await InMemoryDenseIndex.fromChunks(chunks, lsa) });
    expect(lsa.latentShare).toBeCloseTo(1, 6);
    expect(lsa.chanceShare).toBeCloseTo(1, 6);
    expect(lsa.structure).toBeUndefined();
    expect(r.defaults).toEqual({
      ...HYBRID_DEFAULTS,
      fusion: "minmax",
      bm25K: 50,
      weights: { dense: 0.9, bm25: 0.1 },
      signalsShift: SIGNALS_SHIFT,
    });
    expect(LSA_HYBRID_DEFAULTS).toEqual({ ...r.defaults, signalsShift: SIGNALS_SHIFT });
    expect([r.bm25.k1, r.bm25.b]).toEqual([0.9, 0.4]);
    const t = await r.retrieve("lost card", { locale: "en" });
    expect(t.config).toMatchObject({
      fusion: { method: "minmax", params: {} },
      settings: { weights: { dense: 0.9, bm25: 0.1 }, bm25: { k1: 0.9, b: 0.4 } },
      bm25K: 50,
    });
    // min-max fusion takes no parameter: the signals shift is not recorded
    expect(t.config.fusion.params).toEqual({});
    // Below full rank κ is measured and sets the weight, with no shift.
    const reduced = new LsaEmbedder(fitLsa(CORPUS, { dimension: 3 }));
    const rReduced = new HybridRetriever({
      chunks,
      embedder: reduced,
      dense: await InMemoryDenseIndex.fromChunks(chunks, reduced),
    });
    expect(reduced.structure).toBeDefined();
    expect([rReduced.defaults.weights.dense, rReduced.defaults.signalsShift]).toEqual([
      lsaStructureWeight(reduced.structure as number),
      0,
    ]);
    // given defaults and BM25 parameters win
    const given = new HybridRetriever({
      chunks,
      embedder: lsa,
      dense: await InMemoryDenseIndex.fromChunks(chunks, lsa),
      defaults: { fusion: "rrf" },
      bm25Params: { k1: 1.2 },
    });
    expect(given.defaults.fusion).toBe("rrf");
    expect([given.bm25.k1, given.bm25.b]).toEqual([1.2, 0.4]);
    const hashed = new HashingEmbedder();
    const h = new HybridRetriever({
      chunks,
      embedder: hashed,
      dense: await InMemoryDenseIndex.fromChunks(chunks, hashed),
    });
    expect(h.defaults).toEqual(HYBRID_DEFAULTS);
    expect([h.bm25.k1, h.bm25.b]).toEqual([1.2, 0.75]);
  });

  it("the chance-corrected latent share κ: clearly positive with topical co-occurrence, about 0 for the same words dealt at random; the dense weight follows it", async () => {
    // 8 topics of 12 made-up words each; a chunk draws 14 words from its topic and 2 from anywhere.
    const rand = mulberry32(11);
    const topics = Array.from({ length: 8 }, (_, t) =>
      Array.from({ length: 12 }, (_, w) => `t${t}w${w}x`.replace(/\d/g, (d) => "abcdefghij"[Number(d)] as string)),
    );
    const all = topics.flat();
    const pick = (xs: readonly string[]) => xs[Math.floor(rand() * xs.length)] as string;
    const topical: LsaChunk[] = Array.from({ length: 240 }, (_, i) => ({
      id: `d${String(i).padStart(3, "0")}`,
      locale: "en",
      text: [...Array.from({ length: 14 }, () => pick(topics[i % 8] as string[])), pick(all), pick(all)].join(" "),
    }));
    const words = topical.flatMap((c) => c.text.split(" "));
    for (let i = words.length - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1));
      [words[i], words[j]] = [words[j] as string, words[i] as string];
    }
    const random: LsaChunk[] = topical.map((c, i) => ({ ...c, text: words.slice(16 * i, 16 * i + 16).join(" ") }));
    const params = { dimension: 8 };
    const eTopical = new LsaEmbedder(fitLsa(topical, params));
    const eRandom = new LsaEmbedder(fitLsa(random, params));
    expect(eTopical.chanceShare).toBeGreaterThan(0);
    expect(eTopical.chanceShare).toBeLessThan(eTopical.latentShare);
    expect(eTopical.structure).toBeGreaterThan(0.3);
    expect(Math.abs(eRandom.structure as number)).toBeLessThan(0.05);
    // fitLsa without the baseline leaves κ unknown: the fixed SIGNALS_SHIFT then
    expect(new LsaEmbedder(fitLsa(topical, params, undefined, { chance: false })).structure).toBeUndefined();
    expect(chanceCorrected(0.5, 0.25)).toBeCloseTo(1 / 3, 12);
    expect(chanceCorrected(0.2, 0.25)).toBeCloseTo(-1 / 15, 12);
    // full rank: share and chance both (numerically) 1, nothing beyond chance to measure
    expect(chanceCorrected(1, 1 - 1e-13)).toBeUndefined();
    expect(chanceCorrected(1 - 1e-14, 1 - 2e-14)).toBeUndefined();
    expect(lsaStructureWeight(-0.01)).toBe(0.1);
    // λ = 2.5 (issue 37, fitted across four collections): 2.5 × 0.1538 = 0.3845 → 0.38; 2.5 × 0.35 = 0.875 → 0.88 (the shipped KB's κ)
    expect(LSA_STRUCTURE_LAMBDA).toBe(2.5);
    expect(lsaStructureWeight(0.1538)).toBe(0.38);
    expect(lsaStructureWeight(0.35)).toBe(0.88);
    expect(lsaStructureWeight(0.1538, 5.4)).toBe(0.83);
    expect(lsaStructureWeight(0.5)).toBe(0.9);
    expect(lsaStructureWeight(Number.NaN)).toBe(0.1);
    // The retriever takes α from the embedder's κ (no shift), records it, and fuses with it.
    const chunks = topical.map((c) => ({ ...c, parentId: c.id, title: "", section: "" }));
    const rt = new HybridRetriever({
      chunks,
      embedder: eTopical,
      dense: await InMemoryDenseIndex.fromChunks(chunks, eTopical),
    });
    expect(rt.defaults.weights.dense).toBe(lsaStructureWeight(eTopical.structure as number));
    expect(rt.defaults.weights.dense).toBeGreaterThan(0.8);
    expect(rt.defaults.signalsShift).toBe(0);
    const tr = await rt.retrieve(`${topics[2]![0]} ${topics[2]![1]} ${topics[5]![3]}`, {
      locale: "en",
      denseK: 30,
      bm25K: 30,
    });
    expect(tr.config.fusion).toEqual({ method: "minmax", params: {} });
    expect(tr.config.settings?.weights).toEqual(rt.defaults.weights);
    const lists = [
      { name: "dense", ranked: tr.stages.dense ?? [], weight: rt.defaults.weights.dense },
      { name: "bm25", ranked: tr.stages.bm25 ?? [], weight: rt.defaults.weights.bm25 },
    ];
    expect(tr.stages.fused.map((x) => x.id)).toEqual(minMaxFusion(lists).map((x) => x.id));
    const rr = new HybridRetriever({
      chunks: random.map((c) => ({ ...c, parentId: c.id, title: "", section: "" })),
      embedder: eRandom,
      dense: await InMemoryDenseIndex.fromChunks(
        random.map((c) => ({ ...c, parentId: c.id, title: "", section: "" })),
        eRandom,
      ),
    });
    // the same words at random: the lower bound, where the raw latent share (0.28 here, kept by chance alone) would have given more
    expect(rr.defaults.weights.dense).toBe(0.1);
    expect(lsaDenseWeight(eRandom.latentShare)).toBeGreaterThan(0.2);
  });

  it("embedderFamily drops the fit hash of an LSA id only", () => {
    expect(embedderFamily("lsa-128-916eee2dd175-v1")).toBe("lsa-128-v1");
    expect(embedderFamily("builtin-hashed-ngrams-384-v1")).toBe("builtin-hashed-ngrams-384-v1");
  });
});
