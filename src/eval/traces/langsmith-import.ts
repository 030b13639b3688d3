/**
 * `retrace cases import` of LangSmith runs (the LangSmith format's
 * `casesImport`, ./formats/langsmith.ts; docs/synthetic-cases.md#importing-conversations):
 * every run, root or child, goes through the reader `eval --traces` uses
 * (./langsmith.ts: parents, threads, order; a parent not exported ends the
 * walk, root runs alone being a usual import), and each root run is also
 * read strictly as a turn (src/kb/conversations.ts `rootRunTurn`: its
 * locale and the assistant messages before its human message).
 */
import type { DataIssue } from "../../errors.js";
import { rootRunTurn, type Conversation, type RootRunTurn } from "../../kb/conversations.js";
import type { RunsImport } from "./formats/format.js";
import { LangSmithReader, runParent } from "./langsmith.js";
import type { RecordedConversation } from "./types.js";

/** A new import of LangSmith runs. */
export function langsmithRunsImport(): RunsImport {
  const reader = new LangSmithReader({ partial: true });
  const roots = new Map<string, RootRunTurn>();
  let childRuns = 0;
  return {
    add(r, where, issues) {
      const run = r.value as Record<string, unknown>;
      reader.add(r);
      if (runParent(run) !== null) childRuns++;
      else {
        const turn = rootRunTurn(run, where, issues);
        if (turn !== null) roots.set(run.id as string, turn);
      }
    },
    finish: (issues, conversationsOf) => ({
      conversations: langsmithConversations(conversationsOf(reader.turns()), roots, issues),
      linkOnly: childRuns,
    }),
  };
}

/**
 * The conversations of LangSmith runs as `eval --traces` reads them
 * (`recorded`: the reader's turns grouped by ./read.ts `conversationsOf`): one per thread as LangSmith groups runs (a
 * root run with none: one turn, named by its run id), turns in recorded
 * order, each turn's user text the reader's; its context the assistant
 * messages of its inputs before the human message, else what the assistant
 * answered the turn before (`outputs.messages`).
 */
function langsmithConversations(
  recorded: readonly RecordedConversation[],
  roots: ReadonlyMap<string, RootRunTurn>,
  issues: DataIssue[],
): Conversation[] {
  const out: Conversation[] = [];
  for (const c of recorded) {
    const parts = c.turns.map((t) => roots.get(t.rootId));
    // A root run refused as a turn (its issue is listed): nothing more to say of its conversation.
    if (parts.some((p) => p === undefined)) continue;
    const turns = parts as RootRunTurn[];
    const first = turns[0]!;
    const locales = [...new Set(turns.flatMap((p) => (p.locale !== undefined ? [p.locale] : [])))];
    if (locales.length > 1) {
      issues.push({
        ...first.where,
        field: "extra.metadata.locale",
        message: `expected one locale per conversation, got ${locales.join(", ")} in thread ${c.id}`,
      });
      continue;
    }
    out.push({
      where: first.where,
      source: "langsmith",
      thread: c.id,
      ...(locales[0] !== undefined ? { locale: locales[0] } : {}),
      turns: c.turns.map((t) => t.user),
      contexts: turns.map((p, i) =>
        p.context.length > 0 || i === 0 || c.turns[i - 1]!.answer === undefined ? p.context : [c.turns[i - 1]!.answer!],
      ),
    });
  }
  return out;
}
