/**
 * Column headings that several renderings of one report share, pure and
 * import-free so the page script (./html/browser/report.ts) bundles them
 * with the renderers: the split-deltas table reads the same in markdown and
 * in the HTML page.
 */
/** The split-deltas table's columns, in order. */
export const DELTA_COLUMNS = [
  "metric",
  "split",
  "group",
  "vs",
  "diff",
  "95% CI",
  "n turns",
  "n cases",
  "raw p",
  "adjusted p",
  "family size",
  "verdict",
] as const;
