/**
 * The root of every span or run of a recording (docs/recorded-traces.md,
 * "Bad recordings"), for both readers (./otlp.ts, ./langsmith.ts): a walk up
 * the parent links that is bounded whatever the file holds. A parent cycle
 * (two spans that are each other's parent, a span that is its own parent)
 * and a chain deeper than MAX_TREE_DEPTH are exit 2 naming the spans or
 * runs, instead of a walk that never ends; a parent in none of the files is
 * named too. Each span is walked once (the roots found are remembered), so
 * the whole recording costs time linear in its size.
 */
import { DataValidationError } from "../../errors.js";

/** The deepest a span or run may sit below its root; real LangGraph traces are a few dozen levels deep. */
export const MAX_TREE_DEPTH = 10_000;

/** What the walk needs of a span or run. */
export interface TreeLink {
  parent: string | null;
}

/** How the messages name things: "span" / "parentSpanId" or "run" / "parent_run_id". */
export interface TreeWords {
  thing: "span" | "run";
  parentField: string;
  /** The message when a parent is in none of the files (after "<thing> X names the parent <thing> Y, which is in none of the files read"); null: such a parent ends the walk (the run is taken as its own root). */
  missingHint: string | null;
}

/** A function giving the root id of an id of `links` (memoised). @throws DataValidationError on a cycle, a runaway depth or a missing parent. */
export function rootFinder<L extends TreeLink>(
  links: ReadonlyMap<string, L>,
  where: (link: L) => { file: string; line: number },
  words: TreeWords,
): (id: string) => string {
  const rootOf = new Map<string, string>();
  return (id: string): string => {
    const chain: string[] = [];
    const onChain = new Map<string, number>();
    let cur = id;
    for (;;) {
      const known = rootOf.get(cur);
      if (known !== undefined) {
        for (const c of chain) rootOf.set(c, known);
        return known;
      }
      const seen = onChain.get(cur);
      if (seen !== undefined) {
        const cycle = chain.slice(seen);
        const link = where(links.get(cycle[0]!)!);
        const shown = cycle.slice(0, 10).join(" → ");
        throw new DataValidationError([
          {
            file: link.file,
            line: link.line,
            field: words.parentField,
            message:
              cycle.length === 1
                ? `${words.thing} ${cur} names itself as its parent (a parent cycle): it has no root; export the trace again (the exporter wrote a broken link)`
                : `${words.thing}s ${shown}${cycle.length > 10 ? ` → … (${cycle.length} ${words.thing}s)` : ""} → ${cycle[0]} are each other's parents (a parent cycle): none of them has a root; export the trace again (the exporter wrote a broken link)`,
          },
        ]);
      }
      const link = links.get(cur)!;
      onChain.set(cur, chain.length);
      chain.push(cur);
      if (chain.length > MAX_TREE_DEPTH) {
        const first = where(links.get(id)!);
        throw new DataValidationError([
          {
            file: first.file,
            line: first.line,
            field: words.parentField,
            message: `${words.thing} ${id} is more than ${MAX_TREE_DEPTH} levels below its root (a runaway chain of parents, by ${chain[chain.length - 1]}): not a recording of a graph; export the trace again`,
          },
        ]);
      }
      if (link.parent === null) {
        for (const c of chain) rootOf.set(c, cur);
        return cur;
      }
      if (!links.has(link.parent) && words.missingHint === null) {
        for (const c of chain) rootOf.set(c, cur);
        return cur;
      }
      if (!links.has(link.parent))
        throw new DataValidationError([
          {
            ...where(link),
            field: words.parentField,
            message: `${words.thing} ${cur} names the parent ${words.thing} ${link.parent}, which is in none of the files read ${words.missingHint}`,
          },
        ]);
      cur = link.parent;
    }
  };
}
