/**
 * A run's recorded retrieval settings as text, and the paths at which two
 * settings objects differ: what the baseline check, the shard merge and the
 * renderers say about settings (docs/fusion-and-tuning.md). Outside the
 * renderers so that the gate compares settings without importing one.
 */
import { isDeepStrictEqual } from "node:util";
import type { JsonValue, OpaqueSetting } from "../../contract/trace.js";
import type { RetrievalRunConfig } from "./types.js";

/**
 * An opaque JSON object as `key=value` pairs, keys sorted in code-unit order
 * at every level, nested objects flattened to dotted paths
 * (`{ w: { x: 0.9, a: 0.1 } }` → `w.a=0.1`, `w.x=0.9`); strings printed as they are, arrays and other values
 * as JSON. The report never reads the names: it prints what the agent recorded.
 */
export function paramPairs(params: { readonly [key: string]: JsonValue }, prefix = ""): string[] {
  const out: string[] = [];
  for (const key of Object.keys(params).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))) {
    const v = params[key]!;
    const path = `${prefix}${key}`;
    if (typeof v === "object" && v !== null && !Array.isArray(v)) out.push(...paramPairs(v, `${path}.`));
    else out.push(`${path}=${typeof v === "string" ? v : JSON.stringify(v)}`);
  }
  return out;
}

/**
 * The dotted paths at which two JSON values differ (deep equality, key order
 * ignored), sorted: `["fusion.method", "fusion.params.k"]`. A key on one side
 * only is a path; arrays compare whole. Empty when equal.
 */
export function differingPaths(a: unknown, b: unknown, prefix = ""): string[] {
  const isObject = (v: unknown): v is Record<string, unknown> =>
    typeof v === "object" && v !== null && !Array.isArray(v);
  if (isObject(a) && isObject(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
    return keys.flatMap((k) => differingPaths(a[k], b[k], `${prefix}${k}.`));
  }
  return isDeepStrictEqual(a, b) ? [] : [prefix.replace(/\.$/, "")];
}

/** `method(key=value, …)`, e.g. `m(k=60)` or `m()`: an opaque setting (its method and parameters, in `paramPairs` order). */
export function fusionText(c: { readonly fusion: OpaqueSetting }): string {
  return `${c.fusion.method}(${paramPairs(c.fusion.params).join(", ")})`;
}

/** One run config as text: `fusion=m(k=60) denseK=20 bm25K=20 a.b=1 c=2`: the fusion setting, the depths, then the opaque settings' pairs (`paramPairs`). */
export function retrievalConfigText(c: RetrievalRunConfig): string {
  const rest = c.settings === undefined ? [] : paramPairs(c.settings);
  return [`fusion=${fusionText(c)}`, `denseK=${c.denseK}`, `bm25K=${c.bm25K}`, ...rest].join(" ");
}
