/**
 * The policy check's rule shapes and the language-independent injection rules every locale's table starts with
 * (src/nodes/policy.ts). Patterns are data.
 */
import type { AdversarialCategory, Locale } from "../kb/types.js";

export type PolicyCategory = AdversarialCategory;

export interface PolicyRule {
  category: PolicyCategory;
  /** Short name for traces and tests. */
  id: string;
  /** All must match the normalised message. */
  all: readonly RegExp[];
}

export interface PolicyViolation {
  category: PolicyCategory;
  rule: string;
  locale: Locale;
}

export const STRUCTURAL_INJECTION: readonly PolicyRule[] = [
  {
    category: "prompt_injection",
    id: "role-tag",
    all: [
      /(^|[[({<"'\s])(system|developer|admin|administrator|root|operator|sistema|administrador)( prompt| message| mensaje| mensagem)?\s*[:\]>)]+\s/,
    ],
  },
  {
    category: "prompt_injection",
    id: "template-token",
    all: [
      /<\|?(im_start|im_end|system|endoftext)\|?>|\[\/?inst\]|<\/?(system|instructions?|prompt|admin|override|sistema|instrucciones|instrucoes)>/,
    ],
  },
  {
    category: "prompt_injection",
    id: "instruction-key",
    all: [
      /["']?(role|system|instructions?|override|mode|command|directive|prompt|admin|sudo|rol|modo|instrucciones|instrucoes|comando)["']?\s*[:=]\s*["'{[]/,
    ],
  },
  {
    category: "prompt_injection",
    id: "prompt-marker",
    all: [
      /(^|\s)#{1,6}\s*(system|instructions?|admin|override|new rules|sistema|instrucciones|instrucoes|reglas nuevas|novas regras)\b|\b(begin|end) (system|admin|hidden|internal) (prompt|message|instructions?)\b|\bsudo\b|\bjailbreak\b/,
    ],
  },
  {
    category: "prompt_injection",
    id: "encoded",
    all: [
      /\b(base ?64|rot ?13|hexadecimal|morse|decode|decodifica|decodifique|descodifica|decifra|decifre|decodificar|decifrar)\b/,
    ],
  },
];

/** The structural rules with ids prefixed per locale (`en-role-tag`, ...). */
export function structuralInjection(prefix: string): PolicyRule[] {
  return STRUCTURAL_INJECTION.map((r) => ({ ...r, id: `${prefix}-${r.id}` }));
}

/** A third person's account or card: "a conta do meu marido", "o cartão dela". */
