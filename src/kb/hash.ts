/** Content hashes that name what a run measured: the KB and the eval dataset. */
import { createHash } from "node:crypto";
import type { EvalCase, KnowledgeBase } from "./types.js";

function sha256(parts: string[]): string {
  const h = createHash("sha256");
  for (const p of parts) h.update(p).update("\u0000");
  return h.digest("hex");
}

/** Hash of every card's id, locale, title, tags and body, independent of file order and paths. */
export function kbHash(kb: KnowledgeBase): string {
  const cards = [...kb.cards].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return sha256(cards.map((c) => JSON.stringify([c.id, c.locale, c.title, c.tags, c.body.trim()])));
}

/** Hash of the cases' content (ids, locales, kinds, turns, gold and, where a turn has one, its `standalone` question), independent of blank lines and key order; a dataset without `standalone` hashes as before it existed. */
export function datasetHash(cases: readonly EvalCase[]): string {
  return sha256(
    cases.map((c) =>
      JSON.stringify([c.id, c.locale, c.kind, c.category ?? null, c.turns.map((t) => (t.standalone === undefined ? [t.user, t.must_cite_one_of, t.expect] : [t.user, t.must_cite_one_of, t.expect, t.standalone]))]),
    ),
  );
}
