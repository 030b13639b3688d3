/**
 * The root of every span or run of a recording (docs/recorded-traces.md,
 * "Bad recordings"), for both readers (./otlp.ts, ./langsmith.ts): a walk up
 * the parent links that is bounded whatever the file holds. A parent cycle
 * (two spans that are each other's parent, a span that is its own parent)
 * and a chain deeper than MAX_TREE_DEPTH are exit 2 naming the spans or
 * runs, instead of a walk that never ends; a parent in none of the files is
 * named too. Each span is walked once (the roots found are remembered), so
 * the whole recording costs time linear in its size; a walk keeps nothing
 * but its chain until it passes MAX_TREE_DEPTH, where a cycle shows as an id
 * met twice (a cycle costs at most MAX_TREE_DEPTH steps to find).
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
  /** The error for a walk past MAX_TREE_DEPTH: the cycle it went round, if any, else the depth. */
  const tooDeep = (chain: readonly string[], id: string): DataValidationError => {
    const seen = new Map<string, number>();
    for (let i = 0; i < chain.length; i++) {
      const first = seen.get(chain[i]!);
      if (first === undefined) {
        seen.set(chain[i]!, i);
        continue;
      }
      const cycle = chain.slice(first, i);
      const link = where(links.get(cycle[0]!)!);
      const shown = cycle.slice(0, 10).join(" → ");
      return new DataValidationError([
        {
          ...link,
          field: words.parentField,
          message:
            cycle.length === 1
              ? `${words.thing} ${cycle[0]} names itself as its parent (a parent cycle): it has no root; export the trace again (the exporter wrote a broken link)`
              : `${words.thing}s ${shown}${cycle.length > 10 ? ` → … (${cycle.length} ${words.thing}s)` : ""} → ${cycle[0]} are each other's parents (a parent cycle): none of them has a root; export the trace again (the exporter wrote a broken link)`,
        },
      ]);
    }
    return new DataValidationError([
      {
        ...where(links.get(id)!),
        field: words.parentField,
        message: `${words.thing} ${id} is more than ${MAX_TREE_DEPTH} levels below its root (a runaway chain of parents, by ${chain[chain.length - 1]}): not a recording of a graph; export the trace again`,
      },
    ]);
  };
  /** How far below its root each walked id is: a chain walked from its top down, a level a walk, is measured too. */
  const depthOf = new Map<string, number>();
  /** Remembers the chain's root and depths (`base`: the depth of the chain's last id's parent, -1 at a root); a chain deeper than MAX_TREE_DEPTH is named. */
  const settle = (chain: readonly string[], root: string, base: number): string => {
    const deepest = base + chain.length;
    if (deepest > MAX_TREE_DEPTH)
      throw new DataValidationError([
        {
          ...where(links.get(chain[0]!)!),
          field: words.parentField,
          message: `${words.thing} ${chain[0]} is ${deepest} levels below its root ${root} (a runaway chain of parents, deeper than ${MAX_TREE_DEPTH}): not a recording of a graph; export the trace again`,
        },
      ]);
    for (let i = 0; i < chain.length; i++) {
      rootOf.set(chain[i]!, root);
      depthOf.set(chain[i]!, deepest - i);
    }
    return root;
  };
  return (id: string): string => {
    const chain: string[] = [];
    let cur = id;
    for (;;) {
      const known = rootOf.get(cur);
      if (known !== undefined) return settle(chain, known, depthOf.get(cur)!);
      const link = links.get(cur)!;
      chain.push(cur);
      // Deeper than any graph's trace: a parent cycle (named by its members) or a runaway chain. Nothing is kept per walk until then.
      if (chain.length > MAX_TREE_DEPTH) throw tooDeep(chain, id);
      if (link.parent === null) return settle(chain, cur, -1);
      if (!links.has(link.parent) && words.missingHint === null) return settle(chain, cur, -1);
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
