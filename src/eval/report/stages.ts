/**
 * The one stage registry (docs/architecture.md §9): every stage of a retrieval
 * trace (`RetrievalStages`, src/retrieval/types.ts) in pipeline order, then
 * `final`, the scored top-k, each with what the renderings call it. Read by
 * the miss attribution (./attribution.ts), the HTML report's funnel
 * (./html/funnel.ts) and page script (it receives `stagePageData()` in the
 * page data), and `retrace trace` (src/cli/commands/trace.ts). Adding a stage to
 * `RetrievalStages` without an entry here is a compile error.
 */
import type { RetrievalStages } from "../../contract/trace.js";

/** A stage of the trace, or `final`: the turn's scored top-k (`retrievedIds`). */
export type StageId = keyof RetrievalStages | "final";

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

/** Keyed by stage, in pipeline order; `satisfies` makes a stage of the trace without an entry a compile error. */
const DECLARED = {
  dense: { label: "dense", position: "in dense", branch: true, color: "#2457c5" },
  bm25: { label: "BM25", position: "in BM25", branch: true, color: "#b3541e" },
  fused: { label: "fused", position: "after fusion", lostAt: "fusion", branch: false, color: "#6a3d9a" },
  reranked: { label: "reranked", position: "after rerank", lostAt: "rerank", branch: false, color: "#1a7f37" },
  parents: {
    label: "parents",
    position: "card after parent dedup",
    lostAt: "parent dedup",
    branch: false,
    color: "#7a7a00",
  },
  final: { label: "final top-k", lostAt: "cut at k", branch: false, color: "#c62828" },
} satisfies Record<StageId, Omit<StageSpec, "id">>;

/** Every stage in pipeline order, `final` last. */
export const STAGES: readonly StageSpec[] = Object.freeze(
  Object.entries(DECLARED).map(([id, spec]) => ({ id: id as StageId, ...spec })),
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
 * cut from); then `final`, the scored top-k, as in the registry above. Not
 * stages of retrace's trace: its funnel rows only.
 */
export const CAPTURED_STAGES: readonly { id: "child" | "scored"; label: string; color: string }[] = Object.freeze([
  { id: "child", label: "child runs", color: "#2457c5" },
  { id: "scored", label: "scored calls", color: "#6a3d9a" },
]);

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
