/**
 * The turn-position groups every report splits by (1, 2, 3, 4+) and how they
 * are labelled: pure and import-free, so the page script
 * (./html/browser/report.ts) shares them with the renderers.
 */
/** The turn-position groups: 1, 2, 3, then 4+ (`turn` is 0-based). */
export const TURN_POSITIONS = ["1", "2", "3", "4+"] as const;
export function turnPosition(turn: number): string {
  return turn >= 3 ? "4+" : String(turn + 1);
}

/**
 * How a turn-position group is labelled in text, markdown and HTML: numbered
 * from #0, as the `caseId#N` keys, `trace --turn` and the labelling page
 * number turns (docs/labelling.md): "1" → "turn #0", "4+" → "turn #3+". The
 * groups' JSON keys keep their names ("1", "2", "3", "4+").
 */
export function positionLabel(group: string): string {
  if (group === "4+") return "turn #3+";
  const n = Number(group);
  return Number.isInteger(n) && n >= 1 ? `turn #${n - 1}` : `turn ${group}`;
}
