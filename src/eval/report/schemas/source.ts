/**
 * What a run evaluated (docs/schema-versions.md, report version 5 and
 * baseline version 4): retrace's own graph, a graph of your own (`--graph`)
 * or recorded traces (`--traces`). The report says it in `run.source` (the
 * kind; a graph's module and export are in `run.graph`); a baseline, which
 * has no `run.graph`, names the graph's module and export in its `source`.
 *
 * One section of the schemas indexed by ../schemas.ts (src/eval/report/schemas.ts).
 */
import { z } from "zod";

/** The kinds of run: retrace's own graph, a `--graph` module, recorded traces. */
export const SOURCE_KINDS = ["own", "graph", "traces"] as const;
export type SourceKind = (typeof SOURCE_KINDS)[number];

/** The report's `run.source`. */
export const sourceKind = z.enum(SOURCE_KINDS);

const baselineSourceObject = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("own") }).strict(),
  z
    .object({
      kind: z.literal("graph"),
      /** The graph module relative to its project root (`/` separators). */
      module: z.string().min(1),
      /** The export evaluated. */
      exportName: z.string().min(1),
    })
    .strict(),
  z.object({ kind: z.literal("traces") }).strict(),
]);
/** A baseline's `source`: the kind of run it was written from, and for a `--graph` run its module and export. */
export type BaselineSource = z.infer<typeof baselineSourceObject>;
export const BaselineSourceSchema: z.ZodType<BaselineSource> = baselineSourceObject;
