/**
 * The input formats of the knowledge base, each defined once as a zod
 * schema; the TypeScript types are inferred from them (docs/schema-versions.md):
 *
 * - {@link CardFrontMatterSchema}: a card's YAML front matter;
 * - {@link CaseLineSchema}: one line of `cases.jsonl`;
 * - {@link SplitFileSchema}: the tune/holdout split file `eval/split.json`.
 *
 * Rules that need more than the value itself stay explicit checks after the
 * parse: a card's id equals its file name and its locale its folder
 * (src/kb/cards.ts); case ids are unique, gold ids name cards of the case's
 * locale, and the case's locale is one of the KB's (src/kb/cases.ts); the split
 * names known cases, each once, and covers them all (src/kb/split.ts).
 */
import { z } from "zod";

/**
 * `synthetic`: made by `retrace cases synth` (docs/synthetic-cases.md); a split of
 * its own in every report, never mixed into the headline figures when real cases are present.
 */
export const CASE_KINDS = ["golden", "adversarial", "synthetic"] as const;
export const EXPECTS = ["answer", "refuse"] as const;
/** Adversarial categories (optional on a case, used for reporting). */
export const ADVERSARIAL_CATEGORIES = [
  "prompt_injection",
  "other_customer_data",
  "bypass_limits_or_verification",
  "out_of_scope",
] as const;

export const CARD_ID_PATTERN = /^[a-z0-9][a-z0-9-]*$/;
export const CASE_ID_PATTERN = /^[a-z0-9][a-z0-9-]*$/;
/**
 * A case has any number of turns, one at least (docs/synthetic-cases.md#importing-conversations):
 * real conversations run 5 to 12 user turns and more. `retrace cases synth` writes
 * at most MAX_SYNTH_TURNS (a generator's choice, not the format's).
 */
export const MAX_SYNTH_TURNS = 4;

/** Tags seen so far and their canonical forms: locale checks sit on every turn's hot path, and the answer never changes. */
const canonicalMemo = new Map<string, string | null>();
const CANONICAL_MEMO_LIMIT = 10_000;

/** The canonical form of a BCP-47 tag (`Intl.getCanonicalLocales`), or null when `tag` is not one (docs/languages.md). */
export function canonicalLocale(tag: string): string | null {
  const known = canonicalMemo.get(tag);
  if (known !== undefined || canonicalMemo.has(tag)) return known ?? null;
  let canonical: string | null;
  if (tag.trim() !== tag || tag === "") canonical = null;
  else {
    try {
      canonical = Intl.getCanonicalLocales(tag)[0] ?? null;
    } catch {
      canonical = null;
    }
  }
  if (canonicalMemo.size < CANONICAL_MEMO_LIMIT) canonicalMemo.set(tag, canonical);
  return canonical;
}

/** A string that states `expectation` for every failure of its own checks. */
function expecting(expectation: string) {
  return z.string({ message: expectation });
}

/** What a locale must be, as error messages say it: any canonical BCP-47 tag (docs/languages.md). */
export const LOCALE_EXPECTED = "a canonical BCP-47 language tag (e.g. en, de, fr-CA, ja, zh-Hans)";
const LOCALE_EXPECTATION = LOCALE_EXPECTED;

/**
 * A BCP-47 language tag in canonical form (`pt-BR`, not `pt-br` or `pt_BR`),
 * checked with `Intl.getCanonicalLocales`; a non-canonical spelling of a valid
 * tag is named in the message. Which tags a KB actually has is a cross-field
 * rule (its locale folders), not the schema's.
 */
export const LocaleTagSchema = expecting(LOCALE_EXPECTATION).refine(
  (s) => canonicalLocale(s) === s,
  (s) => {
    const canonical = canonicalLocale(s);
    const hint = canonical !== null && canonical !== s ? ` (did you mean "${canonical}"?)` : "";
    return { message: `expected \`locale\` to be ${LOCALE_EXPECTATION}${hint}, got ${JSON.stringify(s)}` };
  },
);

/** Unicode white space (`\p{White_Space}`: NBSP, ideographic space, …) and format characters (`\p{Cf}`: zero-width space, ZWJ, word joiner, BOM, soft hyphen, …). */
const BLANK_TEXT = /^[\p{White_Space}\p{Cf}]*$/u;
const INVISIBLE = /(?! )[\p{White_Space}\p{Cf}]/gu;

/**
 * True when `s` is empty once Unicode white space and format characters are
 * left out: `""`, `"  "`, `"\u00a0\u200b"`, `"\ufeff"`. A query, a turn's
 * question or a title made only of these is empty (docs/reliability.md).
 */
export function isBlankText(s: string): boolean {
  return BLANK_TEXT.test(s);
}

/** `s` as a JSON string with its white space (but the plain space) and format characters escaped (`"\u00a0\u200b"`), so they show in a message. */
export function showText(s: string): string {
  const escape = (c: string) => c.split("").map((u) => `\\u${u.charCodeAt(0).toString(16).padStart(4, "0")}`).join("");
  return JSON.stringify(s).replace(INVISIBLE, escape);
}

/** What a query must be (the retriever's and the retrieve node's check). */
export const NON_BLANK_QUERY = "a non-empty query (not only white space or invisible format characters such as NBSP or zero-width spaces)";

const nonEmpty = (what: string) =>
  expecting(what).refine(
    (s) => !isBlankText(s),
    (s) => ({ message: `expected ${what}, got ${s === "" ? '""' : `${showText(s)} (only white space or invisible format characters)`}` }),
  );

const keysOf = (keys: readonly string[]) => `expected only ${keys.map((k) => `\`${k}\``).join(", ")}`;

/** A card's front matter: `id`, `locale`, `title`, optional `tags`. */
export const CardFrontMatterSchema = z
  .object({
    id: expecting(`the card id matching ${CARD_ID_PATTERN.source} (equal to the file name)`).regex(CARD_ID_PATTERN, {
      message: `the card id matching ${CARD_ID_PATTERN.source} (equal to the file name)`,
    }),
    locale: LocaleTagSchema,
    title: nonEmpty("a non-empty title"),
    tags: z.array(z.string(), { message: "a list of strings" }).optional(),
  })
  .strict(keysOf(["id", "locale", "title", "tags"]));
export type CardFrontMatter = z.infer<typeof CardFrontMatterSchema>;

/** The highest relevance grade a turn's `relevant` may give (TREC's 0–3 scale, as UMBRELA and TREC RAG use). */
export const MAX_GRADE = 3;

/** A map card id → integer grade 0…MAX_GRADE. */
function GradesSchema(what: string) {
  const grade = z
    .number({ message: `a ${what}: an integer 0 to ${MAX_GRADE}` })
    .int({ message: `a ${what}: an integer 0 to ${MAX_GRADE}` })
    .min(0, { message: `a ${what}: an integer 0 to ${MAX_GRADE}` })
    .max(MAX_GRADE, { message: `a ${what}: an integer 0 to ${MAX_GRADE}` });
  const record = z.record(expecting("a card id"), grade, { message: `an object mapping card ids to a ${what} (0 to ${MAX_GRADE})` });
  // `__proto__` as a key would be dropped by the record (it sets the prototype): refused here, as any id naming no card is later.
  return z
    .unknown()
    .superRefine((v, ctx) => {
      if (typeof v === "object" && v !== null && Object.hasOwn(v, "__proto__"))
        ctx.addIssue({ code: z.ZodIssueCode.custom, path: ["__proto__"], message: `a card id ("__proto__" names no card)` });
    })
    .pipe(record);
}

/** A list of distinct card ids. */
function cardIdList(what: string) {
  return z
    .array(expecting("a card id").min(1, { message: "a card id" }), { message: `an array of card ids (${what})` })
    .superRefine((ids, ctx) => {
      const seen = new Set<string>();
      ids.forEach((g, j) => {
        if (seen.has(g)) ctx.addIssue({ code: z.ZodIssueCode.custom, path: [j], message: `duplicate card id ${JSON.stringify(g)}` });
        seen.add(g);
      });
    });
}

/** The roles a turn's `context` may hold: the assistant's side of the conversation. */
export const CONTEXT_ROLES = ["assistant"] as const;

/** One message of a turn's `context`: `{role: "assistant", content}`. */
export const TurnContextSchema = z
  .object({
    role: z.enum(CONTEXT_ROLES),
    content: nonEmpty("a non-empty message text"),
  })
  .strict(keysOf(["role", "content"]));
export type TurnContext = z.infer<typeof TurnContextSchema>;

/**
 * One turn of a case. A turn without `must_cite_one_of`, `expect` and
 * `relevant` is a turn **to label** (an imported conversation, `retrace cases
 * import`): it runs through the graph but scores nothing. A turn with
 * `relevant` but no `must_cite_one_of` is scored for nDCG only. `standalone`: the turn's question
 * written out in full (a follow-up's oracle rewrite), optional.
 */
export const EvalTurnSchema = z
  .object({
    user: nonEmpty("a non-empty string"),
    must_cite_one_of: z
      .array(expecting("a card id").min(1, { message: "a card id" }), { message: "an array of card ids ([] for a no-match turn)" })
      .superRefine((ids, ctx) => {
        const seen = new Set<string>();
        ids.forEach((g, j) => {
          if (seen.has(g)) ctx.addIssue({ code: z.ZodIssueCode.custom, path: [j], message: `duplicate gold id ${JSON.stringify(g)}` });
          seen.add(g);
        });
      })
      .optional(),
    expect: z.enum(EXPECTS).optional(),
    /**
     * Optional: the self-contained question a perfect rewrite of `user` would
     * produce from the conversation so far (the "oracle" query of the query
     * attribution, docs/query-attribution.md). Never blank when given.
     */
    standalone: nonEmpty("a non-empty standalone question (the self-contained rewrite of `user`)").optional(),
    /**
     * Optional graded relevance, apart from the citation contract
     * (docs/metrics.md): card id → grade 0 (not relevant) … 3 (perfectly
     * relevant). nDCG uses these gains when present; hit@k and recall@k keep
     * reading `must_cite_one_of`.
     */
    relevant: GradesSchema("grade").optional(),
    /** Optional: the card ids a person judged for this turn (any grade, 0 included); judged@k reads it (docs/metrics.md). */
    judged: cardIdList("judged").optional(),
    /** Optional: the grades a judge suggested when the turn was labelled (`retrace label --judge`); kept for `retrace label --agreement`, never scored. */
    suggested: GradesSchema("suggested grade").optional(),
    /**
     * Optional: what the assistant said before this user turn (since the
     * previous user turn), kept by `retrace cases import` so a labeller reads a
     * follow-up with the question it answers (docs/synthetic-cases.md). Shown
     * on the labelling page only: never sent to a graph, never scored, left
     * out of the dataset hash.
     */
    context: z
      .array(TurnContextSchema, { message: 'an array of {"role": "assistant", "content": "…"} messages (what the assistant said before this turn)' })
      .optional(),
  })
  .strict(keysOf(["user", "must_cite_one_of", "expect", "standalone", "relevant", "judged", "suggested", "context"]))
  .superRefine((t, ctx) => {
    if ((t.must_cite_one_of === undefined) !== (t.expect === undefined)) {
      const missing = t.must_cite_one_of === undefined ? "must_cite_one_of" : "expect";
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: [missing],
        message: `expected \`must_cite_one_of\` and \`expect\` together (a labelled turn) or neither (a turn to label), got no \`${missing}\``,
      });
    }
  });
export type EvalTurn = z.infer<typeof EvalTurnSchema>;

/** Where a synthetic case came from (`retrace cases synth`; docs/synthetic-cases.md). */
export const CaseOriginSchema = z
  .object({
    generator: nonEmpty("the generator's name"),
    version: nonEmpty("the generator's version"),
    seed: z.number({ message: "an integer seed" }).int({ message: "an integer seed" }),
    card: nonEmpty("the source card id"),
    chunk: nonEmpty("the source chunk id of the first turn"),
    /** The chunk each turn was built from (a topic-shift turn names another card's chunk). */
    chunks: z.array(z.string(), { message: "an array of chunk ids, one per turn" }).optional(),
  })
  .strict(keysOf(["generator", "version", "seed", "card", "chunk", "chunks"]));
export type CaseOrigin = z.infer<typeof CaseOriginSchema>;

/** One line of `cases.jsonl` (the `line` of an EvalCase is added by the loader). */
export const CaseLineSchema = z
  .object({
    id: expecting(`a case id matching ${CASE_ID_PATTERN.source}`).regex(CASE_ID_PATTERN, { message: `a case id matching ${CASE_ID_PATTERN.source}` }),
    locale: LocaleTagSchema,
    kind: z.enum(CASE_KINDS),
    category: z.enum(ADVERSARIAL_CATEGORIES).optional(),
    origin: CaseOriginSchema.optional(),
    turns: z
      .array(EvalTurnSchema, { message: "an array of turns (one at least)" })
      .min(1, { message: "an array of turns (one at least)" }),
  })
  .strict(keysOf(["id", "locale", "kind", "category", "origin", "turns"]))
  .superRefine((c, ctx) => {
    if (c.category !== undefined && c.kind !== "adversarial")
      ctx.addIssue({ code: z.ZodIssueCode.custom, path: ["category"], message: `\`category\` is only allowed on adversarial cases, got it on a ${JSON.stringify(c.kind)} case` });
    if (c.kind === "synthetic" && c.origin === undefined)
      ctx.addIssue({ code: z.ZodIssueCode.custom, path: ["origin"], message: "expected `origin` ({generator, version, seed, card, chunk}) on a synthetic case" });
    if (c.kind !== "synthetic" && c.origin !== undefined)
      ctx.addIssue({ code: z.ZodIssueCode.custom, path: ["origin"], message: `\`origin\` is only allowed on synthetic cases, got it on a ${JSON.stringify(c.kind)} case` });
    if (c.origin?.chunks !== undefined && c.origin.chunks.length !== c.turns.length)
      ctx.addIssue({ code: z.ZodIssueCode.custom, path: ["origin", "chunks"], message: `expected one chunk id per turn (${c.turns.length}), got ${c.origin.chunks.length}` });
  });
export type CaseLine = z.infer<typeof CaseLineSchema>;

export const SPLIT_PARTS = ["tune", "holdout"] as const;

/** The committed tune/holdout split, `<kb>/eval/split.json`, version 1. */
export const SplitFileSchema = z
  .object({
    version: z.literal(1),
    note: z.string().optional(),
    tune: z.array(z.string(), { message: "an array of case ids" }),
    holdout: z.array(z.string(), { message: "an array of case ids" }),
  })
  .strict(keysOf(["version", "note", ...SPLIT_PARTS]));
export type SplitFile = z.infer<typeof SplitFileSchema>;
