/**
 * The package as another project gets it: `npm pack`, then a real
 * `npm install` of the tarball into an empty project that brings its own
 * @langchain/core and @langchain/langgraph, from a registry on 127.0.0.1 that
 * serves this repository's locked packages out of the npm cache (no network;
 * test/helpers/local-registry.ts). The install prints no npm warning. Then a
 * plain .mjs uses it with no TypeScript loader; with TypeScript's default
 * checks (`strict`, `skipLibCheck` false, @types/node installed) a file
 * importing every entry point and a .ts consumer type-check under NodeNext and
 * Bundler resolution; every code block of README.md and docs/ that imports
 * the package is compiled, and run when marked `<!-- snippet: run -->`
 * (test/helpers/doc-snippets.ts); and the installed bin runs.
 *
 * What a consumer meets on this machine (Debian 12, glibc 2.36, no
 * `overrides`): chromadb's own newest server binding is installed beside the
 * one retrace declares (`.ci/run` fetches the newest into
 * RETRACE_EXTRA_TARBALLS, served beside the lockfile's packages), and the
 * self-started Chroma runs (`retrace eval --kb ./kb`, `retrace label` on two
 * imported conversations); a TypeScript graph under tsx is attributed with
 * `--counterfactual`; and docs/your-graph-in-five-minutes.md, followed
 * literally in another empty folder, gives its numbers.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { cp, mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "../helpers/cli.js";
import { docSnippets } from "../helpers/doc-snippets.js";
import { MINI_KB } from "../helpers/fixtures.js";
import { startLocalRegistry, type LocalRegistry } from "../helpers/local-registry.js";
import { folded, walkthroughSteps } from "../helpers/walkthrough.js";

const rootPkg = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as {
  name: string;
  version: string;
  exports: Record<string, string | { types?: string; default: string }>;
  peerDependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
let tmp: string;
let consumer: string;
let registry: LocalRegistry;
let installLog = "";
/** Tarballs served beside the lockfile's: the packed package itself (for the walkthrough's `npm install retrace-eval`). */
let served: string;
let tarball: string;

/** Every entry point a consumer can import (package.json `exports`, but not ./package.json). */
const entryPoints = Object.keys(rootPkg.exports)
  .filter((k) => k !== "./package.json")
  .map((k) => (k === "." ? rootPkg.name : `${rootPkg.name}/${k.slice(2)}`));
/** The code blocks of README.md and docs/ that import the package (a bad snippet marker fails here, at collection). */
const snippets = docSnippets(ROOT);
const hasJsSnippet = snippets.some((s) => !s.file.endsWith(".ts"));

/** The environment of npm and node children, without the npm_config_* that `npm test` exports. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.toLowerCase().startsWith("npm_")) env[k] = v;
  return { ...env, ...extra };
}

function run(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = cleanEnv()) {
  const r = spawnSync(cmd, args, { cwd, env, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  return { status: r.status, stdout: r.stdout ?? "", stderr: r.stderr ?? "" };
}

/** Like `run`, without blocking the event loop: the local registry is served from this process. */
function runAsync(cmd: string, args: string[], cwd: string): Promise<{ status: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env: cleanEnv(), stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr.on("data", (d: Buffer) => (output += d.toString()));
    child.on("error", reject);
    child.on("close", (status) => resolve({ status, output }));
  });
}

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), "retrace-pack-"));
  if (!existsSync(path.join(ROOT, "dist", "index.js"))) {
    const build = run("npm", ["run", "build"], ROOT);
    if (build.status !== 0) throw new Error(`build failed:\n${build.stdout}${build.stderr}`);
  }
  // dist/ is built by `npm test`'s pretest step; --ignore-scripts keeps pack from rebuilding it.
  served = path.join(tmp, "served");
  await mkdir(served);
  const pack = run("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", served], ROOT);
  if (pack.status !== 0) throw new Error(`npm pack failed:\n${pack.stderr}`);
  tarball = path.join(served, (JSON.parse(pack.stdout) as { filename: string }[])[0]!.filename);

  const extra = process.env.RETRACE_EXTRA_TARBALLS;
  registry = await startLocalRegistry(path.join(ROOT, "package-lock.json"), [
    served,
    ...(extra !== undefined && extra !== "" ? [extra] : []),
  ]);
  consumer = path.join(tmp, "consumer");
  await mkdir(consumer);
  const dev = rootPkg.devDependencies;
  await writeFile(
    path.join(consumer, "package.json"),
    JSON.stringify({
      name: "consumer",
      private: true,
      type: "module",
      dependencies: {
        [rootPkg.name]: `file:${tarball}`,
        "@langchain/core": dev["@langchain/core"],
        "@langchain/langgraph": dev["@langchain/langgraph"],
        typescript: dev.typescript,
        "@types/node": dev["@types/node"],
        // To load the TypeScript graph below (an optional peer of retrace's).
        tsx: dev.tsx,
        // For the LangSmith block of docs/langchain-integration.md (also a dependency of @langchain/core).
        langsmith: dev.langsmith,
        // For the Langfuse upload block of docs/recorded-traces.md.
        "@langfuse/client": dev["@langfuse/client"],
      },
    }),
  );
  for (const f of ["use.mjs", "graph.ts"])
    await cp(path.join(ROOT, "test", "package", "consumer", f), path.join(consumer, f));
  // One namespace import per entry point: tsc then checks every declaration file each one reaches.
  await writeFile(
    path.join(consumer, "entries.ts"),
    `${entryPoints.map((e, i) => `import * as entry${i} from "${e}";`).join("\n")}\n` +
      `export const exported: number[] = [${entryPoints.map((_, i) => `entry${i}`).join(", ")}].map((m) => Object.keys(m).length);\n`,
  );
  await mkdir(path.join(consumer, "snippets"));
  for (const s of snippets) await writeFile(path.join(consumer, s.file), s.source);
  const install = await runAsync(
    "npm",
    [
      "install",
      "--no-audit",
      "--no-fund",
      "--registry",
      registry.url,
      "--cache",
      path.join(tmp, "npm-cache"),
      "--fetch-retries",
      "0",
    ],
    consumer,
  );
  installLog = install.output;
  if (install.status !== 0) throw new Error(`npm install of the tarball failed:\n${installLog}`);
}, 600_000);

afterAll(async () => {
  await registry?.close();
  if (tmp !== undefined) await rm(tmp, { recursive: true, force: true });
});

type Resolution = "NodeNext" | "Bundler";
interface TscError {
  /** As tsc prints it, relative to the consumer ("" for an error of no file). */
  file: string;
  text: string;
}
const typeChecks = new Map<Resolution, { status: number | null; errors: TscError[]; output: string }>();

/**
 * The consumer's `tsc` over graph.ts and entries.ts (and, under NodeNext, the
 * doc snippets, emitted to out/ so the runnable ones can run), with
 * TypeScript's default checks: strict, skipLibCheck and types not set (so
 * every declaration file is checked, and @types/node is picked up as it is
 * installed). Run once per resolution; the tests read its errors by file.
 */
function typeCheck(resolution: Resolution) {
  const done = typeChecks.get(resolution);
  if (done !== undefined) return done;
  const files = ["graph.ts", "entries.ts", ...(resolution === "NodeNext" ? snippets.map((s) => s.file) : [])];
  const compilerOptions = {
    strict: true,
    target: "ES2022",
    module: resolution === "NodeNext" ? "NodeNext" : "ESNext",
    moduleResolution: resolution,
    ...(resolution === "NodeNext" ? { outDir: "out", rootDir: "." } : { noEmit: true }),
    ...(hasJsSnippet && resolution === "NodeNext" ? { allowJs: true, checkJs: true } : {}),
  };
  writeFileSync(path.join(consumer, `tsconfig.${resolution}.json`), JSON.stringify({ compilerOptions, files }));
  const r = run(
    process.execPath,
    [
      path.join(consumer, "node_modules", "typescript", "bin", "tsc"),
      "-p",
      `tsconfig.${resolution}.json`,
      "--pretty",
      "false",
    ],
    consumer,
  );
  const output = r.stdout + r.stderr;
  const errors: TscError[] = [];
  for (const line of output.split("\n")) {
    const m = /^(?:(.+?)\(\d+,\d+\): )?error TS\d+/.exec(line);
    if (m !== null) errors.push({ file: m[1] ?? "", text: line });
    else if (line.startsWith(" ") && errors.length > 0) errors[errors.length - 1]!.text += `\n${line}`;
  }
  const result = { status: r.status, errors, output };
  typeChecks.set(resolution, result);
  return result;
}

/** Module specifiers a declaration file imports (static, re-exported, or in an `import("…")` type). */
function declarationImports(text: string): string[] {
  // Comments first: a doc comment's example (`import { expect } from "vitest"`) is not an import.
  const code = text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
  return [...code.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|^\s*import\s+)["']([^"']+)["']/gm)].map((m) => m[1]!);
}

describe("the packed package in a fresh project", () => {
  it("installs with one copy of LangChain's packages (peer dependencies) and without the optional transformers.js", async () => {
    const installed = path.join(consumer, "node_modules", rootPkg.name);
    expect(JSON.parse(readFileSync(path.join(installed, "package.json"), "utf8")).version).toBe(rootPkg.version);
    // No nested copy under the package: the consumer's own versions are used.
    expect(existsSync(path.join(installed, "node_modules", "@langchain"))).toBe(false);
    expect(existsSync(path.join(consumer, "node_modules", "@huggingface", "transformers"))).toBe(false);
    expect(installLog).not.toMatch(/ERESOLVE|peer dep missing/i);
    // Only compiled JavaScript and declarations ship, no TypeScript sources or tests.
    const top = await readdir(installed);
    expect(top).toContain("dist");
    expect(top).not.toContain("src");
    expect(top).not.toContain("test");
  });

  it("a plain .mjs imports it with no TypeScript loader, retrieves and scores", () => {
    const r = run(process.execPath, ["use.mjs"], consumer);
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    const got = JSON.parse(r.stdout) as Record<string, unknown>;
    expect((got.retrievedIds as string[])[0]).toBe("card-freeze");
    expect(got.stages).toEqual(["dense", "bm25", "fused", "parents"]);
    // Gold at rank 1 of 2: hit 1, recall 1/1, nDCG = (1/log2(2)) / (1/log2(2)) = 1.
    expect(got).toMatchObject({
      hit: 1,
      recall: 1,
      ndcg: 1,
      rootExportsRetrieveNode: "function",
      rootExportsOpenSystem: "function",
    });
  });

  it("installs without any npm warning (the published manifest has no install-time script)", () => {
    expect(installLog.split("\n").filter((line) => /^npm warn/i.test(line.trim()))).toEqual([]);
    const manifest = JSON.parse(
      readFileSync(path.join(consumer, "node_modules", rootPkg.name, "package.json"), "utf8"),
    ) as { scripts?: Record<string, string> };
    for (const script of ["preinstall", "install", "postinstall", "prepare"])
      expect(manifest.scripts?.[script], script).toBeUndefined();
  });

  it("the declarations of the entry points reach no third-party module but the peers and zod", () => {
    // A module without complete types of its own (chromadb: its .d.ts imports a package it does not
    // install) fails a consumer's skipLibCheck-false build; retrace wraps such types behind its own.
    const installed = path.join(consumer, "node_modules", rootPkg.name);
    const allowed = /^(?:@langchain\/core(?:\/|$)|@langchain\/langgraph(?:\/|$)|zod(?:\/|$))/;
    const seen = new Set<string>();
    const stack = Object.values(rootPkg.exports).flatMap((t) =>
      typeof t === "object" && t.types !== undefined ? [path.join(installed, t.types)] : [],
    );
    const foreign: string[] = [];
    while (stack.length > 0) {
      const file = stack.pop()!;
      if (seen.has(file)) continue;
      seen.add(file);
      for (const spec of declarationImports(readFileSync(file, "utf8"))) {
        if (spec.startsWith(".")) stack.push(path.resolve(path.dirname(file), spec.replace(/\.js$/, ".d.ts")));
        else if (!allowed.test(spec)) foreign.push(`${path.relative(installed, file)} imports "${spec}"`);
      }
    }
    expect(seen.size).toBeGreaterThan(10);
    expect(foreign).toEqual([]);
  });

  for (const resolution of ["NodeNext", "Bundler"] as const) {
    it(`a file importing every entry point and a .ts consumer adding the retrieve node to its own StateGraph type-check with tsc --strict, skipLibCheck false (moduleResolution ${resolution})`, () => {
      const { status, errors, output } = typeCheck(resolution);
      // Errors of the doc snippets are their own tests' (below); any other error, in our declarations,
      // a third party's or the consumer's code, fails here.
      // The Langfuse SDK's own declarations (reached only by the docs' upload snippet importing @langfuse/client, never
      // through retrace's: the test above) do not compile with skipLibCheck false (@langfuse/core 5.11.1: "Cannot use
      // namespace … as a value"); that is the SDK's to fix, and a consumer of it meets it with or without retrace.
      const ours = (e: TscError) => !e.file.startsWith("snippets/") && !e.file.startsWith("node_modules/@langfuse/");
      expect(errors.filter(ours).map((e) => e.text)).toEqual([]);
      if (errors.length === 0) expect(status, output).toBe(0);
    }, 300_000); // type-checks LangChain's declarations too (skipLibCheck off)
  }

  describe("code blocks of README.md and docs/ that import the package (test/helpers/doc-snippets.ts)", () => {
    it("are found, and at least one is a complete program that runs", () => {
      expect(snippets.length).toBeGreaterThanOrEqual(4);
      expect(snippets.some((s) => s.mode === "run")).toBe(true);
    });

    for (const s of snippets) {
      const what =
        s.mode === "fragment"
          ? "its imports of the package type-check (a fragment)"
          : "type-checks with tsc --strict (NodeNext)";
      it(`${s.doc}:${s.line}: ${what}`, () => {
        const { errors } = typeCheck("NodeNext");
        expect(errors.filter((e) => e.file === s.file).map((e) => e.text)).toEqual([]);
      }, 300_000);
      if (s.mode === "run") {
        it(`${s.doc}:${s.line}: runs and exits 0`, () => {
          typeCheck("NodeNext"); // emits out/
          const r = run(process.execPath, [path.join("out", s.file.replace(/\.ts$/, ".js"))], consumer);
          expect(r.stderr).toBe("");
          expect(r.status).toBe(0);
        }, 300_000);
      }
    }
  });

  it("the installed bin runs the compiled CLI", () => {
    const r = run(path.join(consumer, "node_modules", ".bin", "retrace"), ["--help"], consumer);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^Usage: retrace/m);
    for (const command of ["eval", "check", "score", "compare", "trace", "ingest"]) expect(r.stdout).toContain(command);
  });

  describe("what a consumer meets on this machine", () => {
    const bin = () => path.join(consumer, "node_modules", ".bin", "retrace");
    const version = (pkg: string) =>
      (
        JSON.parse(readFileSync(path.join(consumer, "node_modules", pkg, "package.json"), "utf8")) as {
          version: string;
        }
      ).version;
    const numeric = (v: string) => v.split(".").map(Number);
    const atLeast = (v: string, min: string) => {
      const [a, b] = [numeric(v), numeric(min)];
      for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return (a[i] ?? 0) > (b[i] ?? 0);
      return true;
    };

    it("holds chromadb's own newest server binding beside the one retrace declares, with no overrides", () => {
      const manifest = JSON.parse(readFileSync(path.join(consumer, "package.json"), "utf8")) as { overrides?: unknown };
      expect(manifest.overrides).toBeUndefined();
      const declared = (
        JSON.parse(readFileSync(path.join(consumer, "node_modules", "chromadb", "package.json"), "utf8")) as {
          optionalDependencies: Record<string, string>;
        }
      ).optionalDependencies["chromadb-js-bindings-linux-x64-gnu"]!;
      const own = version("chromadb-js-bindings-linux-x64-gnu");
      expect(declared).toMatch(/^\^\d+\.\d+\.\d+$/);
      expect(own.split(".")[0]).toBe(declared.slice(1).split(".")[0]);
      expect(atLeast(own, declared.slice(1))).toBe(true);
      const fetched = process.env.RETRACE_EXTRA_TARBALLS;
      if (fetched !== undefined && fetched !== "") {
        // .ci/run fetched chromadb's newest binding from the npm registry: the consumer got exactly that one.
        const newest = readdirSyncSafe(fetched).find((f) => f.startsWith("chromadb-js-bindings-linux-x64-gnu-"));
        expect(newest, `no chromadb binding in ${fetched}`).toBeDefined();
        expect(own).toBe(/-(\d+\.\d+\.\d+)\.tgz$/.exec(newest!)![1]);
      }
      const ours = version("retrace-chroma-binding-linux-x64-gnu");
      expect(`npm:chromadb-js-bindings-linux-x64-gnu@${ours}`).toBe(
        (rootPkg as unknown as { optionalDependencies: Record<string, string> }).optionalDependencies[
          "retrace-chroma-binding-linux-x64-gnu"
        ],
      );
      console.log(
        `consumer's Chroma server bindings: chromadb-js-bindings-linux-x64-gnu@${own} (chromadb's, ${declared}) and retrace-chroma-binding-linux-x64-gnu@${ours} (retrace's)`,
      );
    });

    it("retrace's binding is installed on linux/x64/glibc only: macOS, arm64 and musl installs get chromadb's own alone (npm's --os/--cpu/--libc)", async () => {
      const platforms: [string[], string[]][] = [
        [["--os=darwin", "--cpu=arm64"], ["chromadb-js-bindings-darwin-arm64"]],
        [["--os=linux", "--cpu=arm64"], ["chromadb-js-bindings-linux-arm64-gnu"]],
        [["--os=linux", "--cpu=x64", "--libc=musl"], []],
        [
          ["--os=linux", "--cpu=x64", "--libc=glibc"],
          ["chromadb-js-bindings-linux-x64-gnu", "retrace-chroma-binding-linux-x64-gnu"],
        ],
      ];
      for (const [flags, expected] of platforms) {
        const folder = path.join(tmp, `platform-${flags.join("").replace(/\W+/g, "-")}`);
        await mkdir(folder);
        await writeFile(path.join(folder, "package.json"), JSON.stringify({ name: "platform", private: true }));
        const dry = await runAsync(
          "npm",
          [
            "install",
            "--dry-run",
            "--no-audit",
            "--no-fund",
            "--registry",
            registry.url,
            "--cache",
            path.join(tmp, "npm-cache"),
            ...flags,
            tarball,
            `@langchain/core@${rootPkg.devDependencies["@langchain/core"]}`,
            `@langchain/langgraph@${rootPkg.devDependencies["@langchain/langgraph"]}`,
          ],
          folder,
        );
        expect(dry.status, dry.output).toBe(0);
        const bindings = [...dry.output.matchAll(/^add (\S*binding\S*) /gm)].map((m) => m[1]!).sort();
        expect(bindings, flags.join(" ")).toEqual(expected);
      }
    }, 300_000);

    it("retrace eval --kb ./kb starts its own Chroma server on the binding that loads, and scores", async () => {
      await cp(MINI_KB, path.join(consumer, "kb"), { recursive: true });
      const r = run(bin(), ["eval", "--kb", "./kb", "--store", "local", "--verbose"], consumer);
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toContain("store=local");
      const started = /Chroma server started at \S+: server (\S+) on binding (\S+) \(declared by (\S+)\)/.exec(
        r.stderr,
      );
      expect(started, r.stderr).not.toBeNull();
      console.log(
        `self-started Chroma in the consumer: server ${started![1]} on ${started![2]} (declared by ${started![3]})`,
      );
      const glibc = (process.report.getReport() as { header: { glibcVersionRuntime?: string } }).header
        .glibcVersionRuntime;
      // chromadb's own binding needs glibc 2.38; below that, retrace's is the one that runs.
      if (glibc !== undefined && !atLeast(glibc, "2.38")) expect(started![3]).toBe("retrace-eval");
    }, 300_000);

    it("retrace label writes a page for two imported conversations (its pool uses the self-started Chroma)", async () => {
      const convs = [
        {
          locale: "en",
          messages: [
            { role: "user", content: "how do I lock my card?" },
            { role: "assistant", content: "Open the app and tap Freeze." },
            { role: "user", content: "and my refund?" },
          ],
        },
        { locale: "en", messages: [{ role: "user", content: "when does a refund arrive?" }] },
      ];
      await writeFile(path.join(consumer, "convs.jsonl"), convs.map((c) => JSON.stringify(c)).join("\n") + "\n");
      const imported = run(bin(), ["cases", "import", "convs.jsonl", "--out", "to-label.jsonl"], consumer);
      expect(imported.status, imported.stderr).toBe(0);
      const r = run(bin(), ["label", "to-label.jsonl", "--kb", "./kb", "--out", "html:label.html"], consumer);
      expect(r.status, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/Wrote label\.html: 2 cases, 3 turns/);
      expect(readFileSync(path.join(consumer, "label.html"), "utf8")).toMatch(/^<!doctype html>/i);
    }, 300_000);

    it("a TypeScript graph under tsx is attributed with --counterfactual (every gold-bearing turn)", async () => {
      const page = walkthroughSteps(path.join(ROOT, "docs", "your-graph-in-five-minutes.md"));
      for (const step of page) if (step.kind === "file") await writeFile(path.join(consumer, step.name), step.content);
      // The page's agent.ts type-checks too (tsc --strict, NodeNext, against the consumer's LangChain), not only runs under tsx.
      await writeFile(
        path.join(consumer, "tsconfig.agent.json"),
        JSON.stringify({
          compilerOptions: {
            strict: true,
            target: "ES2022",
            module: "NodeNext",
            moduleResolution: "NodeNext",
            noEmit: true,
            skipLibCheck: true,
          },
          files: ["agent.ts"],
        }),
      );
      const tsc = run(
        process.execPath,
        [
          path.join(consumer, "node_modules", "typescript", "bin", "tsc"),
          "-p",
          "tsconfig.agent.json",
          "--pretty",
          "false",
        ],
        consumer,
      );
      expect(tsc.stdout + tsc.stderr).toBe("");
      expect(tsc.status).toBe(0);
      const r = run(
        bin(),
        [
          "eval",
          "--graph",
          "./agent.ts",
          "--catalog",
          "ids.tsv",
          "--cases",
          "cases.jsonl",
          "--counterfactual",
          "--json",
        ],
        consumer,
      );
      expect(r.status, r.stderr).toBe(0);
      const report = JSON.parse(r.stdout) as {
        queryAttribution: {
          enabled: boolean;
          turns: number;
          unattributed?: Record<string, number>;
          retrieverCalls?: number;
        };
        turns: { queries?: { attribution: string } }[];
      };
      expect(report.queryAttribution.enabled).toBe(true);
      expect(report.queryAttribution.unattributed).toBeUndefined();
      expect(report.queryAttribution.turns).toBe(3);
      expect(report.turns.filter((t) => t.queries !== undefined)).toHaveLength(3);
      expect(report.queryAttribution.retrieverCalls).toBeGreaterThan(0);
    }, 300_000);
  });
});

describe("docs/your-graph-in-five-minutes.md, followed literally in an empty folder", () => {
  const page = path.join(ROOT, "docs", "your-graph-in-five-minutes.md");
  const steps = walkthroughSteps(page);

  it("has files, commands and quoted output to check", () => {
    expect(steps.filter((s) => s.kind === "file").map((s) => (s as { name: string }).name)).toEqual([
      "agent.ts",
      "ids.tsv",
      "cases.jsonl",
    ]);
    expect(steps.filter((s) => s.kind === "run").length).toBeGreaterThanOrEqual(5);
    expect(steps.some((s) => s.kind === "output")).toBe(true);
  });

  it("every command exits 0 and prints what the page quotes", async () => {
    const folder = path.join(tmp, "five-minutes");
    await mkdir(folder);
    // What a user's shell has, with npm pointed at the local registry (which serves the packed retrace-eval).
    const env = cleanEnv({
      npm_config_registry: registry.url,
      npm_config_cache: path.join(tmp, "npm-cache"),
      npm_config_fetch_retries: "0",
      npm_config_audit: "false",
      npm_config_fund: "false",
    });
    let printed = "";
    for (const step of steps) {
      if (step.kind === "file") await writeFile(path.join(folder, step.name), step.content);
      else if (step.kind === "run") {
        printed = "";
        for (const command of step.commands) {
          const r = await runShell(command, folder, env);
          expect(
            r.status,
            `docs/your-graph-in-five-minutes.md:${step.line}: \`${command}\` exited ${r.status}:\n${r.output}`,
          ).toBe(0);
          printed += r.output;
        }
      } else {
        const seen = folded(printed);
        for (const line of step.lines)
          expect(seen, `docs/your-graph-in-five-minutes.md:${step.line}: "${line}" is not in the output`).toContain(
            folded(line),
          );
      }
    }
    expect(existsSync(path.join(folder, "report.html"))).toBe(true);
    expect(existsSync(path.join(folder, "baseline.json"))).toBe(true);
  }, 600_000);
});

/** A page's command line run by bash in `cwd`, without blocking the event loop (the local registry is served from this process). */
function runShell(
  command: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<{ status: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["-c", command], { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr.on("data", (d: Buffer) => (output += d.toString()));
    child.on("error", reject);
    child.on("close", (status) => resolve({ status, output }));
  });
}

function readdirSyncSafe(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
