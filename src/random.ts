/**
 * The one seeded PRNG of retrace: the bootstrap (src/eval/stats/bootstrap.ts), the
 * randomized SVD of the LSA embedder (src/retrieval/embedders/lsa-math.ts)
 * and the seeded fold and shard assignments draw from it, so a seed means
 * the same sequence everywhere (docs/determinism.md).
 */

/**
 * mulberry32: a tiny, fast 32-bit PRNG with good statistical quality for
 * resampling. Returns a function yielding floats in [0, 1); the same seed
 * (taken modulo 2³²) gives the same sequence on every platform.
 */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
