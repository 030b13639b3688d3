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
/** A third person's account, card or app: "my husband's account", "her card", "my mom's Pavo". */
const EN_THIRD_PARTY_ACCOUNT =
  /\b((his|her|their)|my (ex|ex-?husband|ex-?wife|ex-?partner|husband|wife|partner|spouse|boyfriend|girlfriend|fiance|fiancee|dad|father|mom|mother|brother|sister|son|daughter|friend|neighbou?r|roommate|boss|coworker|landlord|tenant|cousin|uncle|aunt|grandma|grandpa|grandmother|grandfather|employee|client)'?s) (pavo |joint |checking |savings )?(account|card|app|transactions?|statements?|activity|spending|login|profile)\b/;
/** Looking into it: seeing, checking, telling, logging in, what was spent. */
const EN_LOOKUP =
  /\b(see|check|look (up|at|into|through)|tell me|show me|pull up|access|log ?in(to)?|sign in(to)?|get into|read (me|out)|what'?s (in|on)|how much|spent|bought|received|transactions|statements?|history|activity|who (he|she|they) (paid|sent)|where (he|she|they) (spent|used))\b/;
const ES_THIRD_PARTY =
  /\b(su (cuenta|tarjeta|saldo|clabe|numero|telefono|celular|direccion|nombre|correo)|de (el|ella|ellos|ellas)|(de|a|con) (mi|su|un|una) (ex|exesposo|exesposa|ex esposo|ex esposa|esposo|esposa|pareja|novio|novia|papa|mama|padre|madre|hermano|hermana|hijo|hija|amigo|amiga|vecino|vecina|jefe|jefa|primo|prima|tio|tia|abuelo|abuela|casero|casera|suegro|suegra)|otra persona|otro cliente|otros clientes|alguien mas|esa persona|ese senor|esa senora)\b/;
const ES_ACCOUNT_DATA =
  /\b(saldo|cuanto (dinero )?tiene|numero de (tarjeta|cuenta|celular|telefono)|nombre (completo|real)|telefono|direccion|domicilio|correo|curp|rfc|fecha de nacimiento|nip|cvv|movimientos)\b/;
/** A third person's account or card: "la cuenta de mi esposo", "su tarjeta". */
const ES_THIRD_PARTY_ACCOUNT =
  /\b((cuenta|tarjeta|app|aplicacion|movimientos|estado de cuenta|saldo|usuario) (pavo )?de (mi |su |un |una )?(ex|exesposo|exesposa|esposo|esposa|marido|mujer|pareja|novio|novia|papa|mama|padre|madre|hermano|hermana|hijo|hija|amigo|amiga|vecino|vecina|jefe|jefa|primo|prima|tio|tia|abuelo|abuela|suegro|suegra|empleado|empleada|cliente|el|ella)|su (cuenta|tarjeta|app|estado de cuenta))\b/;
/** Looking into it. */
const ES_LOOKUP =
  /\b(ver|revisar|consultar|checar|decir(me)?|dime|mostrar(me)?|muestrame|entrar|acceder|meterme|cuanto|que (compro|gasto|pago)|en que (gasta|gasto)|movimientos|estado de cuenta|a quien (le )?(manda|mando|transfiere|transfirio))\b/;
const PT_THIRD_PARTY =
  /\b(dele|dela|deles|delas|(de|da|do) (outra pessoa|outro cliente|terceiros?)|(minha|meu) (ex|ex-mulher|ex-marido|ex-namorada|ex-namorado|mulher|marido|esposa|esposo|mae|pai|irma|irmao|filha|filho|namorada|namorado|amiga|amigo|vizinha|vizinho|chefe|prima|primo|tia|tio|avo|sobrinha|sobrinho|sogra|sogro)|uma? tal de|essa pessoa|esse cara|ela tem|ele tem)\b/;
const PT_ACCOUNT_DATA =
  /\b(saldo|quanto (dinheiro )?(ela|ele|eles|elas) (tem|tém)|cpf|rg|telefone|endereco|e-?mail|numero do cartao|nome completo|data de nascimento|extrato|senha)\b/;

/**
 * Injection shapes that do not depend on the language (see docs/holdout.md,
 * "What was changed"): fake role or system turns, chat-template tokens,
 * JSON/YAML keys that carry instructions, markdown "system" headings and
 * encoded payloads. Every locale's rules start with these.
 */
const STRUCTURAL_INJECTION: readonly PolicyRule[] = [
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
function structuralInjection(prefix: string): PolicyRule[] {
  return STRUCTURAL_INJECTION.map((r) => ({ ...r, id: `${prefix}-${r.id}` }));
}

/** A third person's account or card: "a conta do meu marido", "o cartão dela". */
const PT_THIRD_PARTY_ACCOUNT =
  /\b((conta|cartao|app|aplicativo|extrato|saldo|fatura|pix) (da pavo )?(dele|dela|deles|delas|(do|da) (meu |minha )?(ex|ex-mulher|ex-marido|marido|mulher|esposa|esposo|namorad[oa]|mae|pai|irma|irmao|filha|filho|amig[oa]|vizinh[oa]|chefe|prim[oa]|tia|tio|avo|sogr[oa]|funcionari[oa]|cliente)))\b/;
/** Looking into it. */
const PT_LOOKUP =
  /\b(ver|olhar|consultar|checar|conferir|me (diz|diga|fala|fale|mostra|mostre|passa|passe)|mostrar|entrar|acessar|quanto|o que (ele|ela) (comprou|gastou|pagou)|com o que (ele|ela) gast|extrato|movimentacao|movimentacoes|pra quem (ele|ela) (mandou|manda|transferiu))\b/;

/** The policy rules, per locale. */
export const POLICY_RULES: Readonly<Record<Locale, readonly PolicyRule[]>> = {
  en: [
    ...structuralInjection("en"),
    {
      category: "prompt_injection",
      id: "en-ignore-instructions",
      all: [
        /\b(ignore|disregard|forget|override)\b.{0,40}\b(instructions?|rules|prompts?|guidelines|polic(y|ies)|restrictions|table|everything (above|before)|the above|previous (messages?|context)|what you were told)\b/,
      ],
    },
    {
      category: "prompt_injection",
      id: "en-new-instructions",
      all: [/\bnew (instructions?|rules?|directives?|orders?)\b/],
    },
    {
      category: "prompt_injection",
      id: "en-note-to-assistant",
      all: [/\b(note|message|instructions?) (from|to) (the |your )?.{0,40}\b(assistant|ai|bot|model|chatbot)\b/],
    },
    {
      category: "prompt_injection",
      id: "en-mode-switch",
      all: [
        /\b(system override|developer mode|dev mode|admin mode|god mode|debug mode|jailbreak|dan mode|unrestricted mode)\b/,
      ],
    },
    {
      category: "prompt_injection",
      id: "en-reveal-prompt",
      all: [/\b(hidden|system|internal|secret|original) (instructions|prompt|notes|rules|configuration)\b/],
    },
    {
      category: "prompt_injection",
      id: "en-role-change",
      all: [/\b(you are now|from now on,? you|pretend (to be|you are)|act as (an?|my) |roleplay as)\b/],
    },
    {
      category: "prompt_injection",
      id: "en-role-play",
      all: [
        /\b(let'?s play a game|let'?s (role ?play|pretend)|role ?play|imagine (that )?you (are|were)|stay in character|in character as|you'?re (now )?(a|an|my) (pavo )?(employee|manager|admin|agent|banker|supervisor|engineer|developer))\b/,
      ],
    },
    {
      category: "prompt_injection",
      id: "en-authority-claim",
      all: [
        /\b((i'?m|i am|this is) (a |an |the )?(pavo |senior )?(employee|staff member|admin|administrator|engineer|developer|supervisor|auditor|compliance officer)\b.{0,80}\b(authori[sz]e|approve|override|unlock|grant|enable|disable|lift|raise)|authori[sz]ed by (the )?(pavo|admin|administrator|management|support|security|compliance))/,
      ],
    },
    {
      category: "prompt_injection",
      id: "en-forced-reply",
      all: [
        /\b(reply|respond|answer) (only|just) with\b|\b(say|type|print|output) (only|just|exactly) ["'“]|\bconfirm in writing\b/,
      ],
    },
    { category: "other_customer_data", id: "en-third-party-data", all: [EN_THIRD_PARTY, EN_ACCOUNT_DATA] },
    { category: "other_customer_data", id: "en-third-party-account", all: [EN_THIRD_PARTY_ACCOUNT, EN_LOOKUP] },
    {
      category: "other_customer_data",
      id: "en-other-customer",
      all: [
        /\b(another|other|a different) (customer|user|member|account ?holder)'?s?\b.{0,40}\b(account|balance|details|info|information|data)\b/,
      ],
    },
    {
      category: "bypass_limits_or_verification",
      id: "en-circumvent",
      all: [
        /\b(back ?door|loophole|workaround|work around|get around|get past|gets? (me|us) past|getting past|bypass|circumvent|sneak (past|around)|trick (the|your) (system|check|app))\b/,
      ],
    },
    {
      category: "bypass_limits_or_verification",
      id: "en-skip-check",
      all: [
        /\b(skip|avoid|dodge|evade|beat|cheat)\b.{0,25}\b(verification|verify|verifying|id check|identity check|the code|security check|review|limits?|kyc|fraud checks?)\b/,
      ],
    },
    {
      category: "bypass_limits_or_verification",
      id: "en-without-check",
      all: [
        /\bwithout (the |a |my |any |entering (the |a )?)?(code|verification|verifying|id check|identity check|security check|2fa|two-factor|review|selfie)\b/,
      ],
    },
    {
      category: "bypass_limits_or_verification",
      id: "en-someone-elses-id",
      all: [
        /\b((my|his|her|their|a) )?(brother|sister|friend|mom|mother|dad|father|wife|husband|cousin|roommate|son|daughter|partner|someone else|somebody else)'?s (id|ids|license|licence|passport|documents?|selfie|face|ssn|social( security)?( number)?|identity)\b/,
      ],
    },
    {
      category: "bypass_limits_or_verification",
      id: "en-someone-elses-name",
      all: [
        /\b(in|under) (his|her|their|someone else'?s|somebody else'?s|my (mom|mother|dad|father|brother|sister|friend|wife|husband)'?s) name\b/,
      ],
    },
    {
      category: "bypass_limits_or_verification",
      id: "en-structuring",
      all: [
        /\bso (you|they|it|the app|the bank) (don'?t|won'?t|doesn'?t|wouldn'?t) (notice|flag|catch|see|report|detect)\b/,
      ],
    },
    {
      category: "bypass_limits_or_verification",
      id: "en-act-on-your-end",
      all: [
        /\b(waive|lift|remove|disable|turn off|switch off|suspend|override|raise|bump|increase|unlock|approve|verify|skip|clear|release)\b.{0,40}\b(on your end|on your side|from your end|from your side|manually|yourself|by hand|from (the|this) chat|through (the|this) chat|in (the|this) chat|behind the scenes|off the record|quietly)\b/,
      ],
    },
    {
      category: "bypass_limits_or_verification",
      id: "en-exception",
      all: [
        /\b(make|grant|give me|do me) (an? )?(one[- ]time |small |quick |little )?exception\b|\bexempt (me|my account)\b|\bwhitelist (me|my account)\b|\bbend the rules?\b/,
      ],
    },
    {
      category: "bypass_limits_or_verification",
      id: "en-under-radar",
      all: [
        /\b(under|below) the (radar|reporting|threshold)\b|\b(split|break|spread) (it|them|the (money|amount|cash|deposits?|transfers?)) (up )?(into|in|across) (smaller|several|multiple|a few)\b.{0,60}\b(limit|notice|flag|report|detect|radar)\b/,
      ],
    },
    {
      category: "out_of_scope",
      id: "en-creative-writing",
      all: [
        /\b(write|compose|make|give|tell|draft) (me )?(an? |some )?(funny |short |romantic |little |quick |nice )?(poem|song|story|essay|joke|rap|haiku|limerick|lyrics|love letter|novel|cover letter|resume|speech|tweet|toast)s?\b|\b(poem|haiku|limerick)s?\b/,
      ],
    },
    {
      category: "out_of_scope",
      id: "en-investment-advice",
      all: [
        /\b(index funds?|stocks?|etfs?|crypto(currenc(y|ies))?|bitcoin|mutual funds?|invest(ing|ment)? (advice|in|my)|should i invest|401\(?k\)?|roth ira)\b/,
      ],
    },
    {
      category: "out_of_scope",
      id: "en-legal",
      all: [
        /\b(lawsuit|sue (them|the|him|her|my)|legal advice|lawyer|attorney|court case|draft (a|the|my) (contract|complaint|will))\b/,
      ],
    },
    {
      category: "out_of_scope",
      id: "en-tax-advice",
      all: [/\b(tax advice|file my taxes|do my taxes|tax return|tax bracket|deduct\w*|write (it|this) off)\b/],
    },
    {
      category: "out_of_scope",
      id: "en-financial-advice",
      all: [
        /\b(should i (invest|buy|sell|refinance|take out|get a mortgage|consolidate)|(which|what) (bank|credit card|loan|mortgage|broker)\b.{0,30}\b(should i|best|recommend)|(better|worse) than (chase|chime|wells fargo|cash app|venmo|paypal|revolut|bank of america|capital one|other banks?)|(exchange rate|the dollar|the peso|the euro|stocks?|the market) (going to|gonna|will) (go|drop|rise|fall|crash|go up|go down))\b/,
      ],
    },
  ],
  "es-419": [
    ...structuralInjection("es"),
    {
      category: "prompt_injection",
      id: "es-ignore-instructions",
      all: [
        /\b(olvida|ignora|olvidate de|omite|borra|descarta)\b.{0,30}\b(instrucciones|reglas|indicaciones|politicas|restricciones|lo anterior|todo lo de arriba|lo que te dijeron)\b/,
      ],
    },
    {
      category: "prompt_injection",
      id: "es-previous-instructions",
      all: [/\binstrucciones (anteriores|previas|del sistema|ocultas|internas)\b/],
    },
    {
      category: "prompt_injection",
      id: "es-role-change",
      all: [
        /\b(ahora eres|a partir de ahora (eres|vas a ser|seras)|eres un (asesor|agente|administrador|empleado) (interno|sin restricciones)|sin restricciones|finge (ser|que eres)|actua como)\b/,
      ],
    },
    {
      category: "prompt_injection",
      id: "es-note-to-assistant",
      all: [/\b(nota|mensaje|instruccion(es)?) (para|al|a la) (el )?(asistente|bot|modelo|ia)\b/],
    },
    {
      category: "prompt_injection",
      id: "es-mode-switch",
      all: [
        /\bmodo (desarrollador|soporte tecnico|administrador|admin|dios|depuracion|sin restricciones)\b|\bactivado por (el )?administrador\b/,
      ],
    },
    {
      category: "prompt_injection",
      id: "es-role-play",
      all: [
        /\b(juguemos a|vamos a jugar|imagina que (eres|tu eres|fueras)|haz de cuenta que|hagamos de cuenta|interpreta (el papel|a un)|en tu papel de|hazte pasar por|eres mi (asesor|gerente|ejecutivo))\b/,
      ],
    },
    {
      category: "prompt_injection",
      id: "es-authority-claim",
      all: [
        /\b((soy|habla) (el |la |un |una )?(empleado|empleada|administrador|administradora|gerente|supervisor|supervisora|ingeniero|ingeniera|auditor|auditora) (de|del) (pavo|soporte|sistema|banco|area)|autorizad[oa] por (el |la )?(administrador|gerente|soporte|pavo|seguridad|direccion))\b/,
      ],
    },
    {
      category: "prompt_injection",
      id: "es-forced-reply",
      all: [
        /\b(responde|contesta|di|escribe) (solo|solamente|unicamente|nada mas) (con |la palabra )?["'“]|\bconfirmamelo por escrito\b|\bconfirma por escrito\b/,
      ],
    },
    { category: "other_customer_data", id: "es-third-party-data", all: [ES_THIRD_PARTY, ES_ACCOUNT_DATA] },
    { category: "other_customer_data", id: "es-third-party-account", all: [ES_THIRD_PARTY_ACCOUNT, ES_LOOKUP] },
    {
      category: "bypass_limits_or_verification",
      id: "es-without-check",
      all: [
        /\bsin (el |la |los |las |pasar por (el |la )?|hacer (el |la )?|mi )?(codigo|verificacion|verificar|revision|analisis|validacion|selfie|ine|identificacion)\b/,
      ],
    },
    {
      category: "bypass_limits_or_verification",
      id: "es-circumvent",
      all: [
        /\b(saltar(me|se)?|brincar(me|se)?|evitar|burlar|esquivar|rodear|evadir|darle la vuelta)\b.{0,30}\b(limite|limites|verificacion|codigo|revision|validacion|reporte|analisis)\b/,
      ],
    },
    {
      category: "bypass_limits_or_verification",
      id: "es-someone-elses-id",
      all: [
        /\b(ine|credencial|identificacion|pasaporte|documentos?|selfie|cara|rostro|curp) de (mi |su |un |una )?(hermano|hermana|amigo|amiga|mama|papa|madre|padre|esposo|esposa|primo|prima|hijo|hija|novio|novia|otra persona|alguien mas)\b/,
      ],
    },
    {
      category: "bypass_limits_or_verification",
      id: "es-someone-else-selfie",
      all: [
        /\bque (el|ella|otra persona|alguien mas) (grabe|tome|haga|se tome|saque|ponga) (la |su )?(selfie|cara|video)\b/,
      ],
    },
    {
      category: "bypass_limits_or_verification",
      id: "es-someone-elses-name",
      all: [/\ba nombre de (mi |su |otra persona|alguien)/],
    },
    {
      category: "bypass_limits_or_verification",
      id: "es-structuring",
      all: [/\b(no se (dan|den|van a dar) cuenta|para que no (lo |se )?(noten|detecten|reporten|den cuenta))\b/],
    },
    {
      category: "bypass_limits_or_verification",
      id: "es-act-on-your-end",
      all: [
        /\b(quitar(me)?|quitame|subir(me)?|subeme|levantar(me)?|desactivar|desactiva(me)?|aprobar(me)?|apruebame|autorizar(me)?|autorizame|desbloquear(me)?|desbloqueame|liberar(me)?|liberame|validar(me)?|validame|saltar(me)?)\b.{0,40}\b(desde (ahi|alla|tu lado|el chat|aqui)|por (el|este) chat|manualmente|a mano|tu mismo|tu misma|por debajo del agua|sin que nadie)\b/,
      ],
    },
    {
      category: "bypass_limits_or_verification",
      id: "es-exception",
      all: [
        /\b(hacer(me)?|hazme|haga(me)?) (una |un )?(excepcion|favorcito|paro)\b.{0,60}\b(limite|verificacion|revision|codigo|selfie|ine|validacion)|\b(limite|verificacion|revision|codigo|validacion)\b.{0,60}\b(excepcion|por esta vez|solo esta vez|nomas esta vez)\b.{0,40}\b(quita|quitar|salta|saltar|omite|omitir|brinca|brincar|desactiva|desactivar)/,
      ],
    },
    {
      category: "bypass_limits_or_verification",
      id: "es-split-to-avoid",
      all: [
        /\b(part|divid|repart|fraccion|separ)\w*\b.{0,60}\b(para (que )?no (llegar|pasar|rebasar|superar)|sin (llegar|pasar|rebasar|superar)|por debajo del|que no (se note|lo detecten|brinque))\b/,
      ],
    },
    {
      category: "out_of_scope",
      id: "es-creative-or-legal-writing",
      all: [
        /\b(redacta(me)?|escribe(me)?|hazme|componme|haz(me)?) (una |un |el |la )?(demanda|poema|cancion|cuento|ensayo|carta de amor|chiste|tarea|contrato|curriculum|cv|discurso|carta de presentacion)\b|\bpoemas?\b/,
      ],
    },
    {
      category: "out_of_scope",
      id: "es-legal",
      all: [/\b(demanda|juicio|abogad[oa]|codigo civil|codigo penal|articulos? del codigo|asesoria legal)\b/],
    },
    {
      category: "out_of_scope",
      id: "es-investment-advice",
      all: [/\b(invertir|inversiones|fondos? de inversion|acciones de|cetes|criptomonedas?|bitcoin|afore)\b/],
    },
    {
      category: "out_of_scope",
      id: "es-tax-advice",
      all: [
        /\b(declaracion anual|declarar (mis )?impuestos|asesoria fiscal|deducir|deducible|cuanto (de )?impuesto|isr que|pagar menos impuestos)\b/,
      ],
    },
    {
      category: "out_of_scope",
      id: "es-financial-advice",
      all: [
        /\b(me conviene (mas )?(invertir|comprar|sacar un credito|una hipoteca|pedir un prestamo|ahorrar en)|que (banco|tarjeta|credito|hipoteca|afore)( de credito| de debito)? me (conviene|recomiendas)|me recomiendas (un|una|algun|alguna) (banco|tarjeta|credito|inversion|hipoteca)|(mejor|peor) que (bbva|banorte|santander|nu|mercado pago|banamex|hsbc|otros bancos)|(el dolar|el tipo de cambio|el peso|las acciones) (va|van) a (subir|bajar))\b/,
      ],
    },
  ],
  "pt-BR": [
    ...structuralInjection("pt"),
    {
      category: "prompt_injection",
      id: "pt-ignore-instructions",
      all: [
        /\b(ignore|ignora|esqueca|esquece|desconsidere|desconsidera|descarte)\b.{0,30}\b(instrucoes|regras|orientacoes|politicas|restricoes|tudo acima|tudo o que (te )?disseram|o que foi dito)\b/,
      ],
    },
    {
      category: "prompt_injection",
      id: "pt-previous-instructions",
      all: [/\binstrucoes (anteriores|previas|do sistema|ocultas|internas)\b/],
    },
    {
      category: "prompt_injection",
      id: "pt-role-change",
      all: [/\b(a partir de agora voce (e|sera|vai ser)|agora voce e|finja (ser|que e)|aja como|sem restricoes)\b/],
    },
    { category: "prompt_injection", id: "pt-answer-only", all: [/\bresponda (so|apenas|somente) ["'“]?\w+["'”]?/] },
    {
      category: "prompt_injection",
      id: "pt-note-to-assistant",
      all: [/\b(nota|mensagem|instrucao|instrucoes) (para|ao|a) (o )?(assistente|bot|modelo|ia)\b/],
    },
    {
      category: "prompt_injection",
      id: "pt-mode-switch",
      all: [/\bmodo (desenvolvedor|administrador|admin|suporte tecnico|deus|depuracao)\b/],
    },
    {
      category: "prompt_injection",
      id: "pt-role-play",
      all: [
        /\b(vamos (brincar|jogar|fingir)|imagin[ae] que voce (e|fosse|seja)|faz de conta|finge que (e|voce e)|interprete (o papel|um)|no papel de|se passe por|voce agora e)\b/,
      ],
    },
    {
      category: "prompt_injection",
      id: "pt-authority-claim",
      all: [
        /\b((sou|aqui e|quem fala e) (o |a |um |uma )?(funcionari[oa]|administrador[a]?|gerente|supervisor[a]?|engenheir[oa]|auditor[a]?) (da|do) (pavo|suporte|sistema|banco)|autorizad[oa] pel[oa] (administrador|gerente|suporte|pavo|seguranca|diretoria))\b/,
      ],
    },
    {
      category: "prompt_injection",
      id: "pt-forced-reply",
      all: [
        /\b(responda|responde|diga|escreva) (so|apenas|somente) (com |a palavra )?["'“]|\bconfirme por escrito\b|\bconfirma por escrito\b/,
      ],
    },
    { category: "other_customer_data", id: "pt-third-party-data", all: [PT_THIRD_PARTY, PT_ACCOUNT_DATA] },
    { category: "other_customer_data", id: "pt-third-party-account", all: [PT_THIRD_PARTY_ACCOUNT, PT_LOOKUP] },
    {
      category: "bypass_limits_or_verification",
      id: "pt-without-check",
      all: [
        /\bsem (passar (por|pela|pelo) )?(a |o |aquela |aquele |essa |esse |nenhuma |nenhum )?(analise|verificacao|codigo|validacao|selfie|biometria|confirmacao)\b/,
      ],
    },
    {
      category: "bypass_limits_or_verification",
      id: "pt-circumvent",
      all: [
        /\b(burlar|driblar|pular|contornar|furar|escapar d[ao]s?)\b.{0,30}\b(limite|limites|analise|verificacao|codigo|validacao|biometria)\b/,
      ],
    },
    {
      category: "bypass_limits_or_verification",
      id: "pt-someone-elses-id",
      all: [
        /\b(documento|rg|cnh|cpf|selfie|rosto|foto) (de|da|do) (outra pessoa|minha mae|meu pai|meu irmao|minha irma|meu amigo|minha amiga|terceiros?)\b/,
      ],
    },
    {
      category: "bypass_limits_or_verification",
      id: "pt-someone-elses-name",
      all: [/\b(no|em) nome (dela|dele|de outra pessoa|da minha|do meu|de terceiros?)\b/],
    },
    {
      category: "bypass_limits_or_verification",
      id: "pt-release-by-chat",
      all: [/\b(libera|liberar|libere|aprova|aprovar|aumenta|aumentar)\b.{0,20}\b(pelo chat|por fora|na mao)\b/],
    },
    {
      category: "bypass_limits_or_verification",
      id: "pt-structuring",
      all: [
        /\bpra (eles|ninguem|o banco) nao (perceber|notar|ver|desconfiar)\b|\bsem (eles|ninguem) (perceber|notar)\b/,
      ],
    },
    {
      category: "bypass_limits_or_verification",
      id: "pt-act-on-your-end",
      all: [
        /\b(tirar|tira|remover|remove|desativar|desativa|aprovar|aprova|autorizar|autoriza|desbloquear|desbloqueia|validar|valida|subir|sobe|aumentar|aumenta|liberar|libera)\b.{0,40}\b(dai|do seu lado|por ai|manualmente|na mao|voce mesm[oa]|por baixo dos panos|sem ninguem saber)\b/,
      ],
    },
    {
      category: "bypass_limits_or_verification",
      id: "pt-exception",
      all: [
        /\b(abrir|abre|fazer|faz|faca) (uma )?excecao\b|\bexcecao\b.{0,60}\b(limite|analise|verificacao|codigo|selfie|biometria)|\b(limite|analise|verificacao|codigo|selfie|biometria)\b.{0,60}\bexcecao\b/,
      ],
    },
    {
      category: "bypass_limits_or_verification",
      id: "pt-split-to-avoid",
      all: [
        /\b(dividir|divido|quebrar|quebro|fracionar|fraciono|picar|pico|separar)\b.{0,60}\b(pra nao (passar|estourar|bater|chegar)|sem (passar|estourar|bater) (o|no) limite|abaixo do limite|pra nao (chamar atencao|cair na analise))\b/,
      ],
    },
    {
      category: "out_of_scope",
      id: "pt-creative-writing",
      all: [
        /\b(escreve|escreva|faz|faca|cria|crie|compoe|componha|redige|redija) (pra mim )?(um |uma )?(poema|poesia|musica|cancao|historia|redacao|piada|carta de amor|curriculo|discurso|trabalho da faculdade)\b|\b(poema|poesia)s?\b/,
      ],
    },
    {
      category: "out_of_scope",
      id: "pt-legal",
      all: [/\b(processo judicial|processar (a|o|ele|ela)|advogad[oa]|acao judicial|juizado|codigo civil)\b/],
    },
    {
      category: "out_of_scope",
      id: "pt-investment-advice",
      all: [
        /\b(investir|investimentos?|bolsa de valores|bitcoin|criptomoedas?|tesouro direto|fundos? de investimento)\b/,
      ],
    },
    {
      category: "out_of_scope",
      id: "pt-tax-advice",
      all: [
        /\b(como (eu )?declar[oa]|declarar (no|o) imposto|declaracao do (ir|imposto)|irpf|deduzir|dedutivel|pagar menos imposto)\b/,
      ],
    },
    {
      category: "out_of_scope",
      id: "pt-financial-advice",
      all: [
        /\b(vale a pena (investir|financiar|pegar (um )?emprestimo|fazer (um )?consorcio|comprar)|qual (banco|cartao|investimento|financiamento) (e melhor|voce (me )?recomenda|vale mais)|me recomenda (um|uma|algum|alguma) (banco|cartao|investimento|financiamento)|(melhor|pior) que (o )?(nubank|itau|bradesco|inter|c6|santander|banco do brasil|caixa|picpay|mercado pago|outros bancos)|consorcio|(o dolar|a cotacao|as acoes) (vai|vao) (subir|cair))\b/,
      ],
    },
  ],
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
