/**
 * Messages about the user's code point into it (src/user-module.ts
 * `userFrame`, docs/gates-and-exit-codes.md, "Errors in your modules"): a
 * module that throws while loading, or a factory that throws while building,
 * is exit 2 naming the option and the module as before, and the message ends
 * with `(at file:line:column)`, the first frame of the stack in the user's
 * own files — for a `.ts`/`.mts` module the line of the source (type-only
 * lines above the throw, which the transpiled code no longer has), also when
 * the throw is inside a library the user's code called (a tiny local
 * package, `tiny-model`, in the temp project's node_modules). Through the
 * real bin, on `--graph`, `--judge`, `--id-map` and `cases synth --generator`;
 * and an `--input` or `--id-map` function that throws when called is exit 2
 * the same way (it was an internal error, exit 70).
 *
 * The expected positions are read off the fixtures below (V8 puts the frame
 * of `new X()` at the `new`):
 * - importThrows(): line 10 is `if (key === undefined) throw new Error(…)`:
 *   23 characters before `throw`, `throw ` is 6 more → `new` at column 30;
 *   the `.mjs` form keeps the same lines with comments for the types;
 *   compiled by TypeScript to `.mjs` with an inline source map, the frame is
 *   the source's (the compiled file has the throw on another line, checked);
 * - graph-core.ts: line 8 is `const prompts: Prompts = { grade: PromptTemplate.fromTemplate(…) }`,
 *   a call, whose frame V8 puts at the method name: `const prompts: Prompts = { grade: `
 *   is 34 characters, `PromptTemplate.` 15 more → column 50;
 * - calledThrows(): line 6 is `  throw new Error(…)` → `new` at column 9;
 * - libraryCall(): line 8 is `  const model: TinyModel = new TinyModel();`:
 *   `  const model: TinyModel = ` is 27 characters → `new` at column 28.
 */
import { spawnSync } from "node:child_process";
import { mkdir, realpath, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "../helpers/chroma.js";
import { ROOT, runCli } from "../helpers/cli.js";
import { MINI_KB } from "../helpers/fixtures.js";

const CASES = [
  {
    id: "c-1",
    locale: "en",
    kind: "golden",
    turns: [{ user: "how do I freeze my card?", must_cite_one_of: ["card-freeze"], expect: "answer" }],
  },
];
const env = { RETRACE_LOG: "warn" };
const NOT_A_BUG = /internal error|This is a bug in retrace/;

/** A module that throws while loading at line 10, column 30, below lines a transpiler drops (`.mjs`: the same lines as comments). */
function importThrows(what: string, typed: boolean): string {
  return [
    `// A module that throws while loading (${what}).`,
    typed ? "interface Settings {" : "// Settings {",
    typed ? "  key: string | undefined;" : "//   key",
    typed ? "}" : "// }",
    "",
    typed ? "type Maybe<T> = T | undefined;" : "// Maybe<T>",
    "",
    `const settings${typed ? ": Settings" : ""} = { key: process.env.NO_SUCH_KEY };`,
    `const key${typed ? ": Maybe<string>" : ""} = settings.key;`,
    `if (key === undefined) throw new Error("NO_SUCH_KEY is not set (${what})");`,
    "export const graph = key;",
    "export default key;",
    "",
  ].join("\n");
}

/** A factory whose library call throws inside tiny-model; the user's frame is line 8, column 28. */
function libraryCall(exportLine: string): string {
  return [
    `import { TinyModel } from "tiny-model";`,
    "",
    "interface Options {",
    "  temperature: number;",
    "}",
    "",
    exportLine,
    "  const model: TinyModel = new TinyModel();",
    "  return model;",
    "}",
    "",
  ].join("\n");
}

/** A function export that throws when retrace calls it, at line 6, column 9. */
function calledThrows(what: string, params: string): string {
  return [
    `// A ${what} that throws when called.`,
    "interface Why {",
    "  reason: string;",
    "}",
    `export default function ${what.replace(/ /g, "")}(${params}): never {`,
    `  throw new Error("${what} broke");`,
    "}",
    "",
  ].join("\n");
}

describe("a user module that throws: the message shows the first frame in the user's file", () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let project: string;
  let cases: string;
  beforeAll(async () => {
    ({ dir, cleanup } = await tempDir("user-frames"));
    // Stacks carry real paths (a temp folder may be behind a symlink).
    project = path.join(await realpath(dir), "project");
    await mkdir(path.join(project, "node_modules", "tiny-model"), { recursive: true });
    await mkdir(path.join(project, "cjs"));
    await mkdir(path.join(project, "sub"));
    await writeFile(path.join(project, "package.json"), JSON.stringify({ name: "frames", type: "module" }));
    // No "type": tsx compiles a .ts file here to CommonJS (its CommonJS hook).
    await writeFile(path.join(project, "cjs", "package.json"), JSON.stringify({ name: "frames-cjs" }));
    await symlink(path.join(ROOT, "node_modules", "@langchain"), path.join(project, "node_modules", "@langchain"));
    await writeFile(
      path.join(project, "node_modules", "tiny-model", "package.json"),
      JSON.stringify({ name: "tiny-model", version: "1.0.0", type: "module", exports: "./index.js" }),
    );
    // The throw is two frames deep in the library, as `new ChatOpenAI()` without its key.
    await writeFile(
      path.join(project, "node_modules", "tiny-model", "index.js"),
      [
        "function requireKey(name) {",
        "  throw new Error(`${name} is not set`);",
        "}",
        "export class TinyModel {",
        "  constructor() {",
        '    requireKey("TINY_API_KEY");',
        "  }",
        "}",
        "",
      ].join("\n"),
    );
    await writeFile(
      path.join(project, "graph-ok.mjs"),
      [
        `import { AIMessage } from "@langchain/core/messages";`,
        `import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";`,
        `export const graph = new StateGraph(MessagesAnnotation).addNode("answer", async () => ({ messages: [new AIMessage("done")] })).addEdge(START, "answer").addEdge("answer", END).compile();`,
        "",
      ].join("\n"),
    );
    // A graph with one retriever run, whose documents an --id-map function is called on.
    await writeFile(
      path.join(project, "graph-retriever.mjs"),
      [
        `import { Document } from "@langchain/core/documents";`,
        `import { AIMessage } from "@langchain/core/messages";`,
        `import { BaseRetriever } from "@langchain/core/retrievers";`,
        `import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";`,
        `class OneCard extends BaseRetriever { lc_namespace = ["test"]; async _getRelevantDocuments() { return [new Document({ pageContent: "x", metadata: { parentId: "card-freeze" } })]; } }`,
        `const retriever = new OneCard();`,
        `export const graph = new StateGraph(MessagesAnnotation).addNode("answer", async () => { await retriever.invoke("q"); return { messages: [new AIMessage("done")] }; }).addEdge(START, "answer").addEdge("answer", END).compile();`,
        "",
      ].join("\n"),
    );
    await writeFile(path.join(project, "input-called.ts"), calledThrows("input mapper", "turn: { user: string }"));
    await writeFile(
      path.join(project, "idmap-called.mts"),
      calledThrows("id map", "doc: { metadata: Record<string, unknown> }"),
    );
    await writeFile(path.join(project, "graph-throws.ts"), importThrows("graph", true));
    await writeFile(path.join(project, "graph-throws.mjs"), importThrows("graph", false));
    await writeFile(path.join(project, "cjs", "graph-throws.ts"), importThrows("graph", true));
    // A module compiled to .mjs carrying its source map: shown at its source, which need not exist on disk.
    const compiled = ts.transpileModule(importThrows("graph", true), {
      fileName: "graph-compiled.ts",
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, inlineSourceMap: true },
    }).outputText;
    expect(compiled.split("\n").findIndex((l) => l.includes("throw new Error")) + 1).not.toBe(10);
    await mkdir(path.join(project, "compiled"));
    await writeFile(path.join(project, "compiled", "graph-compiled.mjs"), compiled);
    await writeFile(path.join(project, "idmap-throws.mts"), importThrows("id map", true));
    await writeFile(path.join(project, "judge-throws.mjs"), importThrows("judge", false));
    await writeFile(
      path.join(project, "graph-core.ts"),
      [
        `import { PromptTemplate } from "@langchain/core/prompts";`,
        "",
        "interface Prompts {",
        "  grade: PromptTemplate;",
        "}",
        "",
        "// LangChain's own template parser throws on the unclosed brace, while the module loads.",
        `const prompts: Prompts = { grade: PromptTemplate.fromTemplate("grade {answer") };`,
        "export const graph = prompts;",
        "",
      ].join("\n"),
    );
    await writeFile(
      path.join(project, "graph-factory.ts"),
      libraryCall("export async function graph(options: Options = { temperature: 0 }): Promise<TinyModel> {"),
    );
    await writeFile(
      path.join(project, "judge-factory.ts"),
      libraryCall("export default function judge(options: Options = { temperature: 0 }): TinyModel {"),
    );
    await writeFile(
      path.join(project, "gen-throws.ts"),
      libraryCall(
        "export default function generate(card: { id: string }, options: Options = { temperature: 0 }): TinyModel {",
      ),
    );
    cases = path.join(project, "cases.jsonl");
    await writeFile(cases, CASES.map((c) => JSON.stringify(c)).join("\n") + "\n");
    // The fixture graph itself loads and runs (a control: the failures below are the modules under test).
    for (const graph of ["graph-ok.mjs", "graph-retriever.mjs"]) {
      const ok = spawnSync(
        process.execPath,
        [path.join(ROOT, "bin", "retrace.mjs"), "eval", "--graph", graph, "--kb", MINI_KB, "--cases", cases],
        { cwd: project, env: { ...process.env, ...env }, encoding: "utf8" },
      );
      expect(ok.status, ok.stderr).toBe(0);
    }
  }, 120_000);
  afterAll(async () => cleanup());

  const run = (args: string[], cwd = project) => runCli(args, { cwd, env, timeoutMs: 120_000 });

  it.each([
    [
      "a .ts --graph module (ESM)",
      ["--graph", "graph-throws.ts"],
      "--graph graph-throws.ts#graph: the module threw while loading: NO_SUCH_KEY is not set (graph) (at graph-throws.ts:10:30)",
    ],
    [
      "a .ts --graph module (CommonJS)",
      ["--graph", "cjs/graph-throws.ts"],
      "--graph cjs/graph-throws.ts#graph: the module threw while loading: NO_SUCH_KEY is not set (graph) (at cjs/graph-throws.ts:10:30)",
    ],
    [
      "a .mjs --graph module",
      ["--graph", "graph-throws.mjs"],
      "--graph graph-throws.mjs#graph: the module threw while loading: NO_SUCH_KEY is not set (graph) (at graph-throws.mjs:10:30)",
    ],
    [
      "a .mjs --graph module compiled from TypeScript with a source map",
      ["--graph", "compiled/graph-compiled.mjs"],
      "--graph compiled/graph-compiled.mjs#graph: the module threw while loading: NO_SUCH_KEY is not set (graph) (at compiled/graph-compiled.ts:10:30)",
    ],
    [
      "an .mts --id-map module",
      ["--graph", "graph-ok.mjs", "--id-map", "idmap-throws.mts"],
      "--id-map idmap-throws.mts#default: the module threw while loading: NO_SUCH_KEY is not set (id map) (at idmap-throws.mts:10:30)",
    ],
    [
      "a .mjs --judge module",
      ["--graph", "graph-ok.mjs", "--config", '{"run":{"judge":"judge-throws.mjs"}}'],
      "--judge judge-throws.mjs: the module threw while loading: NO_SUCH_KEY is not set (judge) (at judge-throws.mjs:10:30)",
    ],
    [
      "a .ts --graph module whose @langchain/core call throws while loading",
      ["--graph", "graph-core.ts"],
      "--graph graph-core.ts#graph: the module threw while loading: Unclosed '{' in template. (at graph-core.ts:8:50)",
    ],
    [
      "a --graph factory whose library call throws",
      ["--graph", "graph-factory.ts"],
      "--graph graph-factory.ts#graph: the factory threw while building the graph: TINY_API_KEY is not set (at graph-factory.ts:8:28)",
    ],
    [
      "a --judge factory whose library call throws",
      ["--graph", "graph-ok.mjs", "--config", '{"run":{"judge":"judge-factory.ts"}}'],
      "--judge judge-factory.ts: the factory threw while building the chat model: TINY_API_KEY is not set (at judge-factory.ts:8:28)",
    ],
  ])(
    "%s: exit 2, the module named, the user's file:line:column",
    async (_name, args, message) => {
      const r = await run(["eval", ...args, "--kb", MINI_KB, "--cases", cases]);
      expect(r.stderr).not.toMatch(NOT_A_BUG);
      expect(r.stderr).toBe(`retrace: ${message}\n`);
      expect(r.exitCode).toBe(2);
    },
    120_000,
  );

  it.each([
    [
      "an --input function",
      ["--graph", "graph-retriever.mjs", "--input", "input-called.ts"],
      "--input input-called.ts#default: the function threw on case c-1 turn 0: input mapper broke (at input-called.ts:6:9)",
    ],
    [
      "an --id-map function",
      ["--graph", "graph-retriever.mjs", "--id-map", "idmap-called.mts"],
      "--id-map idmap-called.mts#default: the function threw on a retrieved document: id map broke (at idmap-called.mts:6:9)",
    ],
  ])(
    "%s that throws when called: exit 2 naming the module and the user's line (not an internal error), at any concurrency",
    async (_name, args, message) => {
      for (const concurrency of ["1", "4"]) {
        const r = await run([
          "eval",
          ...args,
          "--kb",
          MINI_KB,
          "--cases",
          cases,
          "--config",
          JSON.stringify({ run: { concurrency: concurrency } }),
        ]);
        expect(r.stderr, `--concurrency ${concurrency}`).not.toMatch(NOT_A_BUG);
        expect(r.stderr).toContain(`retrace: ${message}\n`);
        expect(r.exitCode).toBe(2);
      }
    },
    120_000,
  );

  it("cases synth --generator whose library call throws: the generator's line", async () => {
    const r = await run(["cases", "synth", "--kb", MINI_KB, "--generator", "gen-throws.ts"]);
    expect(r.stderr).not.toMatch(NOT_A_BUG);
    expect(r.stderr).toMatch(
      /^retrace: --generator gen-throws\.ts: the generator threw on card [a-z-]+: TINY_API_KEY is not set \(at gen-throws\.ts:8:28\)\n$/,
    );
    expect(r.exitCode).toBe(2);
  }, 120_000);

  it("a module outside the working directory: its absolute path", async () => {
    const r = await run(
      ["eval", "--graph", "../graph-throws.ts", "--kb", MINI_KB, "--cases", cases],
      path.join(project, "sub"),
    );
    expect(r.stderr).toBe(
      `retrace: --graph ../graph-throws.ts#graph: the module threw while loading: NO_SUCH_KEY is not set (graph) (at ${path.join(project, "graph-throws.ts")}:10:30)\n`,
    );
    expect(r.exitCode).toBe(2);
  }, 120_000);

  it("--verbose: the full stack still follows, the cause's frames source-mapped", async () => {
    const r = await run(["eval", "--graph", "graph-factory.ts", "--kb", MINI_KB, "--cases", cases, "--verbose"]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(
      "retrace: --graph graph-factory.ts#graph: the factory threw while building the graph: TINY_API_KEY is not set (at graph-factory.ts:8:28)\n",
    );
    expect(r.stderr).toContain("caused by: Error: TINY_API_KEY is not set");
    const cause = r.stderr.slice(r.stderr.indexOf("caused by: Error: TINY_API_KEY is not set"));
    // The library's frames, then the user's, as Node prints them.
    expect(cause).toContain(`${path.join(project, "node_modules", "tiny-model", "index.js")}:2:9`);
    expect(cause).toContain(`${path.join(project, "graph-factory.ts")}:8:28`);
  }, 120_000);
});
