/**
 * The one stage registry (docs/architecture.md §9): every stage of a retrieval
 * trace (`RetrievalStages`, src/retrieval/types.ts) in pipeline order, then
 * `final`, the scored top-k, each with what the renderings call it. Read by
 * the miss attribution (./attribution.ts), the HTML report's funnel
 * (./html/funnel.ts) and page script (it receives `stagePageData()` in the
 * page data), `retrace trace` (src/cli/commands/trace.ts), the stage funnel
 * (./funnel-stats.ts) and the stage gates' check before a run
 * (src/app/eval-plan.ts, `stageMeasured`). Adding a stage to
 * `RetrievalStages` without an entry here is a compile error.
 */
import type { RetrievalMode, RetrievalStages } from "../../contract/trace.js";

/** A stage of the trace, or `final`: the turn's scored top-k (`retrievedIds`). */
export type StageId = keyof RetrievalStages | "final";

/** Every row of the stage funnel: the query (counterfactual retrieval), the trace's stages, a captured turn's groups, `final`. */
export type FunnelStageId = "query" | keyof RetrievalStages | "child" | "scored" | "final";

export interface StageSpec {
  id: StageId;
  /** Its name in tables, funnel rows, list captions and the curves' legend: `BM25`, `final top-k`. */
  label: string;
  /** What follows an ordinal in a miss attribution: "3rd in dense", "7th after fusion". `final` has none (the attribution gives the final rank itself). */
  position?: string;
  /**
   * The "lost at" words (../attribution.ts lostAtText) when a gold card left the pipeline here:
   * "fusion", "cut at k". The branches have none: a card that no branch
   * listed is lost at `retrieval` (LOST_IN_RETRIEVAL).
   */
  lostAt?: string;
  /** A retrieval branch (dense, BM25): the branches run side by side; from `fused` on the stages are sequential. */
  branch: boolean;
  /** Its colour on the HTML report's recall curves. */
  color: string;
}

/** What a run needs for its funnel to measure a stage (app/eval-plan.ts checks stage gates against it before the run). */
export interface StageRequirement {
  /** Measured only with counterfactual retrieval (`--no-counterfactual` turns it off). */
  counterfactual?: true;
  /** Measured only when the run reranks (`retrieval.rerank`). */
  rerank?: true;
  /** Not measured in this one-branch retrieval mode. */
  notInMode?: RetrievalMode;
}

/**
 * The one declaration of the stages (docs/architecture.md §9), in funnel
 * order: `query`, the trace's stages in pipeline order, a captured turn's
 * groups (`child`, `scored`), then `final`. `kind` says which list a stage
 * belongs to; `satisfies` makes a stage of the trace (`RetrievalStages`,
 * src/contract/trace.ts) without an entry a compile error. STAGES,
 * TRACE_STAGES, CAPTURED_STAGES, FUNNEL_STAGES (./funnel-stats.ts), the HTML
 * curves' order and the stages a run will measure (`stageMeasured`) all
 * derive from it.
 */
const DECLARED = {
  query: { kind: "query", label: "query", requires: { counterfactual: true } },
  dense: {
    kind: "trace",
    label: "dense",
    position: "in dense",
    branch: true,
    color: "#2457c5",
    requires: { notInMode: "bm25" },
  },
  bm25: {
    kind: "trace",
    label: "BM25",
    position: "in BM25",
    branch: true,
    color: "#b3541e",
    requires: { notInMode: "dense" },
  },
  fused: { kind: "trace", label: "fused", position: "after fusion", lostAt: "fusion", branch: false, color: "#6a3d9a" },
  reranked: {
    kind: "trace",
    label: "reranked",
    position: "after rerank",
    lostAt: "rerank",
    branch: false,
    color: "#1a7f37",
    requires: { rerank: true },
  },
  parents: {
    kind: "trace",
    label: "parents",
    position: "card after parent dedup",
    lostAt: "parent dedup",
    branch: false,
    color: "#7a7a00",
  },
  child: { kind: "captured", label: "child runs", color: "#2457c5" },
  scored: { kind: "captured", label: "scored calls", color: "#6a3d9a" },
  final: { kind: "final", label: "final top-k", lostAt: "cut at k", branch: false, color: "#c62828" },
} as const satisfies Record<
  FunnelStageId,
  { kind: "query" | "trace" | "captured" | "final"; label: string; requires?: StageRequirement } & Partial<
    Omit<StageSpec, "id" | "label">
  >
>;

type Declared = (typeof DECLARED)[FunnelStageId];
const ENTRIES = Object.entries(DECLARED) as [FunnelStageId, Declared][];

/** The pipeline: every stage of the trace in pipeline order, `final` last. */
export const STAGES: readonly StageSpec[] = Object.freeze(
  ENTRIES.flatMap(([id, d]) =>
    d.kind === "trace" || d.kind === "final"
      ? [
          {
            id: id as StageId,
            label: d.label,
            ...("position" in d ? { position: d.position } : {}),
            ...("lostAt" in d ? { lostAt: d.lostAt } : {}),
            branch: d.branch,
            color: d.color,
          },
        ]
      : [],
  ),
);

/** The stages of a retrieval trace (all but `final`), in pipeline order. */
export const TRACE_STAGES: readonly (keyof RetrievalStages)[] = Object.freeze(
  STAGES.filter((s) => s.id !== "final").map((s) => s.id as keyof RetrievalStages),
);

/** The retrieval branches (dense, BM25): lists made side by side. */
export const BRANCH_STAGES: ReadonlySet<string> = new Set(STAGES.filter((s) => s.branch).map((s) => s.id));

/**
 * What the funnel and recall curves of a turn captured from a user's graph
 * (`--graph`, docs/evaluate-your-graph.md) group its lists into: `child`,
 * any child run of a scored retriever call; `scored`, the scored calls' own
 * lists joined in start order (first occurrence wins: the list the top-k is
 * cut from); then `final`, the scored top-k, as in the pipeline. Not
 * stages of retrace's trace: its funnel rows only.
 */
export const CAPTURED_STAGES: readonly { id: "child" | "scored"; label: string; color: string }[] = Object.freeze(
  ENTRIES.flatMap(([id, d]) =>
    d.kind === "captured" ? [{ id: id as "child" | "scored", label: d.label, color: d.color }] : [],
  ),
);

/** Every funnel row in order: the query, the trace's stages, a captured turn's groups, `final`. */
export const FUNNEL_STAGES: readonly { id: FunnelStageId; label: string }[] = Object.freeze(
  ENTRIES.map(([id, d]) => ({ id, label: d.label })),
);

/** Whether a run of this shape measures the funnel row `id` (false for a name that is no stage). */
export function stageMeasured(
  id: string,
  run: { counterfactual: boolean; rerank: boolean; mode: RetrievalMode },
): boolean {
  const d = (DECLARED as Record<string, Declared>)[id];
  if (d === undefined) return false;
  const r: StageRequirement = "requires" in d ? d.requires : {};
  return (
    !(r.counterfactual === true && !run.counterfactual) &&
    !(r.rerank === true && !run.rerank) &&
    !(r.notInMode !== undefined && r.notInMode === run.mode)
  );
}

/** Where a gold card that no branch listed was lost (the funnel's `retrieval` cut). */
export const LOST_IN_RETRIEVAL = "not retrieved (no branch listed it)";

/** The spec of `id`, or undefined for a name that is not a stage. */
export function stageSpec(id: string): StageSpec | undefined {
  return STAGES.find((s) => s.id === id);
}

/** What the HTML page script reads about the stages (report-page.ts puts it in every page's data). */
export interface StagePageData {
  /** Trace stages in pipeline order (without `final`). */
  trace: string[];
  label: Record<string, string>;
  color: Record<string, string>;
}

export function stagePageData(): StagePageData {
  return {
    trace: [...TRACE_STAGES],
    label: Object.fromEntries([...STAGES, ...CAPTURED_STAGES].map((s) => [s.id, s.label])),
    color: Object.fromEntries([...STAGES, ...CAPTURED_STAGES].map((s) => [s.id, s.color])),
  };
}

/**
 * A turn's gold cards by stage, in words: `duplicate-charges: dense 7, bm25 —, fused 9` per card, `; ` between
 * cards (a stage that did not list the card is `—`). The one wording of the gate's flips (../gate/flips.ts) and the
 * renderings' "gold by stage" (./render/shared.ts).
 */
export function goldPositionsWords(pos: Readonly<Record<string, Readonly<Record<string, number | null>>>>): string {
  return Object.entries(pos)
    .map(
      ([id, stages]) =>
        `${id}: ${Object.entries(stages)
          .map(([stage, rank]) => `${stage} ${rank ?? "—"}`)
          .join(", ")}`,
    )
    .join("; ");
}
