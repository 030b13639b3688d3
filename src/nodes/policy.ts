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
 */
import { LOCALES, tableLocaleFor, type AdversarialCategory, type Locale } from "../kb/types.js";
import { foldAccents } from "../retrieval/analyzer.js";

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

// Shared fragments (normalised text: lowercase, no accents).
const EN_THIRD_PARTY =
  /\b(his|her|their|(that|this|the other|another) (person|customer|user|guy|woman|man|lady)('?s)?|someone else'?s|somebody else'?s|other (customers?|people|users?)'?s?|my (ex|ex-?husband|ex-?wife|ex-?partner|ex-?boyfriend|ex-?girlfriend|husband|wife|partner|spouse|dad|father|mom|mother|brother|sister|son|daughter|friend|neighbou?r|roommate|boss|coworker|landlord|tenant|cousin|uncle|aunt|grandma|grandpa|grandmother|grandfather)('?s)?)\b/;
const EN_ACCOUNT_DATA =
  /\b(balance|how much (money )?(is in|is on|do(es)? (he|she|they) have|(he|she|they) (has|have|got))|card numbers?|card details|expiration( date)?|expiry|cvv|cvc|security code|pin|account numbers?|routing number|real name|full name|legal name|phone numbers?|home address|address|email( address)?|social security( number)?|ssn|date of birth)\b/;
const ES_THIRD_PARTY =
  /\b(su (cuenta|tarjeta|saldo|clabe|numero|telefono|celular|direccion|nombre|correo)|de (el|ella|ellos|ellas)|(de|a|con) (mi|su|un|una) (ex|exesposo|exesposa|ex esposo|ex esposa|esposo|esposa|pareja|novio|novia|papa|mama|padre|madre|hermano|hermana|hijo|hija|amigo|amiga|vecino|vecina|jefe|jefa|primo|prima|tio|tia|abuelo|abuela|casero|casera|suegro|suegra)|otra persona|otro cliente|otros clientes|alguien mas|esa persona|ese senor|esa senora)\b/;
const ES_ACCOUNT_DATA =
  /\b(saldo|cuanto (dinero )?tiene|numero de (tarjeta|cuenta|celular|telefono)|nombre (completo|real)|telefono|direccion|domicilio|correo|curp|rfc|fecha de nacimiento|nip|cvv|movimientos)\b/;
const PT_THIRD_PARTY =
  /\b(dele|dela|deles|delas|(de|da|do) (outra pessoa|outro cliente|terceiros?)|(minha|meu) (ex|ex-mulher|ex-marido|ex-namorada|ex-namorado|mulher|marido|esposa|esposo|mae|pai|irma|irmao|filha|filho|namorada|namorado|amiga|amigo|vizinha|vizinho|chefe|prima|primo|tia|tio|avo|sobrinha|sobrinho|sogra|sogro)|uma? tal de|essa pessoa|esse cara|ela tem|ele tem)\b/;
const PT_ACCOUNT_DATA =
  /\b(saldo|quanto (dinheiro )?(ela|ele|eles|elas) (tem|tém)|cpf|rg|telefone|endereco|e-?mail|numero do cartao|nome completo|data de nascimento|extrato|senha)\b/;

/** The policy rules, per locale. */
export const POLICY_RULES: Readonly<Record<Locale, readonly PolicyRule[]>> = {
  en: [
    { category: "prompt_injection", id: "en-ignore-instructions", all: [/\b(ignore|disregard|forget|override)\b.{0,40}\b(instructions?|rules|prompts?|guidelines|polic(y|ies)|restrictions|table)\b/] },
    { category: "prompt_injection", id: "en-new-instructions", all: [/\bnew (instructions?|rules?|directives?|orders?)\b/] },
    { category: "prompt_injection", id: "en-note-to-assistant", all: [/\b(note|message|instructions?) (from|to) (the |your )?.{0,40}\b(assistant|ai|bot|model|chatbot)\b/] },
    { category: "prompt_injection", id: "en-mode-switch", all: [/\b(system override|developer mode|dev mode|admin mode|god mode|debug mode|jailbreak|dan mode|unrestricted mode)\b/] },
    { category: "prompt_injection", id: "en-reveal-prompt", all: [/\b(hidden|system|internal|secret|original) (instructions|prompt|notes|rules|configuration)\b/] },
    { category: "prompt_injection", id: "en-role-change", all: [/\b(you are now|from now on,? you|pretend (to be|you are)|act as (an?|my) |roleplay as)\b/] },
    { category: "other_customer_data", id: "en-third-party-data", all: [EN_THIRD_PARTY, EN_ACCOUNT_DATA] },
    { category: "other_customer_data", id: "en-other-customer", all: [/\b(another|other|a different) (customer|user|member|account ?holder)'?s?\b.{0,40}\b(account|balance|details|info|information|data)\b/] },
    { category: "bypass_limits_or_verification", id: "en-circumvent", all: [/\b(back ?door|loophole|workaround|work around|get around|get past|gets? (me|us) past|getting past|bypass|circumvent|sneak (past|around)|trick (the|your) (system|check|app))\b/] },
    { category: "bypass_limits_or_verification", id: "en-skip-check", all: [/\b(skip|avoid|dodge|evade|beat|cheat)\b.{0,25}\b(verification|verify|verifying|id check|identity check|the code|security check|review|limits?|kyc|fraud checks?)\b/] },
    { category: "bypass_limits_or_verification", id: "en-without-check", all: [/\bwithout (the |a |my |any |entering (the |a )?)?(code|verification|verifying|id check|identity check|security check|2fa|two-factor|review|selfie)\b/] },
    { category: "bypass_limits_or_verification", id: "en-someone-elses-id", all: [/\b((my|his|her|their|a) )?(brother|sister|friend|mom|mother|dad|father|wife|husband|cousin|roommate|son|daughter|partner|someone else|somebody else)'?s (id|ids|license|licence|passport|documents?|selfie|face|ssn|social( security)?( number)?|identity)\b/] },
    { category: "bypass_limits_or_verification", id: "en-someone-elses-name", all: [/\b(in|under) (his|her|their|someone else'?s|somebody else'?s|my (mom|mother|dad|father|brother|sister|friend|wife|husband)'?s) name\b/] },
    { category: "bypass_limits_or_verification", id: "en-structuring", all: [/\bso (you|they|it|the app|the bank) (don'?t|won'?t|doesn'?t|wouldn'?t) (notice|flag|catch|see|report|detect)\b/] },
    { category: "out_of_scope", id: "en-creative-writing", all: [/\b(write|compose|make|give|tell) (me )?(an? |some )?(funny |short |romantic |little |quick )?(poem|song|story|essay|joke|rap|haiku|limerick|lyrics|love letter|novel)s?\b|\b(poem|haiku|limerick)s?\b/] },
    { category: "out_of_scope", id: "en-investment-advice", all: [/\b(index funds?|stocks?|etfs?|crypto(currenc(y|ies))?|bitcoin|mutual funds?|invest(ing|ment)? (advice|in|my)|should i invest|401\(?k\)?|roth ira)\b/] },
    { category: "out_of_scope", id: "en-legal", all: [/\b(lawsuit|sue (them|the|him|her|my)|legal advice|lawyer|attorney|court case|draft (a|the|my) (contract|complaint|will))\b/] },
  ],
  "es-419": [
    { category: "prompt_injection", id: "es-ignore-instructions", all: [/\b(olvida|ignora|olvidate de|omite|borra)\b.{0,30}\b(instrucciones|reglas|indicaciones|politicas|restricciones)\b/] },
    { category: "prompt_injection", id: "es-previous-instructions", all: [/\binstrucciones (anteriores|previas|del sistema|ocultas|internas)\b/] },
    { category: "prompt_injection", id: "es-role-change", all: [/\b(ahora eres|a partir de ahora (eres|vas a ser|seras)|eres un (asesor|agente|administrador|empleado) (interno|sin restricciones)|sin restricciones|finge (ser|que eres)|actua como)\b/] },
    { category: "prompt_injection", id: "es-note-to-assistant", all: [/\b(nota|mensaje|instruccion(es)?) (para|al|a la) (el )?(asistente|bot|modelo|ia)\b/] },
    { category: "prompt_injection", id: "es-mode-switch", all: [/\bmodo (desarrollador|soporte tecnico|administrador|admin|dios|depuracion|sin restricciones)\b|\bactivado por (el )?administrador\b/] },
    { category: "other_customer_data", id: "es-third-party-data", all: [ES_THIRD_PARTY, ES_ACCOUNT_DATA] },
    { category: "bypass_limits_or_verification", id: "es-without-check", all: [/\bsin (el |la |los |las |pasar por (el |la )?|hacer (el |la )?|mi )?(codigo|verificacion|verificar|revision|analisis|validacion|selfie|ine|identificacion)\b/] },
    { category: "bypass_limits_or_verification", id: "es-circumvent", all: [/\b(saltar(me|se)?|brincar(me|se)?|evitar|burlar|esquivar|rodear|evadir|darle la vuelta)\b.{0,30}\b(limite|limites|verificacion|codigo|revision|validacion|reporte|analisis)\b/] },
    { category: "bypass_limits_or_verification", id: "es-someone-elses-id", all: [/\b(ine|credencial|identificacion|pasaporte|documentos?|selfie|cara|rostro|curp) de (mi |su |un |una )?(hermano|hermana|amigo|amiga|mama|papa|madre|padre|esposo|esposa|primo|prima|hijo|hija|novio|novia|otra persona|alguien mas)\b/] },
    { category: "bypass_limits_or_verification", id: "es-someone-else-selfie", all: [/\bque (el|ella|otra persona|alguien mas) (grabe|tome|haga|se tome|saque|ponga) (la |su )?(selfie|cara|video)\b/] },
    { category: "bypass_limits_or_verification", id: "es-someone-elses-name", all: [/\ba nombre de (mi |su |otra persona|alguien)/] },
    { category: "bypass_limits_or_verification", id: "es-structuring", all: [/\b(no se (dan|den|van a dar) cuenta|para que no (lo |se )?(noten|detecten|reporten|den cuenta))\b/] },
    { category: "out_of_scope", id: "es-creative-or-legal-writing", all: [/\b(redacta(me)?|escribe(me)?|hazme|componme|haz(me)?) (una |un |el |la )?(demanda|poema|cancion|cuento|ensayo|carta de amor|chiste|tarea|contrato)\b|\bpoemas?\b/] },
    { category: "out_of_scope", id: "es-legal", all: [/\b(demanda|juicio|abogad[oa]|codigo civil|codigo penal|articulos? del codigo|asesoria legal)\b/] },
    { category: "out_of_scope", id: "es-investment-advice", all: [/\b(invertir|inversiones|fondos? de inversion|acciones de|cetes|criptomonedas?|bitcoin|afore)\b/] },
  ],
  "pt-BR": [
    { category: "prompt_injection", id: "pt-ignore-instructions", all: [/\b(ignore|ignora|esqueca|esquece|desconsidere|desconsidera)\b.{0,30}\b(instrucoes|regras|orientacoes|politicas|restricoes)\b/] },
    { category: "prompt_injection", id: "pt-previous-instructions", all: [/\binstrucoes (anteriores|previas|do sistema|ocultas|internas)\b/] },
    { category: "prompt_injection", id: "pt-role-change", all: [/\b(a partir de agora voce (e|sera|vai ser)|agora voce e|finja (ser|que e)|aja como|sem restricoes)\b/] },
    { category: "prompt_injection", id: "pt-answer-only", all: [/\bresponda (so|apenas|somente) ["'“]?\w+["'”]?/] },
    { category: "prompt_injection", id: "pt-note-to-assistant", all: [/\b(nota|mensagem|instrucao|instrucoes) (para|ao|a) (o )?(assistente|bot|modelo|ia)\b/] },
    { category: "prompt_injection", id: "pt-mode-switch", all: [/\bmodo (desenvolvedor|administrador|admin|suporte tecnico|deus|depuracao)\b/] },
    { category: "other_customer_data", id: "pt-third-party-data", all: [PT_THIRD_PARTY, PT_ACCOUNT_DATA] },
    { category: "bypass_limits_or_verification", id: "pt-without-check", all: [/\bsem (passar (por|pela|pelo) )?(a |o |aquela |aquele |essa |esse |nenhuma |nenhum )?(analise|verificacao|codigo|validacao|selfie|biometria|confirmacao)\b/] },
    { category: "bypass_limits_or_verification", id: "pt-circumvent", all: [/\b(burlar|driblar|pular|contornar|furar|escapar d[ao]s?)\b.{0,30}\b(limite|limites|analise|verificacao|codigo|validacao|biometria)\b/] },
    { category: "bypass_limits_or_verification", id: "pt-someone-elses-id", all: [/\b(documento|rg|cnh|cpf|selfie|rosto|foto) (de|da|do) (outra pessoa|minha mae|meu pai|meu irmao|minha irma|meu amigo|minha amiga|terceiros?)\b/] },
    { category: "bypass_limits_or_verification", id: "pt-someone-elses-name", all: [/\b(no|em) nome (dela|dele|de outra pessoa|da minha|do meu|de terceiros?)\b/] },
    { category: "bypass_limits_or_verification", id: "pt-release-by-chat", all: [/\b(libera|liberar|libere|aprova|aprovar|aumenta|aumentar)\b.{0,20}\b(pelo chat|por fora|na mao)\b/] },
    { category: "bypass_limits_or_verification", id: "pt-structuring", all: [/\bpra (eles|ninguem|o banco) nao (perceber|notar|ver|desconfiar)\b|\bsem (eles|ninguem) (perceber|notar)\b/] },
    { category: "out_of_scope", id: "pt-creative-writing", all: [/\b(escreve|escreva|faz|faca|cria|crie|compoe|componha) (pra mim )?(um |uma )?(poema|poesia|musica|cancao|historia|redacao|piada|carta de amor)\b|\b(poema|poesia)s?\b/] },
    { category: "out_of_scope", id: "pt-legal", all: [/\b(processo judicial|processar (a|o|ele|ela)|advogad[oa]|acao judicial|juizado|codigo civil)\b/] },
    { category: "out_of_scope", id: "pt-investment-advice", all: [/\b(investir|investimentos?|bolsa de valores|bitcoin|criptomoedas?|tesouro direto|fundos? de investimento)\b/] },
  ],
};

/** Lowercase, accent-folded, whitespace collapsed, curly apostrophes straightened: what the patterns see. */
export function normalizeForPolicy(text: string): string {
  return foldAccents(text.normalize("NFKC").toLowerCase()).replace(/[’‘`´]/g, "'").replace(/\s+/g, " ").trim();
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
