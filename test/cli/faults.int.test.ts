/**
 * Every Chroma fault is a clear exit (docs/reliability.md): exit 3, one plain
 * message naming the redacted URL and what happened, no stack, no browser
 * advice, no report file; credentials never appear in any output.
 */
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listAllCollections, isStagingName } from "../../src/retrieval/chroma-store.js";
import { useLocalChroma } from "../helpers/chroma.js";
import { startFaultProxy, startSilentServer } from "../helpers/chroma-proxy.js";
import { runCli } from "../helpers/cli.js";
import { MINI_KB } from "../helpers/fixtures.js";
import { tempDir } from "../helpers/chroma.js";

const local = useLocalChroma("faults");
const PASSWORD = "pw-Zq81xK7";
const TOKEN = "tok-Yv52mR3";
let out: { dir: string; cleanup: () => Promise<void> };
beforeAll(async () => {
  out = await tempDir("faults-out");
});
afterAll(async () => {
  await out?.cleanup();
});

const withSecrets = (url: string) => {
  const u = new URL(url);
  return { CHROMA_URL: `http://admin:${PASSWORD}@${u.host}`, CHROMA_API_KEY: TOKEN };
};
const outputs = (name: string) => [
  "--out",
  `json:${path.join(out.dir, `${name}.json`)}`,
  "--out",
  path.join(out.dir, `${name}.md`),
  "--out",
  `junit:${path.join(out.dir, `${name}.xml`)}`,
];

function expectPlainFailure(r: { exitCode: number | null; stdout: string; stderr: string }, what: RegExp): void {
  expect(r.exitCode, r.stderr).toBe(3);
  expect(r.stdout).toBe("");
  const lines = r.stderr.split("\n").filter((l) => l.startsWith("retrace: "));
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(what);
  expect(r.stderr).not.toMatch(/^\s+at /m); // no stack without --verbose
  expect(r.stderr).not.toMatch(/CORS|browser/i);
  expect(`${r.stdout}${r.stderr}`).not.toContain(PASSWORD);
  expect(`${r.stdout}${r.stderr}`).not.toContain(TOKEN);
}

describe("Chroma faults", () => {
  it("a server that accepts and never answers: exit 3 after --timeout, naming the redacted URL; no report", async () => {
    const silent = await startSilentServer();
    try {
      const r = await runCli(
        [
          "eval",
          "--kb",
          MINI_KB,
          "--config",
          '{"retrieval":{"embedder":"builtin"}}',
          "--config",
          '{"run":{"timeout":1}}',
          ...outputs("silent"),
        ],
        {
          env: withSecrets(`http://127.0.0.1:${silent.port}`),
          timeoutMs: 60_000,
        },
      );
      expectPlainFailure(
        r,
        new RegExp(
          `Cannot reach Chroma at http://\\*\\*\\*@127\\.0\\.0\\.1:${silent.port} \\(did not answer GET /api/v2/heartbeat within 1\\.0 s`,
        ),
      );
      expect(await readdir(out.dir)).toEqual([]);
    } finally {
      await silent.close();
    }
  }, 90_000);

  it("5xx in the middle of an ingest: exit 3 naming the request; the staging collection is cleaned by the next ingest", async () => {
    let adds = 0;
    const proxy = await startFaultProxy(local.server.url, {
      failWhen: (w) => w.startsWith("POST") && w.endsWith("/add") && ++adds > 1,
    });
    try {
      const r = await runCli(
        [
          "ingest",
          "--kb",
          MINI_KB,
          "--config",
          JSON.stringify({ retrieval: { embedder: "builtin" } }),
          "--batch-size",
          "2",
        ],
        {
          env: withSecrets(proxy.url),
          timeoutMs: 60_000,
        },
      );
      expectPlainFailure(
        r,
        /Chroma at http:\/\/\*\*\*@127\.0\.0\.1:\d+ answered POST \/api\/v2\/.*\/add with a server error/,
      );
      expect(proxy.failed.length).toBeGreaterThan(0);
      // Credentials were sent (basic auth from the URL, the token as x-chroma-token), only never shown.
      expect(
        proxy.seen.some((h) => h.authorization === `Basic ${Buffer.from(`admin:${PASSWORD}`).toString("base64")}`),
      ).toBe(true);
      expect(proxy.seen.some((h) => h["x-chroma-token"] === TOKEN)).toBe(true);
    } finally {
      await proxy.close();
    }
    const again = await runCli(
      ["ingest", "--kb", MINI_KB, "--config", JSON.stringify({ retrieval: { embedder: "builtin" } }), "--json"],
      {
        env: { CHROMA_URL: local.server.url },
        timeoutMs: 60_000,
      },
    );
    expect(again.exitCode, again.stderr).toBe(0);
    expect((await listAllCollections(local.client)).filter((c) => isStagingName(c.name))).toEqual([]);
  }, 120_000);

  it("a full run with both secrets set writes them nowhere (stdout, stderr, report, markdown, JUnit)", async () => {
    const proxy = await startFaultProxy(local.server.url);
    try {
      const r = await runCli(
        ["eval", "--kb", MINI_KB, "--config", '{"retrieval":{"embedder":"builtin"}}', ...outputs("ok")],
        { env: withSecrets(proxy.url), timeoutMs: 120_000 },
      );
      expect(r.exitCode, r.stderr).toBe(0);
      const files = await Promise.all(
        ["ok.json", "ok.md", "ok.xml"].map((f) => readFile(path.join(out.dir, f), "utf8")),
      );
      for (const text of [r.stdout, r.stderr, ...files]) {
        expect(text).not.toContain(PASSWORD);
        expect(text).not.toContain(TOKEN);
        expect(text).not.toContain(Buffer.from(`admin:${PASSWORD}`).toString("base64"));
      }
      expect(JSON.parse(files[0]!).run.store).toMatch(/^http:\/\/\*\*\*@127\.0\.0\.1:\d+$/);
    } finally {
      await proxy.close();
    }
  }, 180_000);
});
