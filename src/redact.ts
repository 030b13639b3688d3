/**
 * Credentials never leak (docs/reliability.md): the one place that knows
 * which strings are secret, used by every output path (logs, CLI errors,
 * URLs in reports, error text recorded in reports).
 *
 * Two kinds of redaction, both applied by `redactSecrets`:
 * - **known values**: the value of every credential variable of the
 *   environment (`isCredentialVariable`: a name part containing KEY, TOKEN,
 *   SECRET, PASS, PWD, AUTH, CREDENTIAL or WEBHOOK — values of 8 characters
 *   or more that are not a boolean or a number), of any variable starting
 *   with a known token prefix (`TOKEN_PREFIXES`), the URL userinfo of any
 *   variable, the tokens of the environment variables retrace
 *   reads (CHROMA_API_KEY, CHROMA_AUTH_TOKEN), the password of CHROMA_URL, and
 *   every credential this process itself sent (registered by the Chroma
 *   client: a `--store http://user:pass@host` URL's password, `user:pass`
 *   and its base64 as sent in `Authorization: Basic …`, header token
 *   values), each also in its URL-encoded, URL-decoded and JSON-escaped
 *   forms and its base64, base64url and hex forms (`encodedForms`);
 * - **shapes**: the value of an `Authorization` / `Proxy-Authorization`
 *   header with its scheme (`Basic …`, `Bearer …`, …), of `x-chroma-token`,
 *   `x-api-key` and `api-key` headers — in any case, written as text
 *   (`name: value`), as JSON (`"name":"value"`, also escaped inside a JSON
 *   string) or as `name=value`; a `Basic <base64>` whose base64 decodes to
 *   `user:password`; and the `user:password@` of any URL.
 *
 * Everything redacted becomes `***`.
 */

import { thrownMessage } from "./errors.js";

/** What a redacted value is replaced by. */
export const REDACTED = "***";

/** Values shorter than this are not treated as secrets (they would redact ordinary text). */
const MIN_SECRET_LENGTH = 3;

/** An encoded form (hex, base64) shorter than this is not redacted: a short credential's hex could be part of any hash. */
const MIN_ENCODED_LENGTH = 10;

/** A credential variable's value shorter than this is not treated as a secret (docs/reliability.md). */
export const MIN_ENV_SECRET_LENGTH = 8;

/** What a part of a credential variable's name contains (docs/reliability.md): any of these words, in any case. */
const CREDENTIAL_WORDS: readonly string[] = ["KEY", "TOKEN", "SECRET", "PASS", "PWD", "AUTH", "CREDENTIAL", "WEBHOOK"];
/**
 * A last name part that says the variable names something beside the
 * credential, not the credential itself: `SSH_AUTH_SOCK` (a socket path),
 * `CHROMA_AUTH_TOKEN_TRANSPORT_HEADER` (a header name), `GOOGLE_API_KEY_FILE`.
 */
const NOT_A_CREDENTIAL_LAST_PARTS: ReadonlySet<string> = new Set([
  "SOCK",
  "SOCKET",
  "FILE",
  "PATH",
  "DIR",
  "HEADER",
  "TYPE",
  "MODE",
  "METHOD",
  "HOST",
  "PORT",
  "USER",
  "USERNAME",
]);
/** Whole names that match the rule but hold no credential: the shell's working folders (their value is in every path a report shows). */
const NOT_A_CREDENTIAL_NAMES: ReadonlySet<string> = new Set(["PWD", "OLDPWD"]);

/**
 * Tokens whose value alone says it is a credential, whatever the variable's
 * name (`GH_PAT=github_pat_…`): OpenAI/Anthropic-style `sk-`, GitHub's
 * `ghp_` `gho_` `ghu_` `ghs_` `ghr_` `github_pat_`, Slack's `xox?-`, AWS
 * access key ids `AKIA`/`ASIA`, GitLab's `glpat-`, Hugging Face's `hf_`,
 * npm's `npm_`, PyPI's `pypi-`, Google's `AIza`, Stripe's `sk_live_`
 * `rk_live_` `sk_test_`, SendGrid's `SG.`, LangSmith's `lsv2_`.
 */
export const TOKEN_PREFIXES: readonly string[] = [
  "sk-",
  "ghp_",
  "gho_",
  "ghu_",
  "ghs_",
  "ghr_",
  "github_pat_",
  "xoxb-",
  "xoxp-",
  "xoxa-",
  "xoxr-",
  "xoxs-",
  "xapp-",
  "AKIA",
  "ASIA",
  "glpat-",
  "hf_",
  "npm_",
  "pypi-",
  "AIza",
  "sk_live_",
  "sk_test_",
  "rk_live_",
  "SG.",
  "lsv2_",
];

/** The parts of a variable's name: split at `_`, `-` and case changes (`openaiApiKey` → openai, Api, Key), upper-cased. */
export function nameParts(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1_$2")
    .split(/[_-]+/)
    .filter((p) => p !== "")
    .map((p) => p.toUpperCase());
}

/**
 * Whether the environment variable `name` holds a credential
 * (docs/reliability.md, "Credentials never leak"): its name, split into
 * parts at `_`, `-` and case changes, has a part containing KEY, TOKEN,
 * SECRET, PASS, PWD, AUTH, CREDENTIAL or WEBHOOK (`OPENAI_API_KEY`,
 * `OPENAI_APIKEY`, `DB_PASS`, `SLACK_WEBHOOK_URL`, `openaiApiKey`), unless
 * its last part names a location or a setting beside the credential
 * (`SSH_AUTH_SOCK`, `…_TRANSPORT_HEADER`, `…_KEY_FILE`) or it is the
 * shell's `PWD` / `OLDPWD`.
 */
export function isCredentialVariable(name: string): boolean {
  if (NOT_A_CREDENTIAL_NAMES.has(name)) return false;
  const parts = nameParts(name);
  if (parts.length === 0 || NOT_A_CREDENTIAL_LAST_PARTS.has(parts[parts.length - 1] as string)) return false;
  return parts.some((p) => CREDENTIAL_WORDS.some((w) => p.includes(w)));
}

/** Whether a credential variable's value can be a secret: 8 characters or more, and not a boolean or a number (`true`, `0`, `12345678`). */
function secretLike(value: string): boolean {
  const v = value.trim();
  if (v.length < MIN_ENV_SECRET_LENGTH) return false;
  if (/^(?:true|false|yes|no|on|off)$/i.test(v)) return false;
  return !/^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?$/i.test(v);
}

/** Whether `value` starts with a known token prefix (TOKEN_PREFIXES) and is 8 characters or more. */
export function hasTokenPrefix(value: string): boolean {
  const v = value.trim();
  return v.length >= MIN_ENV_SECRET_LENGTH && TOKEN_PREFIXES.some((p) => v.startsWith(p));
}

/**
 * The secret values of `env`: the value of each credential variable
 * (isCredentialVariable) that can be a secret (8+ characters, no boolean,
 * no number), the value of any variable that starts with a known token
 * prefix (hasTokenPrefix), and the credentials of any variable's URL
 * userinfo (urlCredentials: `DATABASE_URL=postgres://user:pw@host`).
 */
export function credentialValuesOf(env: Record<string, string | undefined>): string[] {
  const out: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if ((isCredentialVariable(name) && secretLike(value)) || hasTokenPrefix(value)) out.push(value);
    if (value.includes("@") && value.includes("://"))
      out.push(...urlCredentials(value).filter((c) => c.length >= MIN_ENV_SECRET_LENGTH));
  }
  return out;
}

/** Request headers whose values are credentials. */
export const SECRET_HEADERS: readonly string[] = [
  "authorization",
  "proxy-authorization",
  "x-chroma-token",
  "x-api-key",
  "api-key",
];

/** `url` with any `user:password@` shown as `***@` (and no trailing slash); unparsable text is returned as `<invalid URL>`. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    const auth = u.username !== "" || u.password !== "" ? "***@" : "";
    return `${u.protocol}//${auth}${u.host}${u.pathname === "/" ? "" : u.pathname}`;
  } catch {
    return "<invalid URL>";
  }
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

const base64 = (s: string) => Buffer.from(s, "utf8").toString("base64").replace(/=+$/, "");

/**
 * The secret strings of a URL's userinfo: the password (as written and
 * URL-decoded), `user:password` in both forms, and the base64 of each pair
 * (what HTTP basic auth sends; without `=` padding, so padded and unpadded
 * forms both match). A URL without a password gives only the base64 of
 * `user:` (basic auth sends that too); no URL, nothing.
 */
export function urlCredentials(url: string | undefined): string[] {
  if (url === undefined || url === "") return [];
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return [];
  }
  if (u.username === "" && u.password === "") return [];
  const pairs = new Set([`${u.username}:${u.password}`, `${safeDecode(u.username)}:${safeDecode(u.password)}`]);
  const out: string[] = [];
  if (u.password !== "") out.push(u.password, safeDecode(u.password), ...pairs);
  for (const p of pairs) out.push(base64(p));
  return out;
}

const registered = new Set<string>();

/**
 * Remember credentials this process sends (a header value, a token): from
 * now on `redactSecrets` removes them from every text. Values shorter than
 * 3 characters are ignored.
 */
export function registerSecret(...values: ReadonlyArray<string | undefined>): void {
  for (const v of values) if (v !== undefined && v.length >= MIN_SECRET_LENGTH) registered.add(v);
}

/** Registers the credentials of `url`'s `user:password@` (see urlCredentials). */
export function registerUrlCredentials(url: string): void {
  registerSecret(...urlCredentials(url));
}

/** Registers the values of the credential headers among `headers` (the part after the scheme, e.g. the base64 of `Basic …`). */
export function registerHeaderSecrets(headers: Readonly<Record<string, string>>): void {
  for (const [name, value] of Object.entries(headers)) {
    if (!SECRET_HEADERS.includes(name.toLowerCase())) continue;
    // `Basic <credentials>`: the credentials (the scheme stays readable); a bare token as it is.
    const m = /^\s*[A-Za-z][\w-]*\s+(\S+)\s*$/.exec(value);
    registerSecret(m?.[1] ?? value);
  }
}

/** Forgets every registered secret (tests). */
export function clearRegisteredSecrets(): void {
  registered.clear();
}

/**
 * The secrets known to this process, longest first: the values of the
 * credential variables of `env` (credentialValuesOf: 8+ characters, no
 * boolean or number), the store's credentials — the token values of
 * CHROMA_API_KEY and CHROMA_AUTH_TOKEN, the credentials of CHROMA_URL
 * (urlCredentials) and every registered secret, which are known to be
 * credentials and so count from 3 characters —; each also URL-encoded and
 * JSON-escaped where that differs.
 */
export function secretsOf(env: Record<string, string | undefined> = process.env): string[] {
  const base = [
    ...credentialValuesOf(env),
    env.CHROMA_API_KEY,
    env.CHROMA_AUTH_TOKEN,
    ...urlCredentials(env.CHROMA_URL),
    ...registered,
  ];
  const key = base.join("\u0000");
  if (cachedSecrets !== undefined && cachedSecrets.key === key) return cachedSecrets.secrets;
  const out = new Set<string>();
  for (const s of base) {
    if (s === undefined || s.length < MIN_SECRET_LENGTH) continue;
    for (const form of [s, encodeURIComponent(s), JSON.stringify(s).slice(1, -1)]) out.add(form);
    for (const form of encodedForms(s)) if (form.length >= MIN_ENCODED_LENGTH) out.add(form);
  }
  const secrets = [...out].sort((a, b) => b.length - a.length || (a < b ? -1 : 1));
  cachedSecrets = { key, secrets };
  return secrets;
}

/** The last secrets computed, by the values they came from (the forms are the costly part). */
let cachedSecrets: { key: string; secrets: string[] } | undefined;

/**
 * A secret's base64, base64url and hex forms (docs/reliability.md): hex in
 * lower and upper case; base64 and base64url at each of the three byte
 * alignments it can have inside a longer encoded text (`Basic
 * base64(user:secret)`, a base64 body), each without the characters it
 * shares with the bytes around it (at most one at either end), so the form
 * matches wherever the secret's bytes were encoded.
 */
export function encodedForms(secret: string): string[] {
  const bytes = Buffer.from(secret, "utf8");
  const forms = [bytes.toString("hex"), bytes.toString("hex").toUpperCase()];
  for (let k = 0; k < 3; k++) {
    const b64 = Buffer.concat([Buffer.alloc(k), bytes])
      .toString("base64")
      .replace(/=+$/, "");
    // Characters 0..⌈8k/6⌉-1 carry the k filler bytes (in part); the last one, when the bytes end mid-group, carries what follows.
    const start = Math.ceil((8 * k) / 6);
    const end = (k + bytes.length) % 3 === 0 ? b64.length : b64.length - 1;
    const core = b64.slice(start, end);
    forms.push(core, core.replace(/\+/g, "-").replace(/\//g, "_"));
  }
  return forms;
}

// The value of a credential header: stops at whitespace, quotes, a backslash (escaped quote) and JSON/list punctuation.
const VALUE = String.raw`[^\s"'\\,;{}\[\]()<>]+`;
// `name`, `"name"`, `'name'` or `\"name\"` (inside a JSON string), then `:`, `=` or `=>`, then an optional opening quote.
const headerPrefix = (names: string) => String.raw`((?<![\w-])(?:${names})(?:\\?["'])?\s*(?:=>|[:=])\s*(?:\\?["'])?)`;
const AUTH_SCHEMES = "basic|bearer|token|digest|negotiate|ntlm|apikey|aws4-hmac-sha256";
/** `Authorization: <scheme> <credentials>`: the credentials are redacted, the scheme kept. */
const AUTHORIZATION_HEADER = new RegExp(
  `${headerPrefix("proxy-authorization|authorization")}(${AUTH_SCHEMES})(\\s+)${VALUE}`,
  "gi",
);
/** An `Authorization:` value without a scheme: redacted when it looks like a token (8+ characters with a digit or punctuation), not prose. */
const BARE_AUTHORIZATION = new RegExp(
  `${headerPrefix("proxy-authorization|authorization")}(?!(?:${AUTH_SCHEMES})\\s)(?=[^\\s"'\\\\,;{}\\[\\]()<>]*[0-9._~+/=-])[^\\s"'\\\\,;{}\\[\\]()<>]{8,}`,
  "gi",
);
/** `x-chroma-token: <token>` and the other token headers: any value. */
const TOKEN_HEADER = new RegExp(`${headerPrefix("x-chroma-token|x-api-key|api-key")}${VALUE}`, "gi");
/** `Basic <base64>` anywhere: redacted when the base64 decodes to `user:password`. */
const BASIC = /(?<![\w-])(basic\s+)([A-Za-z0-9+/]{4,}={0,2})(?![\w+/=])/gi;
/** `Bearer <token>` anywhere: a token of at least 8 characters with a digit or punctuation (not a word of prose). */
const BEARER = /(?<![\w-])(bearer\s+)((?=[A-Za-z0-9._~+/-]*[0-9._~+/-])[A-Za-z0-9._~+/-]{8,}=*)/gi;
/** The `user:password@` of a URL (`scheme://…@`). */
const URL_USERINFO = /(\b[a-z][a-z0-9+.-]*:\/\/)[^\s/?#@"'<>\\]+@/gi;

function decodesToCredentials(b64: string): boolean {
  const text = Buffer.from(b64, "base64").toString("utf8");
  return text.includes(":") && !/[\u0000-\u001f\u007f\ufffd]/.test(text);
}

/**
 * `text` with every secret replaced by `***`: the known values of
 * `secretsOf(env)` (environment, CHROMA_URL, registered credentials), then
 * the credential shapes (authorization and token headers in text or JSON,
 * `Basic <base64 of user:password>`, `Bearer <token>`, URL userinfo).
 */
export function redactSecrets(text: string, env: Record<string, string | undefined> = process.env): string {
  return redactKnown(text, secretsOf(env));
}

/**
 * `redactSecrets` with the secrets of `env` looked up once, for redacting
 * many texts (every error of a large run, a report written piece by piece):
 * the same result for each text as `redactSecrets(text, env)`, as long as
 * no secret is registered or changed in between.
 */
export function secretRedactor(env: Record<string, string | undefined> = process.env): (text: string) => string {
  const secrets = secretsOf(env);
  return (text) => redactKnown(text, secrets);
}

function redactKnown(text: string, secrets: readonly string[]): string {
  // A value that is not a string (an error's `message: 42` from a user's graph): its text, redacted (docs/reliability.md).
  let t = typeof text === "string" ? text : thrownMessage(text);
  for (const s of secrets) if (t.includes(s)) t = t.split(s).join(REDACTED);
  // Each pattern only where the word it cannot match without is in the text (one scan for all of them first): a report of 500 MB mostly has none of them.
  if (!MAY_ANY.test(t)) return t;
  if (MAY_AUTHORIZE.test(t))
    t = t
      .replace(
        AUTHORIZATION_HEADER,
        (_m, prefix: string, scheme: string, space: string) => `${prefix}${scheme}${space}${REDACTED}`,
      )
      .replace(BARE_AUTHORIZATION, (_m, prefix: string) => `${prefix}${REDACTED}`);
  if (MAY_TOKEN.test(t)) t = t.replace(TOKEN_HEADER, (_m, prefix: string) => `${prefix}${REDACTED}`);
  if (MAY_BASIC.test(t))
    t = t.replace(BASIC, (m, prefix: string, b64: string) => (decodesToCredentials(b64) ? `${prefix}${REDACTED}` : m));
  if (MAY_BEARER.test(t)) t = t.replace(BEARER, (_m, prefix: string) => `${prefix}${REDACTED}`);
  if (t.includes("://")) t = t.replace(URL_USERINFO, `$1${REDACTED}@`);
  return t;
}

/** Words without which the patterns below cannot match (case-insensitive, as they are). */
const MAY_AUTHORIZE = /authorization/i;
const MAY_TOKEN = /token|api-key/i;
const MAY_BASIC = /basic/i;
const MAY_BEARER = /bearer/i;
/** Any of those words, or the `://` of a URL. */
const MAY_ANY = /authorization|token|api-key|basic|bearer|:\/\//i;

/**
 * `redactSecrets` over text given in pieces (a large report written piece by
 * piece, src/eval/report/render/json.ts `reportJSONPieces`): the
 * concatenated result is exactly `redactSecrets(pieces.join(""))`, without
 * the whole text in memory, provided every piece but the first starts with
 * `,` followed by a line break — the caller's promise.
 *
 * Why no secret can be missed at a cut: a match that spans a cut contains
 * the character right after it, that comma.
 * - A known value with a comma could, so when any secret of `secretsOf(env)`
 *   contains `,` the pieces are joined and redacted whole.
 * - No shape can: the header names, schemes, base64 and token characters
 *   and `VALUE` exclude `,`; the URL userinfo class admits `,` but not the
 *   line break after it, and a userinfo match must go on to its `@`.
 *   Lookarounds at a cut see the same: no shape starts at a `,`, and a
 *   lookahead at a piece's end (`(?![\w+/=])`, the token classes) is as
 *   satisfied by the end of the piece as by the comma.
 * - A replacement (`***`, a kept prefix) neither adds nor removes a comma,
 *   so each later step sees the cuts before the same commas.
 */
export function* redactSecretPieces(
  pieces: Iterable<string>,
  env: Record<string, string | undefined> = process.env,
): Generator<string> {
  const secrets = secretsOf(env);
  if (secrets.some((s) => s.includes(","))) {
    let whole = "";
    for (const p of pieces) whole += p;
    yield redactKnown(whole, secrets);
    return;
  }
  for (const p of pieces) yield redactKnown(p, secrets);
}
