/**
 * The fusion registry (docs/fusion-and-tuning.md, "Fusion methods"): every
 * method the project can fuse with, one file each under this folder, each
 * declaring its name, the zod schema of its parameters and their defaults
 * (`defineFusion` in common.ts). `fuse()` (../fusion.ts) dispatches through
 * this list; the retriever (../hybrid.ts), the graph's `configurable`
 * (src/nodes/configuration-schema.ts) and config files validate the method
 * name and its parameters with the schemas read from here, and nowhere else.
 *
 * Adding a method: its file (with `defineFusion`) and one line in
 * `FUSION_REGISTRY` below. `FusionMethodName` in ../types.ts (the trace
 * contract, which cannot import this file without a cycle) is checked
 * against the registry at compile time (`namesAgree` below), so tsc names
 * the union to extend.
 */
import { z } from "zod";
import { InvalidArgumentError } from "../../errors.js";
import { expectationOf } from "../../kb/schema-issues.js";
import type { FusionMethodName } from "../types.js";
import { adaptiveMethod } from "./adaptive.js";
import { combMnzMethod } from "./combmnz.js";
import type { FusionMethodSpec } from "./common.js";
import { minMaxMethod } from "./minmax.js";
import { rrfMethod } from "./rrf.js";
import { signalsMethod } from "./signals.js";
import { zScoreMethod } from "./zscore.js";

/** Every fusion method, in the order docs and `--help` list them. */
export const FUSION_REGISTRY = Object.freeze([
  rrfMethod,
  minMaxMethod,
  zScoreMethod,
  combMnzMethod,
  adaptiveMethod,
  signalsMethod,
] as const);

export type FusionMethod = (typeof FUSION_REGISTRY)[number]["name"];

/** The method names, in registry order. */
export const FUSION_METHODS = Object.freeze(FUSION_REGISTRY.map((m) => m.name)) as readonly FusionMethod[] as readonly [
  FusionMethod,
  ...FusionMethod[],
];

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** Compile-time: the trace contract's union is exactly the registry's names. */
const namesAgree: Same<FusionMethod, FusionMethodName> = true;
void namesAgree;

/** "one of rrf, minmax, …": the expectation every unknown method name gets. */
export const FUSION_EXPECTATION = `one of ${FUSION_METHODS.join(", ")}`;

/** The zod schema of a method name (config files, the graph's `configurable`). */
export const FusionMethodSchema = z.enum(FUSION_METHODS, { message: FUSION_EXPECTATION });

export function isFusionMethod(x: unknown): x is FusionMethod {
  return (FUSION_METHODS as readonly unknown[]).includes(x);
}

/** The registry entry of `name`; InvalidArgumentError naming `field` (default `fusion`) for an unknown one. */
export function fusionMethod(name: unknown, field = "fusion"): FusionMethodSpec {
  const spec = FUSION_REGISTRY.find((m) => m.name === name);
  if (spec === undefined) throw new InvalidArgumentError(field, FUSION_EXPECTATION, name);
  return spec as unknown as FusionMethodSpec;
}

/**
 * `raw` parsed by `method`'s parameter schema, unset keys filled from its
 * defaults. A bad or unknown key throws InvalidArgumentError naming
 * `<field>.<key>` (field default: the method's name), e.g.
 * ``Expected `rrf.k` to be a finite non-negative number, got -1``.
 */
export function fusionParams(
  method: FusionMethod | FusionMethodSpec,
  raw: unknown = {},
  field?: string,
): Record<string, unknown> {
  const spec = typeof method === "string" ? fusionMethod(method) : method;
  const prefix = field ?? spec.name;
  const r = spec.params.safeParse(raw ?? {});
  if (!r.success) {
    const issue = r.error.issues[0]!;
    if (issue.code === "unrecognized_keys") {
      const params = Object.keys(spec.defaults);
      throw new InvalidArgumentError(
        `${prefix}.${issue.keys[0]}`,
        params.length === 0 ? `no parameter (${spec.name} takes none)` : `one of ${params.join(", ")}`,
        (raw as Record<string, unknown>)[issue.keys[0]!],
      );
    }
    const key = issue.path.map(String).join(".");
    const value = key === "" ? raw : (raw as Record<string, unknown>)[issue.path[0] as string];
    throw new InvalidArgumentError(key === "" ? prefix : `${prefix}.${key}`, expectationOf(issue, raw), value);
  }
  const out: Record<string, unknown> = { ...spec.defaults };
  for (const [k, v] of Object.entries(r.data as Record<string, unknown>)) if (v !== undefined) out[k] = v;
  return out;
}

/** The schema of one parameter of one method (e.g. `rrf`'s `k`, which the top-level setting `rrfK` is). */
export function fusionParamSchema(method: FusionMethod, key: string): z.ZodTypeAny {
  const shape = fusionMethod(method).params.shape as Record<string, z.ZodTypeAny>;
  const s = shape[key];
  if (s === undefined)
    throw new InvalidArgumentError(`${method} parameter`, `one of ${Object.keys(shape).join(", ")}`, key);
  return s;
}

/** Checks one parameter value with its schema; InvalidArgumentError naming `field` (e.g. `rrfK`). */
export function assertFusionParam(method: FusionMethod, key: string, value: unknown, field: string): void {
  const r = fusionParamSchema(method, key).safeParse(value);
  if (!r.success || value === undefined) {
    const issue = r.success ? undefined : r.error.issues[0];
    throw new InvalidArgumentError(field, issue === undefined ? "a value" : expectationOf(issue, value), value);
  }
}
