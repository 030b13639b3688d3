/**
 * The rerank stage: a cross-encoder rescoring of the fused list's head.
 * `applyRerank` is the pure ordering; `rerankHead` does the one I/O call.
 */
import { InvalidArgumentError } from "../errors.js";
import { assertNonNegativeInteger } from "./fusion.js";
import type { Ranked, Reranker } from "./types.js";

/**
 * Reorders the first `headSize` entries of `fused` by `scores` (one per head
 * entry, higher first; equal scores keep their fused order) and keeps the
 * tail after them in fused order. Ranks are renumbered 1..n.
 *
 * Head entries carry their cross-encoder score; tail entries keep their fused
 * score (the two scales differ: read ranks, not scores, across the boundary).
 * `headSize` larger than the list means the whole list; 0 means no change.
 * `fused` is not mutated.
 *
 * Throws InvalidArgumentError when `headSize` is not a non-negative integer,
 * when `scores.length` differs from the head's length, or a score is not finite.
 */
export function applyRerank(fused: readonly Ranked[], headSize: number, scores: readonly number[]): Ranked[] {
  assertNonNegativeInteger("headSize", headSize);
  const n = Math.min(headSize, fused.length);
  if (scores.length !== n) {
    throw new InvalidArgumentError("scores", `one score per head entry (${n})`, `${scores.length} scores`);
  }
  scores.forEach((s, i) => {
    if (typeof s !== "number" || !Number.isFinite(s))
      throw new InvalidArgumentError(`scores[${i}]`, "a finite number", s);
  });
  const head = fused.slice(0, n).map((r, position) => ({ r, position, score: scores[position] as number }));
  head.sort((a, b) => b.score - a.score || a.position - b.position);
  const out: Ranked[] = head.map(({ r, score }, i) => ({ id: r.id, parentId: r.parentId, score, rank: i + 1 }));
  for (let i = n; i < fused.length; i++) {
    const r = fused[i] as Ranked;
    out.push({ id: r.id, parentId: r.parentId, score: r.score, rank: i + 1 });
  }
  return out;
}

/**
 * Scores the head of `fused` (its first `headSize` entries) against `query`
 * with `reranker`, reading each entry's text through `textOf`, and returns the
 * reranked list (see `applyRerank`). An empty head makes no call.
 */
export async function rerankHead(
  reranker: Reranker,
  query: string,
  fused: readonly Ranked[],
  headSize: number,
  textOf: (id: string) => string,
): Promise<Ranked[]> {
  assertNonNegativeInteger("headSize", headSize);
  const head = fused.slice(0, headSize);
  if (head.length === 0) return applyRerank(fused, headSize, []);
  const texts = head.map((r) => textOf(r.id));
  const scores = await reranker.score(query, texts);
  if (!Array.isArray(scores) || scores.length !== head.length) {
    throw new InvalidArgumentError(
      `${reranker.id} scores`,
      `${head.length} scores (one per text)`,
      Array.isArray(scores) ? `${scores.length} scores` : scores,
    );
  }
  return applyRerank(fused, headSize, scores);
}
