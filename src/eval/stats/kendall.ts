/**
 * Kendall's τ-b between two score vectors over the same items (systems):
 *
 *   τ_b = (C − D) / √((n₀ − n₁)(n₀ − n₂))
 *
 * with C / D the concordant / discordant pairs, n₀ = n(n−1)/2, n₁ and n₂ the
 * pairs tied in x and in y (a pair tied in both counts in both). Exact
 * O(n²) pair count (the family has a dozen systems). Ties are equal numbers
 * (no tolerance). Null when fewer than 2 items or when either vector is
 * constant (τ-b undefined). scipy.stats.kendalltau's default (variant "b")
 * gives the same values.
 */
export function kendallTauB(x: readonly number[], y: readonly number[]): number | null {
  if (x.length !== y.length)
    throw new RangeError(`Expected two vectors of the same length, got ${x.length} and ${y.length}`);
  const n = x.length;
  let concordant = 0;
  let discordant = 0;
  let tiesX = 0;
  let tiesY = 0;
  for (let i = 0; i < n; i++)
    for (let j = i + 1; j < n; j++) {
      const dx = Math.sign((x[j] as number) - (x[i] as number));
      const dy = Math.sign((y[j] as number) - (y[i] as number));
      if (dx === 0) tiesX++;
      if (dy === 0) tiesY++;
      if (dx !== 0 && dy !== 0) {
        if (dx === dy) concordant++;
        else discordant++;
      }
    }
  const n0 = (n * (n - 1)) / 2;
  const denom = Math.sqrt((n0 - tiesX) * (n0 - tiesY));
  return n < 2 || denom === 0 ? null : (concordant - discordant) / denom;
}
