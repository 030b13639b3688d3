/**
 * `retrace cases import` and `retrace cases synth` through the real bin, and
 * what the rest of retrace does with their files: `retrace check` accepts
 * them, `retrace eval` runs them (turns to label score nothing and are listed;
 * synthetic-only runs carry the guard-rail warning), `retrace tune` refuses
 * synthetic-only cases without --allow-synthetic.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, runCli } from "../helpers/cli.js";
import { MINI_KB } from "../helpers/fixtures.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "retrace-cases-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const CHAT = [
  {
    messages: [
      { role: "system", content: "be nice" },
      { role: "user", content: "how do I freeze my card?" },
      { role: "assistant", content: "Open the app…" },
      { role: "user", content: "and unfreeze it?" },
    ],
  },
  { messages: [{ role: "human", content: [{ type: "text", text: "¿cómo congelo mi tarjeta?" }] }], locale: "es-419" },
];

/** Root runs as langsmith's Client.listRuns yields them: two threads in one tracing project, plus a child run. */
const RUNS = [
  {
    id: "b",
    name: "agent",
    run_type: "chain",
    session_id: "proj",
    parent_run_id: null,
    start_time: "2025-03-01T09:00:05.000000",
    extra: { metadata: { thread_id: "th-1" } },
    inputs: {
      messages: [
        {
          lc: 1,
          type: "constructor",
          id: ["langchain_core", "messages", "HumanMessage"],
          kwargs: { content: "why was my card declined?" },
        },
        { lc: 1, type: "constructor", id: ["langchain_core", "messages", "AIMessage"], kwargs: { content: "…" } },
        {
          lc: 1,
          type: "constructor",
          id: ["langchain_core", "messages", "HumanMessage"],
          kwargs: { content: "and what are the limits?" },
        },
      ],
    },
  },
  {
    id: "a",
    name: "agent",
    run_type: "chain",
    session_id: "proj",
    parent_run_id: null,
    start_time: "2025-03-01T09:00:00.000000",
    extra: { metadata: { thread_id: "th-1" } },
    inputs: {
      messages: [
        {
          lc: 1,
          type: "constructor",
          id: ["langchain_core", "messages", "HumanMessage"],
          kwargs: { content: "why was my card declined?" },
        },
      ],
    },
  },
  {
    id: "c",
    name: "retriever",
    run_type: "retriever",
    session_id: "proj",
    parent_run_id: "a",
    start_time: "2025-03-01T09:00:01.000000",
    inputs: { query: "declined" },
  },
  {
    id: "d",
    name: "agent",
    run_type: "chain",
    session_id: "proj",
    parent_run_id: null,
    start_time: "2025-03-01T10:00:00.000000",
    extra: { metadata: { conversation_id: "cv-2" } },
    inputs: { messages: [[{ role: "user", content: "how long do refunds take?" }]] },
  },
];

describe("retrace cases import", () => {
  it("turns chat JSONL into cases to label that check and eval accept, with stable ids", async () => {
    const file = path.join(dir, "chat.jsonl");
    await writeFile(file, CHAT.map((c) => JSON.stringify(c)).join("\n") + "\n");
    const out = path.join(dir, "imported.jsonl");
    const r = await runCli(["cases", "import", file, "--locale", "en", "--out", out]);
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toMatch(/Imported 2 conversations \(3 turns to label\)/);
    expect(r.stderr).toMatch(/personal data/);
    const lines = (await readFile(out, "utf8"))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines[0]).toMatchObject({
      locale: "en",
      kind: "golden",
      turns: [{ user: "how do I freeze my card?" }, { user: "and unfreeze it?" }],
    });
    expect(lines[0].turns[0]).not.toHaveProperty("must_cite_one_of");
    // The assistant's side is kept as the follow-up's context (the system message is not); the first turn had none before it.
    expect(lines[0].turns[0]).not.toHaveProperty("context");
    expect(lines[0].turns[1].context).toEqual([{ role: "assistant", content: "Open the app…" }]);
    expect(lines[1]).toMatchObject({ locale: "es-419", turns: [{ user: "¿cómo congelo mi tarjeta?" }] });

    // The same conversations again, into the same file: nothing new.
    const again = await runCli(["cases", "import", file, "--locale", "en", "--into", out]);
    expect(again.exitCode).toBe(0);
    expect(again.stderr).toMatch(/Imported 0 conversations .*2 already present/);
    expect((await readFile(out, "utf8")).trim().split("\n")).toHaveLength(2);

    const check = await runCli(["check", "--kb", MINI_KB, "--cases", out]);
    expect(check.stderr).toBe("");
    expect(check.exitCode).toBe(0);
    expect(check.stdout).toMatch(/To label: 3 turns without must_cite_one_of/);

    const evalRun = await runCli(
      [
        "eval",
        "--kb",
        MINI_KB,
        "--cases",
        out,
        "--store",
        "memory",
        "--config",
        '{"retrieval":{"embedder":"builtin"}}',
        "--out",
        `json:${path.join(dir, "imported-report.json")}`,
      ],
      { timeoutMs: 300_000 },
    );
    expect(evalRun.exitCode).toBe(0);
    expect(evalRun.stdout).toMatch(/turns to label \(no must_cite_one_of; they ran and scored nothing\): 3/);
    const report = JSON.parse(await readFile(path.join(dir, "imported-report.json"), "utf8"));
    for (const t of report.turns) {
      expect(t.toLabel).toBe(true);
      expect(t.results).toEqual([]);
      expect(t.retrievedIds.length).toBeGreaterThan(0);
    }
  }, 300_000);

  it("runs cases to label through a user's graph (--graph) too: they retrieve, score nothing and are listed", async () => {
    const file = path.join(dir, "graph-chat.jsonl");
    await writeFile(
      file,
      `${JSON.stringify({ messages: [{ role: "user", content: "how do I lock my card?" }], locale: "en" })}\n`,
    );
    const cases = path.join(dir, "graph-imported.jsonl");
    expect((await runCli(["cases", "import", file, "--out", cases])).exitCode).toBe(0);
    const graph = path.join(ROOT, "test", "fixtures", "graphs", "fanout-agent.mjs");
    const r = await runCli(["eval", "--graph", graph, "--kb", MINI_KB, "--cases", cases, "-k", "3", "--json"], {
      timeoutMs: 300_000,
    });
    expect(r.exitCode).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.turns).toHaveLength(1);
    expect(report.turns[0].toLabel).toBe(true);
    expect(report.turns[0].results).toEqual([]);
    expect(report.turns[0].retrievedIds.length).toBeGreaterThan(0);
  }, 300_000);

  it("groups LangSmith root runs into conversations by the metadata thread key, turns by start_time, conversations by id (as OTLP imports)", async () => {
    const file = path.join(dir, "runs.json");
    await writeFile(file, JSON.stringify(RUNS));
    const r = await runCli(["cases", "import", file, "--locale", "en"]);
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toMatch(/1 LangSmith child runs left out/);
    const cases = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(cases.map((c) => c.turns.map((t: { user: string }) => t.user))).toEqual([
      ["how long do refunds take?"],
      ["why was my card declined?", "and what are the limits?"],
    ]);
    expect(cases.map((c) => c.id)).toEqual([...cases.map((c) => c.id)].sort());
    // Run b's history holds the AIMessage that answered the first question: the context of the thread's second turn.
    expect(cases[1].turns.map((t: { context?: unknown }) => t.context)).toEqual([
      undefined,
      [{ role: "assistant", content: "…" }],
    ]);
    // JSONL of the same runs gives the same cases.
    const jsonl = path.join(dir, "runs.jsonl");
    await writeFile(jsonl, RUNS.map((x) => JSON.stringify(x)).join("\n"));
    const r2 = await runCli(["cases", "import", jsonl, "--locale", "en"]);
    expect(r2.stdout).toBe(r.stdout);
  });

  it("exits 2 naming file and line for a line that is not a conversation, and writes nothing", async () => {
    const file = path.join(dir, "bad.jsonl");
    await writeFile(file, `${JSON.stringify(CHAT[0])}\n{"question": "hi"}\n`);
    const out = path.join(dir, "never.jsonl");
    const r = await runCli(["cases", "import", file, "--locale", "en", "--out", out]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(`${file}:2`);
    expect(r.stderr).toMatch(/not a conversation/);
    await expect(readFile(out, "utf8")).rejects.toThrow();
    const noLocale = await runCli(["cases", "import", path.join(dir, "chat.jsonl")]);
    expect(noLocale.exitCode).toBe(2);
    expect(noLocale.stderr).toMatch(/expected a locale: pass --locale/);
  });
});

describe("retrace cases import onto its own input", () => {
  it("--out (or --into) naming the conversations file itself is exit 2, and the file is left as it was", async () => {
    const file = path.join(dir, "self.jsonl");
    const text = CHAT.map((c) => JSON.stringify(c)).join("\n") + "\n";
    await writeFile(file, text);
    for (const flag of ["--out", "--into"]) {
      // The same file, named another way (./ prefix, relative to another cwd).
      const r = await runCli(["cases", "import", file, "--locale", "en", flag, `./${path.basename(file)}`], {
        cwd: dir,
      });
      expect(r.exitCode, flag).toBe(2);
      expect(r.stderr).toContain(`Expected \`${flag}\` to be a file other than the conversations being imported`);
      expect(await readFile(file, "utf8")).toBe(text);
    }
  });
});

describe("retrace cases synth", () => {
  it("writes byte-identical files for one seed, other ones for another, and every case passes retrace check", async () => {
    const a = path.join(dir, "syn-a.jsonl");
    const b = path.join(dir, "syn-b.jsonl");
    const args = [
      "cases",
      "synth",
      "--kb",
      "kb",
      "--config",
      '{"run":{"seed":11}}',
      "--turns",
      "3",
      "--topic-shift",
      "0.3",
    ];
    expect((await runCli([...args, "--out", a])).exitCode).toBe(0);
    const stdout = await runCli(args);
    await writeFile(b, stdout.stdout);
    const textA = await readFile(a, "utf8");
    expect(await readFile(b, "utf8")).toBe(textA);
    const other = await runCli([
      "cases",
      "synth",
      "--kb",
      "kb",
      "--config",
      '{"run":{"seed":12}}',
      "--turns",
      "3",
      "--topic-shift",
      "0.3",
    ]);
    expect(other.stdout).not.toBe(textA);

    const cases = textA
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(cases).toHaveLength(38); // one per card of the shipped KB
    for (const c of cases) {
      expect(c.kind).toBe("synthetic");
      expect(c.origin).toMatchObject({ generator: "known-item-naive", version: "1", seed: 11 });
      expect(c.origin.chunks).toHaveLength(c.turns.length);
      expect(c.turns[0].must_cite_one_of).toEqual([c.origin.card]);
      for (const [i, t] of c.turns.entries()) {
        expect(t.must_cite_one_of).toEqual([(c.origin.chunks[i] as string).split("#")[0]]);
        if (i > 0 && t.must_cite_one_of[0] === c.origin.card) expect(typeof t.standalone).toBe("string");
      }
    }
    // Per-locale templates: Spanish cases ask in Spanish.
    expect(cases.filter((c) => c.locale === "es-419").some((c) => /^¿/.test(c.turns[0].user))).toBe(true);
    expect(
      cases.some((c) => c.turns.some((t: { must_cite_one_of: string[] }) => t.must_cite_one_of[0] !== c.origin.card)),
    ).toBe(true); // a topic shift

    const check = await runCli(["check", "--cases", a]);
    expect(check.stderr).toBe("");
    expect(check.exitCode).toBe(0);
    expect(check.stdout).toMatch(/Synthetic: 38 cases/);
  });

  it("runs a --generator module, validates its turns, and refuses bad ones with exit 2", async () => {
    const r = await runCli([
      "cases",
      "synth",
      "--kb",
      MINI_KB,
      "--config",
      '{"run":{"seed":3}}',
      "--generator",
      path.join(ROOT, "test/fixtures/synthetic/echo-generator.mjs"),
    ]);
    expect(r.exitCode).toBe(0);
    const cases = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(cases.length).toBeGreaterThan(0);
    expect(cases[0].origin).toMatchObject({ generator: "echo-test", version: "2", seed: 3 });
    expect(cases[0].turns[1].standalone).toMatch(/\(3\)$/);
    const bad = await runCli([
      "cases",
      "synth",
      "--kb",
      MINI_KB,
      "--generator",
      path.join(ROOT, "test/fixtures/synthetic/bad-generator.mjs"),
    ]);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toMatch(/bad-generator\.mjs.*user is " {3}"/);
  });

  it("skips and counts cards too short to build a query from", async () => {
    const corpus = path.join(dir, "tiny-beir");
    await import("node:fs/promises").then((fs) => fs.mkdir(corpus, { recursive: true }));
    await writeFile(
      path.join(corpus, "corpus.jsonl"),
      [
        { _id: "d1", title: "", text: "the" },
        { _id: "d2", title: "Wing flutter", text: "flutter of swept wings at transonic speeds" },
        { _id: "d3", title: "Boundary layers", text: "laminar boundary layer transition on flat plates" },
      ]
        .map((d) => JSON.stringify(d))
        .join("\n"),
    );
    const r = await runCli(["cases", "synth", "--beir", corpus, "--config", '{"run":{"seed":1}}', "--turns", "1"]);
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toMatch(/Synthesized 2 cases .*1 card skipped \(1 no chunk with 2\+ distinct terms\)/);
    expect(r.stdout).not.toContain('"d1"');
  });
});

describe("retrace cases synth --topic-shift says when it cannot apply", () => {
  it("a KB of one card per locale: no other card to shift to, said on stderr; with --turns 1: nothing to replace", async () => {
    const one = path.join(dir, "one-card-kb");
    await mkdir(path.join(one, "cards", "en"), { recursive: true });
    await writeFile(
      path.join(one, "cards", "en", "card-freeze.md"),
      await readFile(path.join(MINI_KB, "cards", "en", "card-freeze.md"), "utf8"),
    );
    const r = await runCli(["cases", "synth", "--kb", one, "--config", '{"run":{"seed":1}}', "--topic-shift", "1"]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toContain(
      "Note: --topic-shift cannot apply to any case: a shift moves to another card of the case's locale, and en has one card",
    );
    const t = await runCli([
      "cases",
      "synth",
      "--kb",
      MINI_KB,
      "--config",
      '{"run":{"seed":1}}',
      "--topic-shift",
      "1",
      "--turns",
      "1",
    ]);
    expect(t.exitCode, t.stderr).toBe(0);
    expect(t.stderr).toContain("Note: --topic-shift does nothing with --turns 1");
    // The mini KB: en has two cards, es-419 and pt-BR one each.
    const mini = await runCli([
      "cases",
      "synth",
      "--kb",
      MINI_KB,
      "--config",
      '{"run":{"seed":1}}',
      "--topic-shift",
      "1",
    ]);
    expect(mini.stderr).toContain(
      "Note: --topic-shift cannot apply to the cases of es-419, pt-BR: a shift moves to another card of the case's locale, and es-419, pt-BR have one card",
    );
    // Where it can apply everywhere, no such note.
    await writeFile(
      path.join(one, "cards", "en", "refund-timelines.md"),
      await readFile(path.join(MINI_KB, "cards", "en", "refund-timelines.md"), "utf8"),
    );
    const ok = await runCli(["cases", "synth", "--kb", one, "--config", '{"run":{"seed":1}}', "--topic-shift", "1"]);
    expect(ok.exitCode, ok.stderr).toBe(0);
    expect(ok.stderr).not.toContain("--topic-shift");
  });
});

describe("the guard rails", () => {
  it("an eval of synthetic cases only says what its generator can judge; tune refuses them without --allow-synthetic", async () => {
    const syn = path.join(dir, "syn-mini.jsonl");
    expect(
      (await runCli(["cases", "synth", "--kb", MINI_KB, "--config", '{"run":{"seed":5}}', "--out", syn])).exitCode,
    ).toBe(0);
    const ev = await runCli(
      [
        "eval",
        "--kb",
        MINI_KB,
        "--cases",
        syn,
        "--store",
        "memory",
        "--config",
        '{"retrieval":{"embedder":"builtin"}}',
      ],
      { timeoutMs: 300_000 },
    );
    expect(ev.exitCode).toBe(0);
    expect(ev.stdout).toMatch(/warning: every case is synthetic \(generator known-item-naive 1/);
    expect(ev.stdout).toMatch(/not valid for comparing lexical and semantic retrieval/);

    const tune = await runCli(
      [
        "tune",
        "--kb",
        MINI_KB,
        "--cases",
        syn,
        "--store",
        "memory",
        "--config",
        JSON.stringify({ retrieval: { embedder: "builtin" } }),
      ],
      {
        timeoutMs: 300_000,
      },
    );
    expect(tune.exitCode).toBe(2);
    expect(tune.stderr).toMatch(/--allow-synthetic/);
    const conf = path.join(dir, "synthetic-tuned.json");
    const allowed = await runCli(
      [
        "tune",
        "--kb",
        MINI_KB,
        "--cases",
        syn,
        "--store",
        "memory",
        "--config",
        JSON.stringify({ retrieval: { embedder: "builtin" } }),
        "--folds",
        "2",
        "--allow-synthetic",
        "--out",
        conf,
      ],
      { timeoutMs: 300_000 },
    );
    expect(allowed.exitCode).toBe(0);
    expect(allowed.stdout).toMatch(/warning: tuned on synthetic known-item queries only/);
    expect(JSON.parse(await readFile(conf, "utf8")).tuned.warning).toMatch(/misorder lexical and semantic retrieval/);
  }, 600_000);
});
