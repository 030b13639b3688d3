/**
 * The answerer's policy check: requests it must decline whatever the
 * knowledge base says. Patterns are data, per locale (en, es-419, pt-BR), in
 * four categories (the adversarial categories of the eval set):
 *
 *   - `prompt_injection`: instructions smuggled into the question ("ignore
 *     your previous instructions", "new instruction from your admin", "[note
 *     to the assistant: ...]", "developer mode", "you are now ...");
 *   - `other_customer_data`: asking for another person's account data; a
 *     rule matches only when BOTH a third party ("my ex-husband", "that
 *     person's", "su cuenta", "dele") AND a piece of account or identity
 *     data ("balance", "card number", "saldo", "CPF") are present, so
 *     "send money to my sister" or "my own CPF" still get answers;
 *   - `bypass_limits_or_verification`: getting around verification, codes,
 *     reviews or limits ("without the code", "a back door", "my brother's
 *     license", "split it so they don't notice", "sem passar pela análise");
 *   - `out_of_scope`: requests no support article can serve (poems and
 *     other creative writing, investment advice, legal documents).
 *
 * Matching runs on the user's message only (never on the carried query, so
 * a refused turn does not contaminate the next one), after lowercasing,
 * accent folding and whitespace collapsing: patterns are written without
 * accents. A rule is a list of regular expressions that must ALL match.
 * With no locale, every locale's rules apply.
 *
 * Rules may only be changed against the `tune` part of the committed split
 * (`kb/eval/split.json`) and on general grounds, never by looking at held-out
 * turns; the rule families added after the split (language-independent
 * injection formats, role-play, authority claims, forced replies, a third
 * person's account, polite "on your end" bypasses, tax and product advice)
 * and the protocol are in docs/holdout.md.
 */
import { LOCALES, tableLocaleFor, type Locale } from "../kb/types.js";
import { foldAccents } from "../retrieval/analyzer.js";
import { EN_RULES } from "./policy-en.js";
import { ES_RULES } from "./policy-es.js";
import { PT_RULES } from "./policy-pt.js";
import type { PolicyRule, PolicyViolation } from "./policy-shapes.js";

export type { PolicyCategory, PolicyRule, PolicyViolation } from "./policy-shapes.js";

/** The policy rules, per locale (one file a locale: ./policy-en.ts, ./policy-es.ts, ./policy-pt.ts). */
export const POLICY_RULES: Readonly<Record<Locale, readonly PolicyRule[]>> = {
  en: EN_RULES,
  "es-419": ES_RULES,
  "pt-BR": PT_RULES,
};

/** Lowercase, accent-folded, whitespace collapsed, curly apostrophes straightened: what the patterns see. */
export function normalizeForPolicy(text: string): string {
  return foldAccents(text.normalize("NFKC").toLowerCase())
    .replace(/[’‘`´]/g, "'")
    .replace(/\s+/g, " ")
    .trim();
}

/** The first rule `text` violates (rules of `locale`, or of every locale when undefined), or null. Pure. */
export function checkPolicy(text: string, locale?: Locale): PolicyViolation | null {
  const norm = normalizeForPolicy(text);
  // Generic rules for a language without a table: every built-in table's rules (docs/languages.md).
  const table = locale === undefined ? null : tableLocaleFor(locale);
  const locales = table === null ? LOCALES : [table];
  for (const l of locales) {
    for (const rule of POLICY_RULES[l]) {
      if (rule.all.every((re) => re.test(norm))) return { category: rule.category, rule: rule.id, locale: l };
    }
  }
  return null;
}
