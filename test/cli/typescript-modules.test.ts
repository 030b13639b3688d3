/**
 * A TypeScript module is a first-class module (src/user-module.ts,
 * docs/langchain-integration.md, "Your graph's LangChain classes"): every
 * module option (`--graph`, `--input`, `--id-map`, `--judge`,
 * `cases synth --generator`) takes a `.ts` file, through the real bin — the
 * compiled CLI (dist/) and the TypeScript source run by tsx — and the
 * features that recognise LangChain classes work on it, also when the
 * project holds its own copy of `@langchain/core` (and of LangGraph): a temp
 * project whose node_modules has copies of the installed @langchain/core,
 * @langchain/langgraph and @langchain/langgraph-checkpoint folders (the rest
 * linked to the checkout's), checked to resolve to the copies. A module that
 * throws while loading or being built is exit 2 naming it.
 *
 * The graph is examples/custom-retriever.ts (a `WordOverlapRetriever extends
 * BaseRetriever`, searching with the latest user message; a section scores
 * the number of distinct query words of 3+ letters it contains, ties by
 * document id) on the mini KB, with these cases, at k = 1 — by hand:
 * - cf-1#0 "how do I freeze my card?": card-freeze#2 ("How to freeze", "card")
 *   has how/freeze/card → card-freeze first; the graph's query is the raw
 *   message → `ok`, nothing re-invoked;
 * - cf-1#1 "and when does the money come back?" (gold refund-timelines):
 *   card-freeze#1 has and/does/the (3), refund-timelines#2 only "the" → card
 *   list [card-freeze, refund-timelines], graph rank 2 = raw rank 2, a miss at
 *   1; the oracle "How long do refunds take?" is refund-timelines' title →
 *   rank 1 → `rewrite_lost_it`, one call;
 * - cf-3#0 "do ATM withdrawals still work?" (gold refund-timelines): only
 *   card-freeze sections share words (atm, withdrawals, still) → graph rank
 *   none; the oracle adds "card", which refund-timelines#1's heading "Card
 *   refunds" has → rank 2, still a miss → `retriever_lost_it`, one call.
 * Two counterfactual retriever calls in all.
 */
import { spawnSync } from "node:child_process";
import { cp, mkdir, readdir, readFile, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Report } from "../../src/eval/report/types.js";
import { tempDir } from "../helpers/chroma.js";
import { ROOT, runCli } from "../helpers/cli.js";
import { MINI_KB } from "../helpers/fixtures.js";

const CASES = [
  {
    id: "cf-1",
    locale: "en",
    kind: "golden",
    turns: [
      { user: "how do I freeze my card?", must_cite_one_of: ["card-freeze"], expect: "answer" },
      {
        user: "and when does the money come back?",
        standalone: "How long do refunds take?",
        must_cite_one_of: ["refund-timelines"],
        expect: "answer",
      },
    ],
  },
  {
    id: "cf-3",
    locale: "en",
    kind: "golden",
    turns: [
      {
        user: "do ATM withdrawals still work?",
        standalone: "Do ATM withdrawals still work when my card is frozen?",
        must_cite_one_of: ["refund-timelines"],
        expect: "answer",
      },
    ],
  },
];
/** [turn, attribution, graph rank, raw rank, oracle rank, calls], by hand (file comment). */
const EXPECTED = [
  ["cf-1#0", "ok", 1, 1, null, 0],
  ["cf-1#1", "rewrite_lost_it", 2, 2, 1, 1],
  ["cf-3#0", "retriever_lost_it", null, null, 2, 1],
];
const env = { RETRACE_EXAMPLE_KB: MINI_KB, RETRACE_LOG: "warn" };
const NOT_A_BUG = /internal error|This is a bug in retrace|\n {4}at /;

let dir: string;
let cleanup: () => Promise<void>;
let cases: string;
beforeAll(async () => {
  ({ dir, cleanup } = await tempDir("ts-modules"));
  cases = path.join(dir, "cases.jsonl");
  await writeFile(cases, CASES.map((c) => JSON.stringify(c)).join("\n") + "\n");
});
afterAll(async () => cleanup());

const rows = (r: Report) =>
  r.turns.map((t) => [
    `${t.caseId}#${t.turn}`,
    t.queries?.attribution ?? t.queriesOff?.reason ?? null,
    t.queries?.graph.rank ?? null,
    t.queries?.raw.rank ?? null,
    t.queries?.standalone?.rank ?? null,
    t.counterfactualCalls ?? null,
  ]);

async function evalJson(
  args: string[],
  opts: { cwd?: string; bin?: string; env?: Record<string, string> } = {},
): Promise<Report> {
  const r = await runCli(args, {
    env: { ...env, ...opts.env },
    ...(opts.cwd !== undefined ? { cwd: opts.cwd } : {}),
    ...(opts.bin !== undefined ? { bin: opts.bin } : {}),
    timeoutMs: 180_000,
  });
  expect(r.stderr).not.toMatch(NOT_A_BUG);
  expect(r.exitCode, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Report;
}

describe("a .ts graph with --counterfactual (one @langchain/core on disk, the checkout's)", () => {
  const args = () => [
    "eval",
    "--graph",
    "examples/custom-retriever.ts",
    "--kb",
    MINI_KB,
    "--cases",
    cases,
    "--counterfactual",
    "-k",
    "1",
    "--json",
  ];

  it("the compiled CLI attributes every gold-bearing turn, re-invoking the graph's own retriever", async () => {
    const report = await evalJson(args());
    expect(rows(report)).toEqual(EXPECTED);
    expect(report.queryAttribution).toMatchObject({ enabled: true, retrieverCalls: 2 });
    expect(report.turns.some((t) => t.queriesOff !== undefined)).toBe(false);
  }, 180_000);

  it("so does the TypeScript source run by tsx (`npm run retrace`)", async () => {
    const tsxCli = path.join(ROOT, "node_modules", "tsx", "dist", "cli.mjs");
    const report = await evalJson([path.join(ROOT, "src", "cli", "run.ts"), ...args()], { bin: tsxCli });
    expect(rows(report)).toEqual(EXPECTED);
  }, 180_000);
});

/** A project at `<dir>/<name>` with its own copies of @langchain/core and LangGraph, the example graph, and package.json `type`. */
async function projectWithOwnLangChain(name: string, type: "module" | "commonjs"): Promise<string> {
  const root = path.join(dir, name);
  const from = path.join(ROOT, "node_modules");
  const own = ["@langchain/core", "@langchain/langgraph", "@langchain/langgraph-checkpoint"];
  for (const pkg of own) await cp(path.join(from, pkg), path.join(root, "node_modules", pkg), { recursive: true });
  for (const entry of await readdir(from)) {
    if (entry.startsWith(".")) continue;
    const subs = entry.startsWith("@") ? (await readdir(path.join(from, entry))).map((s) => `${entry}/${s}`) : [entry];
    for (const pkg of subs) {
      if (own.includes(pkg)) continue;
      await mkdir(path.dirname(path.join(root, "node_modules", pkg)), { recursive: true });
      await symlink(path.join(from, pkg), path.join(root, "node_modules", pkg), "dir");
    }
  }
  await writeFile(path.join(root, "package.json"), JSON.stringify({ name, private: true, type }));
  await cp(path.join(ROOT, "examples", "custom-retriever.ts"), path.join(root, "agent.ts"));
  await cp(path.join(ROOT, "examples", "lib"), path.join(root, "lib"), { recursive: true });
  // The precondition, checked for real: from the project, @langchain/core and LangGraph resolve to its copies, not the checkout's.
  for (const spec of ["@langchain/core/retrievers", "@langchain/langgraph"]) {
    const r = spawnSync(
      process.execPath,
      ["--input-type=module", "-e", `process.stdout.write(import.meta.resolve(${JSON.stringify(spec)}))`],
      { cwd: root, encoding: "utf8" },
    );
    expect(r.stdout.startsWith(`file://${root}/node_modules/`), `${spec} → ${r.stdout} ${r.stderr}`).toBe(true);
  }
  return root;
}

describe.each([
  ["module" as const, "an ESM project"],
  ["commonjs" as const, "a CommonJS project (tsx compiles its .ts files to CommonJS)"],
])("the project's own @langchain/core and LangGraph: %s (%s)", (type, _what) => {
  let project: string;
  beforeAll(async () => {
    project = await projectWithOwnLangChain(`own-${type}`, type);
    // --judge: the project's own FakeListChatModel; --id-map and --input: TypeScript modules of the project.
    await writeFile(
      path.join(project, "judge.ts"),
      `import { FakeListChatModel } from "@langchain/core/utils/testing";\nexport default function judge(): FakeListChatModel {\n  return new FakeListChatModel({ responses: ['{"score": 1, "reason": "every claim is in the card"}'] });\n}\n`,
    );
    await writeFile(
      path.join(project, "idmap.ts"),
      `import { appendFileSync } from "node:fs";\nimport type { DocumentInterface } from "@langchain/core/documents";\nexport function toId(doc: DocumentInterface): string {\n  appendFileSync(process.env.IDMAP_LOG as string, \`\${doc.id}\\n\`);\n  return String(doc.id).split("#")[0] as string;\n}\n`,
    );
    // Step grouping and MemorySaver detection: two retrievers searched in parallel (one step, two calls) in a graph compiled with the project's own MemorySaver, whose threads are listed at exit.
    await writeFile(
      path.join(project, "fanout.ts"),
      [
        `import { appendFileSync } from "node:fs";`,
        `import { AIMessage, HumanMessage } from "@langchain/core/messages";`,
        `import { END, MemorySaver, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";`,
        `import { WordOverlapRetriever } from "./agent.js";`,
        `import { loadCardDocuments } from "./lib/cards.js";`,
        `const docs = loadCardDocuments(process.env.RETRACE_EXAMPLE_KB as string);`,
        `const freeze = new WordOverlapRetriever(docs.filter((d) => d.metadata.parentId === "card-freeze"));`,
        `const refunds = new WordOverlapRetriever(docs.filter((d) => d.metadata.parentId === "refund-timelines"));`,
        `const saver = new MemorySaver();`,
        `process.on("exit", () => appendFileSync(process.env.THREADS_LOG as string, JSON.stringify(Object.keys(saver.storage))));`,
        `export const graph = new StateGraph(MessagesAnnotation)`,
        `  .addNode("search", async (s, config) => {`,
        `    const last = [...s.messages].reverse().find((m) => HumanMessage.isInstance(m));`,
        `    const q = String(last?.content ?? "");`,
        `    const [a, b] = await Promise.all([freeze.invoke(q, config), refunds.invoke(q, config)]);`,
        `    return { messages: [new AIMessage(\`found \${a.length + b.length}\`)] };`,
        `  })`,
        `  .addEdge(START, "search").addEdge("search", END).compile({ checkpointer: saver });`,
      ].join("\n"),
    );
    await writeFile(
      path.join(project, "input.ts"),
      `import { HumanMessage } from "@langchain/core/messages";\nexport default function toInput(turn: { user: string; standalone?: string }) {\n  return { messages: [new HumanMessage(turn.standalone ?? turn.user)] };\n}\n`,
    );
  }, 120_000);

  it("--counterfactual re-invokes the graph's retriever of the project's copy: the same attributions", async () => {
    const report = await evalJson(
      ["eval", "--graph", "agent.ts", "--kb", MINI_KB, "--cases", cases, "--counterfactual", "-k", "1", "--json"],
      { cwd: project },
    );
    expect(rows(report)).toEqual(EXPECTED);
    // Captured through the project's callbacks, its MemorySaver-less graph given retrace's in-memory checkpointer: turn 1 of cf-1 ran on turn 0's thread.
    expect(report.run.graph).toMatchObject({ retrievers: ["WordOverlapRetriever"], errors: 0, noRetrieval: 0 });
  }, 180_000);

  it("parallel calls of the project's retrievers are one step, both scored and both re-invoked; its own MemorySaver's finished threads are deleted", async () => {
    // By hand, each retriever over one card's sections (freeze searched first): cf-1#0 finds card-freeze in both's lists' first (hit);
    // cf-1#1 gets [card-freeze, refund-timelines] from the raw message ("and", "the") and from the oracle ("how", "refunds" in
    // card-freeze's sections) → a miss at 1 both ways; cf-3#0's raw message reaches card-freeze only, the oracle adds "card"
    // (refund-timelines' "Card refunds") → rank 2. The graph's query of two calls is theirs joined ("q | q"), not the raw
    // message, so the raw message is retrieved again too: cf-1#0 hits both ways (`rewrite_not_needed`), 2 calls (one per
    // retriever); the turns with an oracle 4.
    const threads = path.join(project, "threads.log");
    await writeFile(threads, "");
    const report = await evalJson(
      ["eval", "--graph", "fanout.ts", "--kb", MINI_KB, "--cases", cases, "--counterfactual", "-k", "1", "--json"],
      { cwd: project, env: { THREADS_LOG: threads } },
    );
    expect(
      report.turns.map((t) => [
        t.captured?.topLevelRuns,
        t.captured?.steps,
        t.captured?.retrievers.length,
        t.retrievedIds,
      ]),
    ).toEqual([
      [2, 1, 2, ["card-freeze"]],
      [2, 1, 2, ["card-freeze"]],
      [2, 1, 2, ["card-freeze"]],
    ]);
    expect(rows(report)).toEqual([
      ["cf-1#0", "rewrite_not_needed", 1, 1, null, 2],
      ["cf-1#1", "retriever_lost_it", 2, 2, 2, 4],
      ["cf-3#0", "retriever_lost_it", null, null, 2, 4],
    ]);
    // The graph's own checkpointer was recognised as in-memory: no thread of the two cases is left in it at exit.
    expect(JSON.parse(await readFile(threads, "utf8"))).toEqual([]);
  }, 180_000);

  it("a .ts --judge of the project's copy grades every answer; .ts --input and --id-map are used", async () => {
    const log = path.join(project, "idmap.log");
    await writeFile(log, "");
    const report = await evalJson(
      [
        "eval",
        "--graph",
        "agent.ts",
        "--kb",
        MINI_KB,
        "--cases",
        cases,
        "--config",
        '{"run":{"judge":"judge.ts"}}',
        "--input",
        "input.ts",
        "--id-map",
        "idmap.ts#toId",
        "--counterfactual",
        "-k",
        "1",
        "--json",
      ],
      { cwd: project, env: { IDMAP_LOG: log } },
    );
    expect(report.judge).toMatchObject({ model: "FakeListChatModel", unparsable: 0 });
    expect(report.turns.map((t) => t.results.find((x) => x.key === "groundedness"))).toEqual(
      CASES.flatMap((c) => c.turns).map(() => ({
        key: "groundedness",
        score: 1,
        comment: "every claim is in the card",
      })),
    );
    // --input sends the oracle when a turn has one: cf-1#1's graph query is "How long do refunds take?" (rank 1, the raw message's 2: rescued).
    const t1 = report.turns.find((t) => t.caseId === "cf-1" && t.turn === 1)!;
    expect(t1.queries).toMatchObject({
      attribution: "rewrite_rescued_it",
      graph: { query: "How long do refunds take?", rank: 1 },
      raw: { rank: 2 },
    });
    // --id-map ran on the retrieved sections (their Document.id is card#section).
    const mapped = (await readFile(log, "utf8")).split("\n").filter((l) => l !== "");
    expect(mapped).toContain("card-freeze#2");
    expect(mapped.every((l) => /^[a-z-]+#\d+$/.test(l))).toBe(true);
  }, 180_000);
});

describe("refusals and failing modules: exit 2 naming the module, never an internal error", () => {
  let project: string;
  beforeAll(async () => {
    project = path.join(dir, "failing");
    await mkdir(project, { recursive: true });
    await writeFile(
      path.join(project, "package.json"),
      JSON.stringify({ name: "failing", private: true, type: "module" }),
    );
    await symlink(path.join(ROOT, "node_modules"), path.join(project, "node_modules"), "dir");
    // A graph whose only retriever run is reported through callbacks alone: no retriever instance to invoke again.
    await writeFile(
      path.join(project, "callbacks-only.ts"),
      [
        `import { CallbackManager } from "@langchain/core/callbacks/manager";`,
        `import { Document } from "@langchain/core/documents";`,
        `import { AIMessage } from "@langchain/core/messages";`,
        `import type { RunnableConfig } from "@langchain/core/runnables";`,
        `import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";`,
        `export const graph = new StateGraph(MessagesAnnotation)`,
        `  .addNode("search", async (_s, config: RunnableConfig) => {`,
        `    const cm = await CallbackManager.configure(config.callbacks);`,
        `    const run = await cm?.handleRetrieverStart({ lc: 1, type: "not_implemented", id: ["CallbacksOnlySearch"] }, "q");`,
        `    await run?.handleRetrieverEnd([new Document({ pageContent: "x", metadata: { parentId: "card-freeze" } })]);`,
        `    return { messages: [new AIMessage("done")] };`,
        `  })`,
        `  .addEdge(START, "search").addEdge("search", END).compile();`,
      ].join("\n"),
    );
    const throwsOnLoad = (what: string) =>
      `const key: string | undefined = process.env.NO_SUCH_KEY;\nif (key === undefined) throw new Error("NO_SUCH_KEY is not set (${what})");\nexport default key;\nexport const graph = key;\n`;
    await writeFile(path.join(project, "graph-throws.ts"), throwsOnLoad("graph"));
    await writeFile(path.join(project, "idmap-throws.ts"), throwsOnLoad("id map"));
    await writeFile(path.join(project, "input-throws.mts"), throwsOnLoad("input"));
    await writeFile(path.join(project, "judge-throws.ts"), throwsOnLoad("judge"));
    // What `() => new ChatOpenAI()` does without OPENAI_API_KEY: the factory throws.
    await writeFile(
      path.join(project, "judge-factory-throws.ts"),
      `export default function judge(): never {\n  throw new Error("OpenAI or Azure OpenAI API key or Token Provider not found");\n}\n`,
    );
    await writeFile(
      path.join(project, "gen.ts"),
      `export const name = "ts-gen";\nexport default function generate(card: { title: string }): { user: string }[] {\n  return [{ user: \`Tell me about \${card.title.toLowerCase()}\` }];\n}\n`,
    );
    await writeFile(
      path.join(project, "gen-throws.ts"),
      `export default function generate(card: { id: string }): never {\n  throw new Error(\`no model for \${card.id}\`);\n}\n`,
    );
  });

  const run = (args: string[]) => runCli(args, { cwd: project, env, timeoutMs: 120_000 });

  it("--counterfactual on a graph none of whose scored retriever runs can be re-invoked: exit 2 with the reason; without it, exit 0", async () => {
    // The deciding turn is the first in dataset order at any concurrency: the same exit and the same message.
    for (const concurrency of ["1", "4"]) {
      const r = await run([
        "eval",
        "--graph",
        "callbacks-only.ts",
        "--kb",
        MINI_KB,
        "--cases",
        cases,
        "--counterfactual",
        "--config",
        JSON.stringify({ run: { concurrency: concurrency } }),
      ]);
      expect(r.exitCode, `--concurrency ${concurrency}`).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr).toContain(
        "retrace: --counterfactual: the graph's scored retriever CallbacksOnlySearch cannot be re-invoked (case cf-1 turn 0, the first gold-bearing turn with a retriever run)",
      );
      expect(r.stderr).not.toMatch(NOT_A_BUG);
    }
    const control = await run(["eval", "--graph", "callbacks-only.ts", "--kb", MINI_KB, "--cases", cases, "--json"]);
    expect(control.exitCode, control.stderr).toBe(0);
    expect((JSON.parse(control.stdout) as Report).run.graph).toMatchObject({ retrievers: ["CallbacksOnlySearch"] });
  }, 120_000);

  it.each([
    [
      "a --graph module that throws while loading",
      ["--graph", "graph-throws.ts"],
      "--graph graph-throws.ts#graph: the module threw while loading: NO_SUCH_KEY is not set (graph)",
    ],
    [
      "an --id-map module that throws while loading",
      ["--graph", "callbacks-only.ts", "--id-map", "idmap-throws.ts"],
      "--id-map idmap-throws.ts#default: the module threw while loading: NO_SUCH_KEY is not set (id map)",
    ],
    [
      "an --input module that throws while loading",
      ["--graph", "callbacks-only.ts", "--input", "input-throws.mts"],
      "--input input-throws.mts#default: the module threw while loading: NO_SUCH_KEY is not set (input)",
    ],
    [
      "a --judge module that throws while loading",
      ["--graph", "callbacks-only.ts", "--config", '{"run":{"judge":"judge-throws.ts"}}'],
      "--judge judge-throws.ts: the module threw while loading: NO_SUCH_KEY is not set (judge)",
    ],
    [
      "a --judge factory that throws (a chat model without its API key)",
      ["--graph", "callbacks-only.ts", "--config", '{"run":{"judge":"judge-factory-throws.ts"}}'],
      "--judge judge-factory-throws.ts: the factory threw while building the chat model: OpenAI or Azure OpenAI API key or Token Provider not found",
    ],
  ])(
    "%s",
    async (_name, args, message) => {
      const r = await run(["eval", ...args, "--kb", MINI_KB, "--cases", cases]);
      expect(r.stderr).not.toMatch(NOT_A_BUG);
      expect(r.stderr).toContain(`retrace: ${message}`);
      expect(r.exitCode).toBe(2);
    },
    120_000,
  );

  it("a module file that does not exist: exit 2 with the closest module file of its folder", async () => {
    const r = await run(["eval", "--graph", "./callbacks-onyl.ts", "--kb", MINI_KB, "--cases", cases]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(
      "retrace: --graph ./callbacks-onyl.ts#graph: the file ./callbacks-onyl.ts does not exist; did you mean ./callbacks-only.ts?",
    );
    const far = await run(["eval", "--graph", "nothing-like-it.ts", "--kb", MINI_KB, "--cases", cases]);
    expect(far.exitCode).toBe(2);
    expect(far.stderr).not.toContain("did you mean");
  }, 60_000);

  it("cases synth --generator takes a .ts module; one whose function throws is exit 2 naming it", async () => {
    const ok = await run([
      "cases",
      "synth",
      "--kb",
      MINI_KB,
      "--config",
      '{"run":{"seed":1}}',
      "--generator",
      "gen.ts",
    ]);
    expect(ok.exitCode, ok.stderr).toBe(0);
    const made = ok.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { origin: { generator: string }; turns: { user: string }[] });
    expect(made.length).toBeGreaterThan(0);
    expect(made[0]!.origin.generator).toBe("ts-gen");
    expect(made.map((c) => c.turns[0]!.user)).toContain("Tell me about freeze or unfreeze your card");
    const bad = await run(["cases", "synth", "--kb", MINI_KB, "--generator", "gen-throws.ts"]);
    expect(bad.stderr).not.toMatch(NOT_A_BUG);
    expect(bad.stderr).toMatch(
      /retrace: --generator gen-throws\.ts: the generator threw on card [a-z-]+: no model for [a-z-]+/,
    );
    expect(bad.exitCode).toBe(2);
  }, 120_000);
});
