/**
 * The card-id rule (docs/decisions/0001-metric-contract.md), shared by the
 * agent's parent dedup (src/retrieval/parents.ts) and the harness's trace
 * summaries (src/eval/report/trace-summary.ts).
 */

/**
 * The card an entry belongs to: its `parentId`, or its own `id` when
 * `parentId` is empty.
 */
export function cardIdOf(r: { readonly id: string; readonly parentId: string }): string {
  return r.parentId !== "" ? r.parentId : r.id;
}
