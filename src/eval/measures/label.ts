/**
 * A metric's display label at a run's k (`hit@5`, `recall@5 (lower bound)`,
 * `judged@5`), from the registries of ./metrics.ts: what every rendering,
 * the gate's messages and the GitHub annotations call a key. Outside the
 * renderers so that the gate names metrics without importing one.
 */
import { INCOMPLETE_JUDGMENT_MEASURES, JUDGED, metricSpec } from "./metrics.js";

/** `hit@5`, `recall@5 (lower bound)`, `nDCG@5` (the registry's label, k and caveat), `judged@5`; other keys as they are. */
export function metricLabel(key: string, k: number): string {
  if (key === JUDGED.key) return JUDGED.label.replace(/@k$/, `@${k}`);
  const incomplete = INCOMPLETE_JUDGMENT_MEASURES.find((m) => m.key === key);
  if (incomplete !== undefined)
    return incomplete.kDependent ? incomplete.label.replace(/@k$/, `@${k}`) : incomplete.label;
  const spec = metricSpec(key);
  if (spec === undefined) return key;
  const label = spec.kDependent ? spec.label.replace(/@k$/, `@${k}`) : spec.label;
  return spec.caveat !== undefined ? `${label} (${spec.caveat})` : label;
}
