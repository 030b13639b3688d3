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

/** What of a turn a dataset hash covers: question and gold, then each optional field the turn has (`standalone`, graded `relevant`, `judged`, in sorted key order), so a dataset without them hashes as before they existed; the judge's `suggested` grades (never scored) and the assistant's `context` (never sent to a graph, docs/synthetic-cases.md) are left out. */
function turnContent(t: EvalCase["turns"][number]): unknown[] {
  const parts: unknown[] = [t.user, t.must_cite_one_of, t.expect];
  if (t.standalone !== undefined) parts.push(t.standalone);
  if (t.relevant !== undefined || t.judged !== undefined) {
    const grades = Object.entries(t.relevant ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    parts.push({ relevant: grades, judged: [...(t.judged ?? [])].sort() });
  }
  return parts;
}

/**
 * Hash of the cases' content (ids, locales, kinds, turns, gold and, where a turn has them, its `standalone` question and graded judgments), independent of blank lines and key order; a dataset without the optional fields hashes as before they existed.
 *
 * `recordedContext` (a run with `run.replay: recorded`, docs/configuration.md#replay-own-or-recorded-history):
 * the graph is fed each turn's recorded assistant messages, so they are part of what was measured: each
 * turn's `context` is hashed too, under a marker of the mode, so such a run never shares a hash (nor a
 * baseline) with a run on the graph's own answers. Without it the hash is as it always was.
 */
export function datasetHash(cases: readonly EvalCase[], o: { recordedContext?: boolean } = {}): string {
  const recorded = o.recordedContext === true;
  const parts = cases.map((c) =>
    JSON.stringify([
      c.id,
      c.locale,
      c.kind,
      c.category ?? null,
      c.turns.map(recorded ? (t) => [...turnContent(t), (t.context ?? []).map((m) => m.content)] : turnContent),
    ]),
  );
  return sha256(recorded ? ["replay:recorded", ...parts] : parts);
}
