/**
 * Every answer of a Chroma store is validated (docs/reliability.md): a 200
 * with an HTML page, a `/get` of the wrong shape, is exit 3 "not a Chroma
 * answer" naming the store and what was wrong — at the fetch boundary
 * (faultAwareFetch over a stand-in inner fetch: the server's answers are
 * the input here) and through the real bin against a local HTTP server that
 * answers every request with 200 and an HTML page.
 */
import http from "node:http";
import type net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exitCodeOf } from "../../src/errors.js";
import { notAChromaAnswer } from "../../src/retrieval/chroma-answers.js";
import { faultAwareFetch } from "../../src/retrieval/chroma-faults.js";
import { runCli } from "../helpers/cli.js";
import { MINI_KB } from "../helpers/fixtures.js";

const BASE = "http://127.0.0.1:1/api/v2/tenants/default_tenant/databases/default_database/collections";
const enc = (s: string) => new TextEncoder().encode(s);

async function answer(method: string, url: string, body: string, type = "application/json") {
  const f = faultAwareFetch(
    "http://127.0.0.1:1",
    5_000,
    async () => new Response(body, { status: 200, headers: { "content-type": type } }),
  );
  return f(new Request(url, { method }));
}

describe("notAChromaAnswer", () => {
  it("JSON of the endpoint's shape passes; extra fields too", () => {
    expect(
      notAChromaAnswer("GET", "/api/v2/heartbeat", enc('{"nanosecond heartbeat": 1}'), "application/json"),
    ).toBeUndefined();
    expect(notAChromaAnswer("GET", new URL(BASE).pathname, enc('[{"id":"a","name":"b","x":1}]'), null)).toBeUndefined();
    expect(
      notAChromaAnswer(
        "POST",
        `${new URL(BASE).pathname}/abc/get`,
        enc('{"ids":["a"],"documents":["d"],"metadatas":[null]}'),
        null,
      ),
    ).toBeUndefined();
    expect(notAChromaAnswer("POST", `${new URL(BASE).pathname}/abc/add`, enc(""), null)).toBeUndefined();
  });

  it("HTML, a list that is not a list, a count that is not a number", () => {
    expect(notAChromaAnswer("GET", new URL(BASE).pathname, enc("<!doctype html><p>hi"), "text/html")).toMatch(
      /^an HTML page \(text\/html\)/,
    );
    expect(notAChromaAnswer("POST", `${new URL(BASE).pathname}/abc/get`, enc('{"ids":"a"}'), null)).toMatch(
      /wrong shape \(`ids`: expected array/,
    );
    expect(notAChromaAnswer("GET", `${new URL(BASE).pathname}/abc/count`, enc('"12"'), null)).toMatch(/wrong shape/);
  });
});

describe("faultAwareFetch: a wrong answer is exit 3 naming the store", () => {
  it.each([
    [
      "GET",
      BASE,
      "<html><body>Welcome to nginx!</body></html>",
      "text/html",
      /GET \/api\/v2\/.*collections with something that is not a Chroma answer: an HTML page/,
    ],
    [
      "POST",
      `${BASE}/abc/get`,
      '{"ids": 7}',
      "application/json",
      /POST \/api\/v2\/.*\/get with something that is not a Chroma answer: JSON of the wrong shape/,
    ],
  ])("%s %s", async (method, url, body, type, message) => {
    const e = await answer(method, url, body, type).then(
      () => undefined,
      (x: unknown) => x,
    );
    expect(exitCodeOf(e)).toBe(3);
    expect((e as Error).message).toMatch(/^Chroma at http:\/\/127\.0\.0\.1:1 answered /);
    expect((e as Error).message).toMatch(message);
  });
});

describe("retrace eval --store URL of a server that answers 200 with HTML", () => {
  let server: http.Server;
  let url: string;
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      req.resume();
      res.writeHead(200, { "content-type": "text/html" });
      res.end("<!doctype html><html><body>It works!</body></html>");
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it("exit 3, not a Chroma answer, no internal error", async () => {
    const r = await runCli([
      "eval",
      "--kb",
      MINI_KB,
      "--store",
      url,
      "--config",
      '{"retrieval":{"embedder":"builtin"}}',
    ]);
    expect(r.exitCode, r.stderr).toBe(3);
    expect(r.stderr).toContain("not a Chroma answer: an HTML page");
    expect(r.stderr).toContain(url.replace("http://", ""));
    expect(r.stderr).not.toMatch(/internal error|is not a function/);
  });
});
