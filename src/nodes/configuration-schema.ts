/**
 * The graph configuration (`config.configurable`) defined once as a zod
 * schema; the settings types of src/nodes/configuration.ts are inferred from
 * it (docs/schema-versions.md). `undefined` and `null` mean "not set" for
 * every key. Other keys (LangGraph's own `checkpoint_ns`, a caller's extras)
 * pass through untouched.
 *
 * A failed parse becomes InvalidArgumentError for the first bad key:
 * `Expected \`k\` to be a positive integer, got 0`.
 */
import type { BaseMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { z } from "zod";
import { InvalidArgumentError } from "../errors.js";
import { expectationOf, fieldPath, valueAt } from "../kb/schema-issues.js";
import { canonicalLocale } from "../kb/schemas.js";
import { FusionMethodSchema, fusionParamSchema } from "../retrieval/fusion.js";
import { RETRIEVAL_MODES } from "../retrieval/hybrid.js";
import type { Analyzers } from "../retrieval/analyzer.js";
import type { RetrievalMode, Retriever } from "../retrieval/types.js";

/** `null` → `undefined`, then `schema` or nothing. */
const unset = <T extends z.ZodTypeAny>(schema: T) => z.preprocess((v) => v ?? undefined, schema.optional());

const positiveInteger = () => {
  const m = { message: "a positive integer" };
  return unset(z.number(m).int(m).min(1, m));
};
const boolean = () => unset(z.boolean({ message: "a boolean" }));
const nonNegativeMessage = { message: "a finite non-negative number" };
const nonNegative = () => unset(z.number(nonNegativeMessage).finite(nonNegativeMessage).min(0, nonNegativeMessage));

/** The retrieval keys themselves (also the shape of one locale's overrides). */
const RetrievalKeysSchema = z.object({
  k: positiveInteger(),
  denseK: positiveInteger(),
  bm25K: positiveInteger(),
  mode: unset(
    z.enum(RETRIEVAL_MODES as readonly RetrievalMode[] as [RetrievalMode, ...RetrievalMode[]], {
      message: `one of ${RETRIEVAL_MODES.join(", ")}`,
    }),
  ),
  rerank: boolean(),
  /** Fusion method, RRF constant and branch weights (docs/fusion-and-tuning.md); the method and rrfK (rrf's `k`) by the fusion registry's schemas. */
  fusion: unset(FusionMethodSchema),
  rrfK: unset(fusionParamSchema("rrf", "k")),
  weights: unset(
    z
      .object({ dense: nonNegative(), bm25: nonNegative() }, { message: "an object { dense?, bm25? }" })
      .passthrough()
      .superRefine((w, ctx) => {
        // An unknown branch is named by its own path (`weights.sparse`), as every other bad key is.
        for (const key of Object.keys(w))
          if (key !== "dense" && key !== "bm25")
            ctx.addIssue({ code: z.ZodIssueCode.custom, path: [key], message: "dense or bm25" });
      }),
  ),
});

const LOCALE_KEY_MESSAGE = "canonical BCP-47 language tags as keys (e.g. en, es-419, pt-BR)";

/**
 * Retrieval keys, forwarded to `retriever.retrieve()` only when set, plus
 * `locales`: per-locale overrides of the same keys, applied to the turns of
 * that locale (an exact tag wins over its language subtag; docs/fusion-and-tuning.md).
 */
export const RetrievalSettingsSchema = RetrievalKeysSchema.extend({
  locales: unset(
    z
      .record(z.string(), RetrievalKeysSchema.strict(), { message: "an object { <locale>: { retrieval keys } }" })
      .superRefine((o, ctx) => {
        for (const key of Object.keys(o))
          if (canonicalLocale(key) !== key)
            ctx.addIssue({ code: z.ZodIssueCode.custom, path: [key], message: LOCALE_KEY_MESSAGE });
      }),
  ),
});

const unitInterval = { message: "a number in [0, 1]" };
const oneToTen = { message: "an integer from 1 to 10" };

/** Answer-side keys; an unset key takes its default (CONFIG_DEFAULTS, or the graph's `defaults`). */
export const AnswerSettingsSchema = z.object({
  minEvidence: unset(z.number(unitInterval).finite(unitInterval).min(0, unitInterval).max(1, unitInterval)),
  maxSentences: unset(z.number(oneToTen).int(oneToTen).min(1, oneToTen).max(10, oneToTen)),
  rewriteWithModel: boolean(),
});

const historyMessage = { message: "a non-negative integer (earlier turns the contextualizer may use)" };

/** How the contextualize node builds the query; unset: every earlier turn (the previous turn's query carried, docs/query-attribution.md). */
export const ContextSettingsSchema = z.object({
  /** Earlier turns the contextualizer may use: 0 retrieves with the raw message, N rebuilds the query from the last N turns only. */
  historyTurns: unset(z.number(historyMessage).int(historyMessage).min(0, historyMessage)),
});

export const TunablesSchema = RetrievalSettingsSchema.merge(AnswerSettingsSchema)
  .merge(ContextSettingsSchema)
  .passthrough();

/** Anything that answers a list of messages with a message: every LangChain chat model, or a runnable around one. */
export interface ChatModelLike {
  invoke(input: BaseMessage[], options?: RunnableConfig): Promise<BaseMessage>;
}

export const RETRIEVER_EXPECTATION = "an object with a retrieve(query, options) method";
export const ANALYZERS_EXPECTATION =
  "an analyzer set (createAnalyzers(overrides): an object with an analyze(text, locale) method)";
export const CHAT_MODEL_EXPECTATION = "a chat model (an object with an invoke(messages) method)";

const hasMethod = (name: string) => (v: unknown) =>
  typeof v === "object" && v !== null && typeof (v as Record<string, unknown>)[name] === "function";
export const RetrieverSchema = unset(z.custom<Retriever>(hasMethod("retrieve"), { message: RETRIEVER_EXPECTATION }));
export const ChatModelSchema = unset(z.custom<ChatModelLike>(hasMethod("invoke"), { message: CHAT_MODEL_EXPECTATION }));
export const AnalyzersSchema = unset(
  z.custom<Analyzers>((v) => hasMethod("analyze")(v) && hasMethod("profile")(v), { message: ANALYZERS_EXPECTATION }),
);

/**
 * Everything the nodes read from `config.configurable`. `cards` is any
 * CardSource, normalised (and checked) by `toCardLookup`.
 */
export const ConfigurableSchema = TunablesSchema.extend({
  retriever: RetrieverSchema,
  model: ChatModelSchema,
  analyzers: AnalyzersSchema,
  cards: z.unknown(),
  thread_id: unset(z.union([z.string(), z.number()], { errorMap: () => ({ message: "a string" }) })),
});

/**
 * Parse `raw` with `schema`, or throw InvalidArgumentError naming the first
 * bad key (`prefix` replaces the key for a single-value schema).
 */
export function parseConfig<S extends z.ZodTypeAny>(schema: S, raw: unknown, prefix?: string): z.output<S> {
  const r = schema.safeParse(raw);
  if (r.success) return r.data as z.output<S>;
  const issue = r.error.issues[0]!;
  const name = prefix ?? fieldPath(issue.path) ?? "configurable";
  throw new InvalidArgumentError(name, expectationOf(issue, raw), valueAt(raw, issue.path));
}
