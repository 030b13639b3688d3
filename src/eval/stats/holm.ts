/**
 * Holm–Bonferroni step-down adjustment of a family of p-values (Holm 1979;
 * docs/statistics.md). Controls the family-wise error rate at α under any
 * dependence between the tests, and is uniformly more powerful than
 * Bonferroni.
 *
 * With the m raw p-values sorted ascending p(1) ≤ … ≤ p(m), the adjusted
 * values are p̃(i) = max_{j ≤ i} min(1, (m − j + 1)·p(j)); a hypothesis is
 * rejected at level α exactly when its adjusted p-value is < α. Ties in the
 * raw p-values are ordered by input position (the adjusted values of tied
 * p-values come out equal anyway, by the running maximum).
 *
 * Pure; the input is not mutated; the output is in input order.
 */
import { InvalidArgumentError } from "../../errors.js";

export function holmAdjust(pValues: readonly number[]): number[] {
  for (const p of pValues) {
    if (typeof p !== "number" || !(p >= 0 && p <= 1))
      throw new InvalidArgumentError("p-value", "a number between 0 and 1", p);
  }
  const m = pValues.length;
  const order = pValues.map((p, i) => ({ p, i })).sort((x, y) => x.p - y.p || x.i - y.i);
  const adjusted = new Array<number>(m);
  let running = 0;
  order.forEach(({ p, i }, rank) => {
    running = Math.max(running, Math.min(1, (m - rank) * p));
    adjusted[i] = running;
  });
  return adjusted;
}
