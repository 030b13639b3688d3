/**
 * Nothing secret, in any encoding (docs/reliability.md, "Credentials never
 * leak"): known values (environment, CHROMA_URL, credentials this process
 * sent) in every form, and the shapes of credentials (authorization and
 * token headers as text or JSON, Basic base64, Bearer tokens, URL userinfo).
 */
import { afterEach, describe, expect, it } from "vitest";
import { gunzipSync } from "node:zlib";
import { embedData } from "../src/eval/report/html/page.js";
import {
  clearRegisteredSecrets,
  credentialValuesOf,
  isCredentialVariable,
  redactSecrets,
  redactUrl,
  registerHeaderSecrets,
  secretRedactor,
  registerUrlCredentials,
  secretsOf,
  urlCredentials,
} from "../src/redact.js";

const b64 = (s: string) => Buffer.from(s).toString("base64");
afterEach(() => clearRegisteredSecrets());

describe("known secrets", () => {
  it("CHROMA_URL's password, user:password and its base64 (padded or not), raw and URL-decoded", () => {
    const env = { CHROMA_URL: "http://us%40er:p%40ss123@h:8000" };
    const text = [
      `pw p%40ss123 and p@ss123`,
      `pair us@er:p@ss123`,
      `basic ${b64("us@er:p@ss123")}`,
      `raw-pair ${b64("us%40er:p%40ss123")}`,
    ].join(" | ");
    const out = redactSecrets(text, env);
    expect(out).not.toMatch(/ss123|cjpw|OnBAc3MxMjM|czEyMw/);
    expect(out).toContain("***");
  });

  it("token values of CHROMA_API_KEY and CHROMA_AUTH_TOKEN, also URL-encoded and JSON-escaped", () => {
    const env = { CHROMA_API_KEY: 'k/ey "q" 42', CHROMA_AUTH_TOKEN: "tok-1234" };
    const out = redactSecrets(
      `a k/ey "q" 42 b ${encodeURIComponent('k/ey "q" 42')} c ${JSON.stringify('k/ey "q" 42')} d tok-1234`,
      env,
    );
    expect(out).not.toContain("42");
    expect(out).not.toContain("tok-1234");
  });

  it("credentials this process sent: a --store URL (not in the environment) and header values", () => {
    registerUrlCredentials("http://user:pass123@127.0.0.1:9");
    registerHeaderSecrets({
      authorization: "Bearer zz-top-secret",
      "x-chroma-token": "abc-token",
      accept: "application/json",
    });
    const out = redactSecrets("pass123 user:pass123 dXNlcjpwYXNzMTIz zz-top-secret abc-token application/json", {});
    expect(out).toBe("*** *** *** *** *** application/json");
  });

  it("urlCredentials: nothing for a URL without userinfo or no URL", () => {
    expect(urlCredentials("http://h:1")).toEqual([]);
    expect(urlCredentials(undefined)).toEqual([]);
    expect(urlCredentials("not a url")).toEqual([]);
    expect(urlCredentials("http://user:pw-1@h")).toEqual(
      expect.arrayContaining(["pw-1", "user:pw-1", b64("user:pw-1")]),
    );
  });

  it("secretRedactor: the environment's secrets looked up once, each text redacted as redactSecrets redacts it", () => {
    const env = { OPENAI_API_KEY: "sk-proj-abcdef123456", CHROMA_AUTH_TOKEN: "tok-1234" };
    const redact = secretRedactor(env);
    const texts = [
      "401 for key sk-proj-abcdef123456 (token tok-1234)",
      "Authorization: Bearer zz-top-secret-9",
      "nothing secret here",
      "see http://user:pw-77@h:1/x",
    ];
    for (const t of texts) expect(redact(t)).toBe(redactSecrets(t, env));
    expect(redact(texts[0]!)).toBe("401 for key *** (token ***)");
    expect(redact(texts[2]!)).toBe("nothing secret here");
  });

  it("secretsOf leaves out values shorter than 3 characters and lists longer ones first", () => {
    const s = secretsOf({ CHROMA_API_KEY: "ab", CHROMA_AUTH_TOKEN: "abcdef", CHROMA_URL: "http://u:abcdefgh@h" });
    expect(s).not.toContain("ab");
    expect(s.indexOf("u:abcdefgh")).toBeLessThan(s.indexOf("abcdef"));
  });
});

describe("credential variables of the environment", () => {
  it("a whole name part KEY, TOKEN, SECRET, PASSWORD, PASSWD or AUTH makes a credential variable, in any case", () => {
    for (const name of [
      "OPENAI_API_KEY",
      "CHROMA_AUTH_TOKEN",
      "AWS_SECRET_ACCESS_KEY",
      "DB_PASSWORD",
      "FTP_PASSWD",
      "NPM_AUTH",
      "github_token",
      "KEY",
    ])
      expect(isCredentialVariable(name), name).toBe(true);
  });

  it("not a variable naming a socket, file or header beside it, nor the shell's PWD", () => {
    for (const name of [
      "PWD",
      "OLDPWD",
      "SSH_AUTH_SOCK",
      "CHROMA_AUTH_TOKEN_TRANSPORT_HEADER",
      "GOOGLE_API_KEY_FILE",
      "PATH",
      "HOME",
    ])
      expect(isCredentialVariable(name), name).toBe(false);
  });

  it("values shorter than 8 characters, booleans and numbers are not secrets", () => {
    const env = {
      A_TOKEN: "short12",
      B_TOKEN: "true",
      C_SECRET: "12345678",
      D_KEY: "-1.5e10",
      E_AUTH: "FALSE",
      F_API_KEY: "sk-abcdef12",
      G_PASSWORD: "hunter2!x",
      HOME: "/home/somebody",
    };
    expect(credentialValuesOf(env).sort()).toEqual(["hunter2!x", "sk-abcdef12"]);
  });

  it("redactSecrets removes a provider key from third-party error text, also JSON-escaped and URL-encoded", () => {
    const env = { OPENAI_API_KEY: 'sk-proj-a/b+c"d9', TOKENIZERS_PARALLELISM: "false", HOME: "/home/someone" };
    const text = `401 Incorrect API key provided: sk-proj-a/b+c"d9. ${JSON.stringify({ key: 'sk-proj-a/b+c"d9' })} ?k=${encodeURIComponent('sk-proj-a/b+c"d9')} false /home/someone`;
    expect(redactSecrets(text, env)).toBe(
      '401 Incorrect API key provided: ***. {"key":"***"} ?k=*** false /home/someone',
    );
  });
});

describe("compressed data: an HTML page's embedded JSON", () => {
  it("is redacted before it is compressed (the file boundary could not see into it)", () => {
    const key = "sk-page-Rt55qWx81z";
    const before = process.env.SOME_VENDOR_TOKEN;
    process.env.SOME_VENDOR_TOKEN = key;
    try {
      const json = gunzipSync(Buffer.from(embedData({ error: `401 for ${key}` }), "base64")).toString("utf8");
      expect(JSON.parse(json)).toEqual({ error: "401 for ***" });
    } finally {
      if (before === undefined) delete process.env.SOME_VENDOR_TOKEN;
      else process.env.SOME_VENDOR_TOKEN = before;
    }
  });
});

describe("credential shapes, without knowing the value", () => {
  const r = (t: string) => redactSecrets(t, {});

  it("Authorization headers in any case, as text, JSON, escaped JSON, Python repr and name=value", () => {
    expect(r("authorization: Basic dXNlcjpwYXNzMTIz")).toBe("authorization: Basic ***");
    expect(r("AUTHORIZATION: bearer abc.def-ghi")).toBe("AUTHORIZATION: bearer ***");
    expect(r('{"host":"x","Authorization":"Basic Zm9vOmJhcg==","accept":"*/*"}')).toBe(
      '{"host":"x","Authorization":"Basic ***","accept":"*/*"}',
    );
    expect(r('message: "{\\"authorization\\":\\"Token t0k3n\\"}"')).toBe(
      'message: "{\\"authorization\\":\\"Token ***\\"}"',
    );
    expect(r("{'proxy-authorization': 'Basic Zm9vOmJhcg=='}")).toBe("{'proxy-authorization': 'Basic ***'}");
    expect(r("authorization=Bearer%20x")).toBe("authorization=***");
    expect(r("Authorization: abcd1234efgh")).toBe("Authorization: ***");
  });

  it("token headers: x-chroma-token, x-api-key, api-key", () => {
    expect(r("X-Chroma-Token: s3cr3t")).toBe("X-Chroma-Token: ***");
    expect(r('{"x-chroma-token":"s3cr3t","x-api-key":"k","api-key":"v"}')).toBe(
      '{"x-chroma-token":"***","x-api-key":"***","api-key":"***"}',
    );
  });

  it("`Basic <base64 of user:password>` and `Bearer <token>` anywhere", () => {
    expect(r(`sent Basic ${b64("admin:hunter2")} to the server`)).toBe("sent Basic *** to the server");
    expect(r("sent Bearer eyJhbGciOiJIUzI1NiJ9.e30.x to the server")).toBe("sent Bearer *** to the server");
  });

  it("URL userinfo anywhere", () => {
    expect(r("GET http://bob:pw@host:8000/api failed; also https://tok@x.io")).toBe(
      "GET http://***@host:8000/api failed; also https://***@x.io",
    );
    expect(redactUrl("http://bob:pw@host:8000/")).toBe("http://***@host:8000");
  });

  it("leaves prose alone", () => {
    const prose =
      "Authorization: how do I reset it? Basic plan, Bearer token, api keys, http://host:8000/x, email bob@example.com";
    expect(r(prose)).toBe(prose);
  });
});

describe("redaction by value (issue 49)", () => {
  it("a name part containing KEY, TOKEN, SECRET, PASS, PWD, AUTH, CREDENTIAL or WEBHOOK, split at _, - and case changes", () => {
    for (const name of [
      "OPENAI_APIKEY",
      "DB_PASS",
      "SLACK_WEBHOOK_URL",
      "MYSQL_PWD",
      "openaiApiKey",
      "azure-credentials",
      "GoogleCredential",
      "X_AUTHKEY",
      "TOKENIZERS_PARALLELISM",
    ])
      expect(isCredentialVariable(name), name).toBe(true);
    for (const name of ["HOME", "PATH", "GH_PAT", "LANG", "TERM"]) expect(isCredentialVariable(name), name).toBe(false);
  });

  it("the variables the rule missed, by name or by a known token prefix, are redacted; numbers and booleans are not", () => {
    const env = {
      GH_PAT: "github_pat_11ABCDEFG0123456789_abcdefXYZ",
      DB_PASS: "correct-horse-battery",
      OPENAI_APIKEY: "sk-live-0123456789abcdef",
      SLACK_WEBHOOK_URL: "https://hooks.slack.com/services/T000/B000/XXXXsecretXXXX",
      SOMETHING: "xoxb-1234-5678-abcdefgh",
      AWS_ID: "AKIAIOSFODNN7EXAMPLE",
      DATABASE_URL: "postgres://admin:s3cr3t-pw-42@db:5432/x",
      MAX_TOKENS: "12345678",
      USE_AUTH: "true",
    };
    const text = Object.values(env).join(" | ");
    const out = redactSecrets(`${text} | s3cr3t-pw-42`, env);
    for (const [name, v] of Object.entries(env)) {
      if (name === "MAX_TOKENS" || name === "USE_AUTH") expect(out).toContain(v);
      else if (name !== "DATABASE_URL") expect(out, name).not.toContain(v);
    }
    expect(out).not.toContain("s3cr3t-pw-42");
  });

  it("each value's base64 (any alignment), base64url and hex forms, padded or not", () => {
    const key = "sk-proj-Zz9/+?>~abcdef0123";
    const env = { OPENAI_API_KEY: key, CHROMA_AUTH_TOKEN: "tok-!?~>secret-9" };
    const b = Buffer.from(key);
    const forms = [
      b.toString("base64"),
      b.toString("base64url"),
      b.toString("hex"),
      b.toString("hex").toUpperCase(),
      Buffer.from(`x${key}`).toString("base64"),
      Buffer.from(`xy${key}`).toString("base64url"),
      Buffer.from(`Bearer ${key}`).toString("base64"),
      Buffer.from("tok-!?~>secret-9").toString("base64"),
      Buffer.from("tok-!?~>secret-9").toString("hex"),
    ];
    const out = redactSecrets(forms.join("\n"), env);
    for (const line of out.split("\n")) expect(line).toContain("***");
    // What stays of an encoded form is at most the characters it shares with its neighbours.
    for (const line of out.split("\n"))
      expect(line.replace("***", "").replace(/=+$/, "").length).toBeLessThanOrEqual(11);
  });

  it("a value that is not a string (a thrown {message: 42}) is redacted as its text, never throws", () => {
    const env = { OPENAI_API_KEY: "sk-abcdefgh12345" };
    expect(redactSecrets(42 as unknown as string, env)).toBe("42");
    expect(secretRedactor(env)({ toString: () => "sk-abcdefgh12345" } as unknown as string)).toBe("***");
  });
});
