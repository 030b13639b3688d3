/**
 * What a run evaluated, as one value for a report and a baseline
 * (docs/schema-versions.md: report version 5, baseline version 4): retrace's
 * own graph, a graph of your own (its module relative to its project root,
 * and the export) or recorded traces. The gate and `retrace compare` refuse
 * to compare runs of different sources (a comparison would measure the
 * other graph, not a regression). Pure.
 */
import path from "node:path";
import type { BaselineSource } from "../report/schemas.js";
import type { Report } from "../report/types.js";

export type { BaselineSource };

/** A report's source as its baseline records it: the kind, and a graph's module and export from `run.graph`. */
export function sourceOfReport(report: Pick<Report, "run">): BaselineSource {
  const { source, graph } = report.run;
  if (source === "graph") return { kind: "graph", module: graph?.file ?? "", exportName: graph?.exportName ?? "" };
  return { kind: source };
}

/**
 * A graph module as one name: `./g.mjs`, `g.mjs` and `/abs/root/g.mjs` (a
 * baseline written before module paths were normalized kept the path as
 * typed) → `g.mjs`, relative to `root` (default the working directory), `/`
 * separators. No I/O.
 */
export function normalizeModulePath(file: string, root: string = process.cwd()): string {
  return path.relative(root, path.resolve(root, file)).split(path.sep).join("/");
}

/** Whether two sources are one: the same kind, and for graphs the same module (normalized) and export. */
export function sameSource(a: BaselineSource, b: BaselineSource, root: string = process.cwd()): boolean {
  if (a.kind === "graph" && b.kind === "graph")
    return a.exportName === b.exportName && normalizeModulePath(a.module, root) === normalizeModulePath(b.module, root);
  return a.kind === b.kind;
}

/** A source in words, for messages: `retrace's own graph`, `--graph g.mjs#graph`, `recorded traces (--traces)`. */
export function sourceText(s: BaselineSource): string {
  if (s.kind === "graph") return `--graph ${s.module}#${s.exportName}`;
  return s.kind === "own" ? "retrace's own graph" : "recorded traces (--traces)";
}
