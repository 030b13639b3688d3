/**
 * Cohen's κ between two raters who each put the same n items into one of a
 * fixed set of categories (docs/labelling.md, "Agreement"): **unweighted**, so
 * a judge that says 1 where the person says 2 disagrees exactly as much as
 * one that says 0 where the person says 3.
 *
 *   κ = (p_o − p_e) / (1 − p_e)
 *
 * with p_o = (1/n) Σ_i [a_i = b_i] the observed agreement and
 * p_e = Σ_c (n_a(c) / n)(n_b(c) / n) the agreement expected by chance from
 * each rater's own category shares (Cohen 1960). Edge cases: no items →
 * null (not measured); p_e = 1 (both raters used one and the same category
 * for every item) → null (κ undefined: 0/0), although p_o = 1.
 */
export interface KappaResult {
  /** Items rated by both. */
  n: number;
  /** Observed agreement p_o. */
  observed: number;
  /** Chance agreement p_e. */
  expected: number;
  /** Cohen's κ (unweighted); null when undefined (n = 0, or p_e = 1). */
  kappa: number | null;
  /** The categories seen, sorted, and the confusion counts `matrix[i][j]` = items rater A put in categories[i] and rater B in categories[j]. */
  categories: number[];
  matrix: number[][];
}

/** Cohen's unweighted κ of two equally long rating lists (item i rated a[i] by A and b[i] by B). */
export function cohenKappa(a: readonly number[], b: readonly number[]): KappaResult {
  if (a.length !== b.length)
    throw new RangeError(`Expected two rating lists of the same length, got ${a.length} and ${b.length}`);
  const n = a.length;
  const categories = [...new Set([...a, ...b])].sort((x, y) => x - y);
  const index = new Map(categories.map((c, i) => [c, i]));
  const matrix = categories.map(() => categories.map(() => 0));
  let agree = 0;
  for (let i = 0; i < n; i++) {
    matrix[index.get(a[i]!)!]![index.get(b[i]!)!]! += 1;
    if (a[i] === b[i]) agree++;
  }
  if (n === 0) return { n, observed: 0, expected: 0, kappa: null, categories, matrix };
  const observed = agree / n;
  let expected = 0;
  categories.forEach((_, i) => {
    const rowA = matrix[i]!.reduce((s, x) => s + x, 0);
    const colB = matrix.reduce((s, row) => s + row[i]!, 0);
    expected += (rowA / n) * (colB / n);
  });
  const kappa = expected === 1 ? null : (observed - expected) / (1 - expected);
  return { n, observed, expected, kappa, categories, matrix };
}
