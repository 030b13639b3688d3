/**
 * The retrieval configuration file written by `retrace tune` and read by
 * `retrace eval --config FILE`, `retrace beir --config FILE` and (as an
 * object) the graph's `configurable` (docs/fusion-and-tuning.md).
 *
 * ```json
 * { "version": 1,
 *   "retrieval": { "fusion": "minmax", "weights": { "dense": 0.3, "bm25": 0.7 }, "rrfK": 60,
 *                  "denseK": 20, "bm25K": 20, "bm25": { "k1": 0.9, "b": 0.4 } },
 *   "locales": { "en": { ... same keys, each optional ... } },
 *   "tuned": { ... how it was chosen: free-form provenance ... } }
 * ```
 * Every key is optional except `version`; an unset key keeps the default.
 * Unknown keys and out-of-range values are errors naming the key (exit 2).
 */
import { readTextFileOrThrow } from "../kb/text.js";
import { z } from "zod";
import { DataValidationError, type DataIssue } from "../errors.js";
import { canonicalLocale } from "../kb/schemas.js";
import { FusionMethodSchema, fusionParamSchema } from "../retrieval/fusion.js";
import { parseJsonOrThrow } from "../kb/json.js";

const finiteNonNegative = z.number().finite().min(0);

export const retrievalConfigSchema = z
  .object({
    fusion: FusionMethodSchema,
    rrfK: fusionParamSchema("rrf", "k"),
    weights: z.object({ dense: finiteNonNegative, bm25: finiteNonNegative }).partial().strict(),
    denseK: z.number().int().min(1).max(10_000),
    bm25K: z.number().int().min(1).max(10_000),
    bm25: z
      .object({ k1: z.number().finite().min(0).max(10), b: z.number().min(0).max(1) })
      .partial()
      .strict(),
  })
  .partial()
  .strict();

export type RetrievalConfig = z.infer<typeof retrievalConfigSchema>;

export const configFileSchema = z
  .object({
    version: z.literal(1),
    retrieval: retrievalConfigSchema.default({}),
    // Any canonical BCP-47 tag (docs/languages.md): a non-canonical key is named as the bad field.
    locales: z
      .record(z.string(), retrievalConfigSchema)
      .superRefine((o, ctx) => {
        for (const key of Object.keys(o))
          if (canonicalLocale(key) !== key)
            ctx.addIssue({
              code: z.ZodIssueCode.custom,
              path: [key],
              message: "expected a canonical BCP-47 language tag as the key (e.g. en, es-419, pt-BR)",
            });
      })
      .optional(),
    tuned: z.record(z.unknown()).optional(),
  })
  .strict();

export type ConfigFile = z.infer<typeof configFileSchema>;

/** Dotted path of a zod issue (`retrieval.weights.dense`; an unknown key names the key itself). */
function issuePath(issue: z.ZodIssue): string {
  const base = issue.path.map(String).join(".");
  if (issue.code === "unrecognized_keys") return issue.keys.map((k) => (base === "" ? k : `${base}.${k}`)).join(", ");
  return base === "" ? "(root)" : base;
}

/** Validates a parsed config object; DataValidationError naming each offending key. */
export function parseConfig(raw: unknown, file = "<config>"): ConfigFile {
  const r = configFileSchema.safeParse(raw);
  if (r.success) return r.data;
  const issues: DataIssue[] = r.error.issues.map((i) => ({
    file,
    field: issuePath(i),
    message: i.code === "unrecognized_keys" ? "unknown key" : i.message,
  }));
  throw new DataValidationError(issues);
}

/** Reads and validates a config file (exit 2 on a missing file, bad JSON, unknown key or bad value). */
export async function readConfigFile(file: string): Promise<ConfigFile> {
  const text = await readTextFileOrThrow(file); // strict UTF-8, BOM removed, a regular file (src/kb/text.ts)
  return parseConfig(parseJsonOrThrow(text, { file, expected: "a retrace config JSON file" }), file); // src/kb/json.ts
}

/** The retrieval settings for a locale: the file's `retrieval`, overridden key by key by `locales[locale]`. */
export function configFor(config: ConfigFile, locale?: string): RetrievalConfig {
  const base = config.retrieval;
  const over =
    locale !== undefined ? (config.locales as Record<string, RetrievalConfig> | undefined)?.[locale] : undefined;
  if (over === undefined) return base;
  return {
    ...base,
    ...over,
    ...(base.weights !== undefined || over.weights !== undefined
      ? { weights: { ...base.weights, ...over.weights } }
      : {}),
    ...(base.bm25 !== undefined || over.bm25 !== undefined ? { bm25: { ...base.bm25, ...over.bm25 } } : {}),
  };
}

/** Canonical JSON of a config (sorted keys, two-space indent, trailing newline): byte-identical for the same config. */
export function configToJSON(config: ConfigFile): string {
  const sort = (x: unknown): unknown => {
    if (Array.isArray(x)) return x.map(sort);
    if (typeof x === "object" && x !== null) {
      return Object.fromEntries(
        Object.keys(x)
          .sort()
          .map((k) => [k, sort((x as Record<string, unknown>)[k])]),
      );
    }
    return x;
  };
  return `${JSON.stringify(sort(config), null, 2)}\n`;
}
