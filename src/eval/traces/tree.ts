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

/**
 * What the walk needs of a span or run. `root` and `depth` are the walk's
 * memo, written on the link itself (not in maps of their own: at a million
 * spans two more million-entry maps were a large part of the reader's heap
 * and time; docs/recorded-traces.md, "Scale"); a reader may declare them
 * up front (`root: undefined, depth: -1`) so its links keep one shape.
 */
export interface TreeLink {
  parent: string | null;
  /** The root found for this link (set by the walk). */
  root?: string | undefined;
  /** How far below its root this link is (set with `root`). */
  depth?: number;
}

/** How the messages name things: "span" / "parentSpanId" or "run" / "parent_run_id". */
export interface TreeWords {
  thing: "span" | "run";
  parentField: string;
  /** The message when a parent is in none of the files (after "<thing> X names the parent <thing> Y, which is in none of the files read"); null: such a parent ends the walk (the run is taken as its own root). */
  missingHint: string | null;
}

/** A function giving the root id of an id of `links` (memoised on the links; `known`: the id's link, when the caller has it). @throws DataValidationError on a cycle, a runaway depth or a missing parent. */
export function rootFinder<L extends TreeLink>(
  links: ReadonlyMap<string, L>,
  where: (link: L) => { file: string; line: number },
  words: TreeWords,
): (id: string, known?: L) => string {
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
  /** Remembers the chain's root and depths (`base`: the depth of the chain's last id's parent, -1 at a root); a chain deeper than MAX_TREE_DEPTH is named. */
  const settle = (chain: readonly L[], root: string, base: number, first: string): string => {
    const deepest = base + chain.length;
    if (deepest > MAX_TREE_DEPTH)
      throw new DataValidationError([
        {
          ...where(chain[0]!),
          field: words.parentField,
          message: `${words.thing} ${first} is ${deepest} levels below its root ${root} (a runaway chain of parents, deeper than ${MAX_TREE_DEPTH}): not a recording of a graph; export the trace again`,
        },
      ]);
    // Each walked id's root and depth, on its link: a chain walked from its top down, a level a walk, is measured too.
    for (let i = 0; i < chain.length; i++) {
      const link = chain[i]!;
      link.root = root;
      link.depth = deepest - i;
    }
    return root;
  };
  return (id: string, known?: L): string => {
    const chain: L[] = [];
    const ids: string[] = [];
    let cur = id;
    let link = known ?? links.get(cur)!;
    for (;;) {
      if (link.root !== undefined) return settle(chain, link.root, link.depth!, id);
      chain.push(link);
      ids.push(cur);
      // Deeper than any graph's trace: a parent cycle (named by its members) or a runaway chain. Nothing is kept per walk until then.
      if (chain.length > MAX_TREE_DEPTH) throw tooDeep(ids, id);
      if (link.parent === null) return settle(chain, cur, -1, id);
      const next = links.get(link.parent);
      if (next === undefined && words.missingHint === null) return settle(chain, cur, -1, id);
      if (next === undefined)
        throw new DataValidationError([
          {
            ...where(link),
            field: words.parentField,
            message: `${words.thing} ${cur} names the parent ${words.thing} ${link.parent}, which is in none of the files read ${words.missingHint}`,
          },
        ]);
      cur = link.parent;
      link = next;
    }
  };
}
