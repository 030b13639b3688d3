/**
 * Nothing secret, in any encoding (docs/reliability.md, "Credentials never
 * leak"), through the real bin: a Chroma stand-in on 127.0.0.1 answers 500
 * with a body that echoes every request header it received (as text lines
 * or as JSON). With `--store http://user:pass123@…` and a token in the
 * environment variable retrace sends, the run is exit 3, and neither the
 * password, nor the base64 of `user:pass123` (what basic auth sends), nor
 * the token appears on stdout, stderr (with --verbose: stacks and causes
 * included) or in any file; the redaction marker does.
 */
import { existsSync } from "node:fs";
import { readdir, readFile, writeFile } from "node:fs/promises";
import { gunzipSync } from "node:zlib";
import http from "node:http";
import type net from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "../helpers/chroma.js";
import { ROOT, runCli } from "../helpers/cli.js";
import { MINI_KB } from "../helpers/fixtures.js";

const PASSWORD = "pass123";
const BASIC = Buffer.from(`user:${PASSWORD}`).toString("base64"); // dXNlcjpwYXNzMTIz
const TOKEN = "tok-Hx83pQ2";
const SECRETS = [PASSWORD, BASIC, BASIC.replace(/=+$/, ""), TOKEN];

interface EchoServer {
  url: (auth?: string) => string;
  seen: http.IncomingHttpHeaders[];
  close(): Promise<void>;
}

/**
 * Answers 500 with `{"error": "...", "message": <every request header>}`,
 * credential headers first; `heartbeat: true` answers the heartbeat with 200
 * first, so the failure comes from a later request.
 */
async function startEchoServer(format: "text" | "json", opts: { heartbeat?: boolean } = {}): Promise<EchoServer> {
  const seen: http.IncomingHttpHeaders[] = [];
  const server = http.createServer((req, res) => {
    seen.push(req.headers);
    req.resume();
    if (opts.heartbeat === true && req.url?.endsWith("/heartbeat")) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ "nanosecond heartbeat": 1 }));
      return;
    }
    const first = ["authorization", "x-chroma-token"];
    const names = Object.keys(req.headers).sort(
      (a, b) => Number(first.includes(b)) - Number(first.includes(a)) || (a < b ? -1 : 1),
    );
    const echoed =
      format === "text"
        ? `request headers: ${names.map((n) => `${n}: ${String(req.headers[n])}`).join("\n")}`
        : `request headers ${JSON.stringify(Object.fromEntries(names.map((n) => [n, req.headers[n]])))}`;
    res.writeHead(500, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: "InternalError", message: echoed }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: (auth) => `http://${auth === undefined ? "" : `${auth}@`}127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let out: { dir: string; cleanup: () => Promise<void> };
beforeAll(async () => {
  out = await tempDir("redaction");
});
afterAll(() => out.cleanup());

/** No CHROMA_* of the machine running the tests leaks into the runs. */
const cleanEnv = {
  CHROMA_URL: undefined,
  CHROMA_API_KEY: undefined,
  CHROMA_AUTH_TOKEN: undefined,
  CHROMA_AUTH_TOKEN_TRANSPORT_HEADER: undefined,
  RETRACE_STORE: undefined,
};

async function expectNothingSecret(
  r: { exitCode: number | null; stdout: string; stderr: string },
  files: string[],
): Promise<void> {
  expect(r.exitCode, r.stderr).toBe(3);
  expect(r.stdout).toBe("");
  const texts = [
    r.stdout,
    r.stderr,
    ...(await Promise.all(files.filter((f) => existsSync(f)).map((f) => readFile(f, "utf8")))),
  ];
  for (const t of texts) for (const s of SECRETS) expect(t).not.toContain(s);
  expect(r.stderr).toContain("***");
  expect(r.stderr).toMatch(/server error/);
}

describe("credentials are redacted from a server's echo of the request headers", () => {
  it("ingest --store http://user:pass123@… with CHROMA_API_KEY, a text echo of a failed heartbeat", async () => {
    const server = await startEchoServer("text");
    try {
      const r = await runCli(
        [
          "ingest",
          "--kb",
          MINI_KB,
          "--config",
          JSON.stringify({ retrieval: { embedder: "builtin" } }),
          "--store",
          server.url(`user:${PASSWORD}`),
          "--verbose",
        ],
        {
          env: { ...cleanEnv, CHROMA_API_KEY: TOKEN },
          timeoutMs: 60_000,
        },
      );
      // The server did receive the credentials it echoes.
      expect(server.seen[0]?.authorization).toBe(`Basic ${BASIC}`);
      expect(server.seen[0]?.["x-chroma-token"]).toBe(TOKEN);
      await expectNothingSecret(r, []);
      expect(r.stderr).toContain("authorization: Basic ***");
      expect(r.stderr).toContain("x-chroma-token: ***");
      expect(r.stderr).toContain("http://***@127.0.0.1:");
    } finally {
      await server.close();
    }
  });

  it("eval --store with outputs, CHROMA_AUTH_TOKEN sent as x-chroma-token, a JSON echo after the heartbeat: no file written, none leaks", async () => {
    const server = await startEchoServer("json", { heartbeat: true });
    const files = ["r.json", "r.md", "r.xml", "r.html"].map((f) => path.join(out.dir, f));
    try {
      const r = await runCli(
        [
          "eval",
          "--kb",
          MINI_KB,
          "--config",
          '{"retrieval":{"embedder":"builtin"}}',
          "--store",
          server.url(`user:${PASSWORD}`),
          "--out",
          `json:${files[0]!}`,
          "--out",
          files[1]!,
          "--out",
          `junit:${files[2]!}`,
          "--out",
          `html:${files[3]!}`,
          "--verbose",
        ],
        {
          env: { ...cleanEnv, CHROMA_AUTH_TOKEN: TOKEN, CHROMA_AUTH_TOKEN_TRANSPORT_HEADER: "X-Chroma-Token" },
          timeoutMs: 60_000,
        },
      );
      expect(server.seen.length).toBeGreaterThan(1);
      expect(server.seen.at(-1)?.authorization).toBe(`Basic ${BASIC}`);
      expect(server.seen.at(-1)?.["x-chroma-token"]).toBe(TOKEN);
      await expectNothingSecret(r, files);
      expect(r.stderr).toContain('"authorization":"Basic ***"');
      for (const f of files) expect(existsSync(f)).toBe(false);
      expect((await readdir(out.dir)).filter((f) => f.endsWith(".tmp"))).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it("eval --store http://127.0.0.1:… with CHROMA_AUTH_TOKEN sent as a bearer token", async () => {
    const server = await startEchoServer("text");
    try {
      const r = await runCli(
        [
          "eval",
          "--kb",
          MINI_KB,
          "--config",
          '{"retrieval":{"embedder":"builtin"}}',
          "--store",
          server.url(),
          "--verbose",
        ],
        {
          env: { ...cleanEnv, CHROMA_AUTH_TOKEN: TOKEN },
          timeoutMs: 60_000,
        },
      );
      expect(server.seen[0]?.authorization).toBe(`Bearer ${TOKEN}`);
      await expectNothingSecret(r, []);
      expect(r.stderr).toContain("authorization: Bearer ***");
    } finally {
      await server.close();
    }
  });
});

describe("error text of a user's graph is redacted in every report file", () => {
  it("eval --graph whose runs throw with echoed credentials: report JSON, markdown and JUnit carry the marker, not the secrets", async () => {
    // A duck-typed compiled graph (invoke, stream, channels, nodes) whose every run throws what a server echoed.
    const graph = path.join(out.dir, "leaky-graph.mjs");
    await writeFile(
      graph,
      `const b64 = Buffer.from("user:${PASSWORD}").toString("base64");
export const graph = {
  channels: { messages: {} }, nodes: {}, checkpointer: false, async *stream() {},
  async invoke() {
    throw new Error("vector store said 500: " + JSON.stringify({ authorization: "Basic " + b64, "x-chroma-token": process.env.CHROMA_API_KEY, url: process.env.CHROMA_URL }) + " password ${PASSWORD} key " + process.env.OPENAI_API_KEY);
  },
};
`,
    );
    const files = ["g.json", "g.md", "g.xml"].map((f) => path.join(out.dir, f));
    const r = await runCli(
      [
        "eval",
        "--graph",
        graph,
        "--kb",
        MINI_KB,
        "--out",
        `json:${files[0]!}`,
        "--out",
        files[1]!,
        "--out",
        `junit:${files[2]!}`,
        "--verbose",
      ],
      {
        env: {
          ...cleanEnv,
          CHROMA_URL: `http://user:${PASSWORD}@127.0.0.1:9`,
          CHROMA_API_KEY: TOKEN,
          OPENAI_API_KEY: "sk-graph-Kq72LmZ0pW",
        },
        timeoutMs: 60_000,
      },
    );
    expect(r.exitCode, r.stderr).toBe(1); // every turn threw: the gate fails, the files are written
    const secrets = [...SECRETS, "sk-graph-Kq72LmZ0pW"]; // a credential variable retrace itself never reads
    for (const t of [r.stdout, r.stderr]) for (const s of secrets) expect(t).not.toContain(s);
    for (const f of files) {
      const text = await readFile(f, "utf8");
      for (const s of secrets) expect(text, f).not.toContain(s);
      expect(text, f).toContain("vector store said 500");
      expect(text, f).toContain("***");
    }
  });
});

describe("a model provider's error text carries no credential variable's value", () => {
  // What a provider's 401 says, with the key in it: a local LangChain chat model class as the --judge (test/fixtures/judge/leaky-401-judge.mjs).
  const KEY = "sk-proj-Zq81xKv0aT3stKey99";
  const judge = path.join(ROOT, "test/fixtures/judge/leaky-401-judge.mjs");
  for (const verbose of [false, true]) {
    it(`eval --judge whose model answers 401 with OPENAI_API_KEY in the text${verbose ? ", --verbose (stack and causes)" : ""}: exit 3, the key nowhere`, async () => {
      const files = ["j.json", "j.md", "j.xml"].map((f) => path.join(out.dir, `${verbose ? "v-" : ""}${f}`));
      const r = await runCli(
        [
          "eval",
          "--kb",
          MINI_KB,
          "--store",
          "memory",
          "--config",
          '{"retrieval":{"embedder":"builtin"}}',
          "--config",
          JSON.stringify({ run: { judge: judge } }),
          "--config",
          JSON.stringify({ run: { judgeCache: path.join(out.dir, "jc") } }),
          "--out",
          `json:${files[0]!}`,
          "--out",
          files[1]!,
          "--out",
          `junit:${files[2]!}`,
          ...(verbose ? ["--verbose"] : []),
        ],
        { env: { ...cleanEnv, OPENAI_API_KEY: KEY }, timeoutMs: 60_000 },
      );
      expect(r.exitCode, r.stderr).toBe(3);
      expect(r.stderr).toContain("401 Incorrect API key provided: ***.");
      for (const t of [r.stdout, r.stderr]) expect(t).not.toContain(KEY);
      if (verbose) expect(r.stderr).toContain("caused by: Error: 401 Incorrect API key provided: ***.");
      for (const f of files.filter((x) => existsSync(x))) expect(await readFile(f, "utf8"), f).not.toContain(KEY);
    });
  }
});

describe("redaction by value (issue 49): names the old rule missed, token prefixes, encodings, every stream and file", () => {
  it("eval --graph that throws GH_PAT, DB_PASS, OPENAI_APIKEY, SLACK_WEBHOOK_URL and the base64/hex of a key: in no stream or file, HTML data and step summary included", async () => {
    const env = {
      GH_PAT: "github_pat_11AAAAAAA0abcdefghijKLMNOP",
      DB_PASS: "correct-horse-battery-9",
      OPENAI_APIKEY: "sk-apikey-Zq81mN0pLr",
      SLACK_WEBHOOK_URL: "https://hooks.slack.com/services/T0001/B0002/wEbHoOkSeCrEt42",
      OPENAI_API_KEY: "sk-proj-base64Me-7731x",
      CHROMA_AUTH_TOKEN: "chroma-tok-hexme-5521",
    };
    const graph = path.join(out.dir, "leaky-49.mjs");
    await writeFile(
      graph,
      `const e = process.env;
const b64 = (s) => Buffer.from(s).toString("base64");
const hex = (s) => Buffer.from(s).toString("hex");
export const graph = {
  channels: { messages: {} }, nodes: {}, checkpointer: false, async *stream() {},
  async invoke() {
    throw new Error("500 body: " + [e.GH_PAT, e.DB_PASS, e.OPENAI_APIKEY, e.SLACK_WEBHOOK_URL, b64(e.OPENAI_API_KEY), b64(e.CHROMA_AUTH_TOKEN), hex(e.CHROMA_AUTH_TOKEN)].join(" | "));
  },
};
`,
    );
    const files = ["r49.json", "r49.md", "r49.xml", "r49.html"].map((f) => path.join(out.dir, f));
    const summary = path.join(out.dir, "summary49.md");
    const r = await runCli(
      [
        "eval",
        "--graph",
        graph,
        "--kb",
        MINI_KB,
        "--out",
        `json:${files[0]!}`,
        "--out",
        files[1]!,
        "--out",
        `junit:${files[2]!}`,
        "--out",
        `html:${files[3]!}`,
        "--verbose",
      ],
      { env: { ...cleanEnv, ...env, GITHUB_ACTIONS: "true", GITHUB_STEP_SUMMARY: summary }, timeoutMs: 60_000 },
    );
    expect(r.exitCode, r.stderr).toBe(1); // every turn threw: the gate fails, the files are written
    const forms = Object.values(env).flatMap((v) => [
      v,
      Buffer.from(v).toString("base64").replace(/=+$/, "").slice(0, -1),
    ]);
    forms.push(Buffer.from(env.CHROMA_AUTH_TOKEN).toString("hex"));
    const html = await readFile(files[3]!, "utf8");
    const data = /<script[^>]*id="retrace-data"[^>]*>([^<]+)</.exec(html)?.[1];
    expect(data, "the page's embedded data").toBeDefined();
    const texts: [string, string][] = [
      ["stdout", r.stdout],
      ["stderr", r.stderr],
      ["summary", await readFile(summary, "utf8")],
      ...(await Promise.all(files.map(async (f) => [f, await readFile(f, "utf8")] as [string, string]))),
    ];
    texts.push(["html data", gunzipSync(Buffer.from(data!.trim(), "base64")).toString("utf8")]);
    for (const [where, text] of texts) for (const s of forms) expect(text, `${where}: ${s}`).not.toContain(s);
    expect(await readFile(files[0]!, "utf8")).toContain("500 body: ***");
  });
});
