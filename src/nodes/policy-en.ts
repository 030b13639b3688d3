/**
 * The answerer's policy rules in English (src/nodes/policy.ts). Patterns are data, over normalised text.
 */
import { structuralInjection, type PolicyRule } from "./policy-shapes.js";

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

/** The en policy rules (src/nodes/policy.ts `POLICY_RULES`). */
export const EN_RULES: readonly PolicyRule[] = [
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
];
