/**
 * What synthetic cases can judge (docs/synthetic-cases.md): for each built-in
 * generator, Kendall's τ-b between the order of the 12-variant system family
 * (src/research/synthetic-family.ts) on its synthetic known-item queries and on
 * the real judgments of the reference collection (Cranfield), as measured by
 * `retrace beir DIR --synthetic 200`. The numbers are data, quoted by every
 * report whose cases are all synthetic and by `retrace beir --synthetic`.
 */

/** Below this τ-b a generator's cases are not valid for comparing lexical and semantic retrieval (docs/synthetic-cases.md#what-τ-means). */
export const TAU_VALID_LEVEL = 0.5;

export interface GeneratorReference {
  /** The collection τ was measured on. */
  collection: string;
  /** Kendall's τ-b between the two orders of the 12 variants. */
  tau: number;
  /** 95% percentile bootstrap interval (queries resampled, synthetic and real independently). */
  ci95: [number, number];
  /** The command that produced it. */
  command: string;
}

/**
 * Measured τ of the built-in generators, by `generator@version` (docs/synthetic-cases.md#numbers),
 * with the family's variant 12 = the shipped default (its fusion since issue 27; with the previous
 * min-max default they were −0.55, −0.38, −0.45, −0.52).
 */
const COMMAND =
  "retrace beir cranfield --synthetic 200 --strategy naive,title,neighbours,mismatch (seed 42, embedder auto = LSA)";
export const GENERATOR_REFERENCE: Readonly<Record<string, GeneratorReference>> = Object.freeze({
  "known-item-naive@1": { collection: "Cranfield", tau: -0.58, ci95: [-0.69, -0.2], command: COMMAND },
  "known-item-title@1": { collection: "Cranfield", tau: -0.47, ci95: [-0.69, 0.02], command: COMMAND },
  "known-item-neighbours@1": { collection: "Cranfield", tau: -0.55, ci95: [-0.63, -0.15], command: COMMAND },
  "known-item-mismatch@1": { collection: "Cranfield", tau: -0.55, ci95: [-0.7, -0.21], command: COMMAND },
});

/** The reference entry of a generator, or undefined (a user's `--generator` module, or a version not measured). */
export function generatorReference(generator: string, version: string): GeneratorReference | undefined {
  return GENERATOR_REFERENCE[`${generator}@${version}`];
}

/**
 * The guard-rail sentence of a run whose cases are all synthetic: the
 * generator, its τ on the reference collection and what that means.
 */
export function syntheticVerdict(generator: string, version: string): string {
  const ref = generatorReference(generator, version);
  if (ref === undefined)
    return `every case is synthetic (generator ${generator} ${version}); its τ against real judgments was never measured (retrace beir DIR --synthetic N --generator MODULE measures it): treat these figures as a smoke test, not valid for comparing lexical and semantic retrieval or tuning fusion (docs/synthetic-cases.md)`;
  const t = (x: number) => `${x >= 0 ? "+" : ""}${x.toFixed(2)}`;
  const valid = ref.tau >= TAU_VALID_LEVEL;
  return `every case is synthetic (generator ${generator} ${version}; τ-b ${t(ref.tau)} [${t(ref.ci95[0])}, ${t(ref.ci95[1])}] against the real judgments of ${ref.collection}): ${
    valid
      ? `it ordered retrieval systems as real judgments did there (τ ≥ ${TAU_VALID_LEVEL}), still check on your own labelled cases`
      : `not valid for comparing lexical and semantic retrieval or tuning fusion (τ below ${TAU_VALID_LEVEL}); useful as a smoke test that ingest, chunking, analyzers and follow-ups still find a card from its own words`
  } (docs/synthetic-cases.md)`;
}
