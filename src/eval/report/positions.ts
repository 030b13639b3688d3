/**
 * The turn-position groups every report splits by, and how they are
 * labelled: pure and import-free, so the page script
 * (./html/browser/report.ts) shares them with the renderers.
 *
 * The rule (docs/metrics.md#turn-positions): turns #0, #1 and #2 each have a
 * group of their own; later turns share buckets. While no turn of the report
 * is past #3 (conversations of at most 4 turns) the last group is "#3+" (key
 * "4+"), as reports always had it. Once a report has a turn past #3 (long
 * conversations), the later turns go into #3–4, #5–9 and #10+ (keys "4-5",
 * "6-10", "11+"), so a 200-turn conversation still makes 6 columns, each
 * with its own n and interval. JSON keys number turns from 1, labels from #0.
 */
/** The turn-position groups of short conversations: 1, 2, 3, then 4+ (`turn` is 0-based). */
export const TURN_POSITIONS = ["1", "2", "3", "4+"] as const;
/** The turn-position groups once a turn past #3 exists: 1, 2, 3, 4-5, 6-10, 11+ (1-based keys). */
export const LONG_TURN_POSITIONS = ["1", "2", "3", "4-5", "6-10", "11+"] as const;

/** Whether turns at these (0-based) indices need the long buckets: some turn is past #3. */
export function hasLongPositions(turns: readonly { turn: number }[]): boolean {
  return turns.some((t) => t.turn > 3);
}

/** The group of a 0-based turn index: short groups (`long` false, the default) or the long buckets. */
export function turnPosition(turn: number, long = false): string {
  if (turn < 3) return String(turn + 1);
  if (!long) return "4+";
  return turn < 5 ? "4-5" : turn < 10 ? "6-10" : "11+";
}

/**
 * How a turn-position group is labelled in text, markdown and HTML: numbered
 * from #0, as the `caseId#N` keys, `trace --turn` and the labelling page
 * number turns (docs/labelling.md): "1" → "turn #0", "4+" → "turn #3+",
 * "4-5" → "turn #3–4", "11+" → "turn #10+". The groups' JSON keys keep their
 * names ("1", "2", "3", "4+"; "4-5", "6-10", "11+").
 */
export function positionLabel(group: string): string {
  const range = /^(\d+)-(\d+)$/.exec(group);
  if (range !== null) return `turn #${Number(range[1]) - 1}\u2013${Number(range[2]) - 1}`;
  const open = /^(\d+)\+$/.exec(group);
  if (open !== null) return `turn #${Number(open[1]) - 1}+`;
  const n = Number(group);
  return Number.isInteger(n) && n >= 1 ? `turn #${n - 1}` : `turn ${group}`;
}

/** The note under a table of position groups `groups` (its JSON keys): what the last groups hold. */
export function positionNote(groups: readonly string[]): string {
  return groups.some((g) => g.includes("-") || g === "11+")
    ? "turn #0 is each case's first turn; later turns in buckets #3\u20134, #5\u20139, #10+"
    : "turn #0 is each case's first turn; turn #3+ = turns #3 and later";
}
