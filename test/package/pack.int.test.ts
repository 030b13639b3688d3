/**
 * The package as another project gets it: `npm pack`, then a real
 * `npm install` of the tarball into an empty project that brings its own
 * @langchain/core and @langchain/langgraph, from a registry on 127.0.0.1 that
 * serves this repository's locked packages out of the npm cache (no network;
 * test/helpers/local-registry.ts). Then a plain .mjs uses it with no
 * TypeScript loader, a .ts consumer type-checks with `tsc --strict` under
 * NodeNext and Bundler resolution, and the installed bin runs.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { cp, mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "../helpers/cli.js";
import { startLocalRegistry, type LocalRegistry } from "../helpers/local-registry.js";

const rootPkg = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as {
  name: string;
  version: string;
  devDependencies: Record<string, string>;
};
let tmp: string;
let consumer: string;
let registry: LocalRegistry;
let installLog = "";

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
  const pack = run("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", tmp], ROOT);
  if (pack.status !== 0) throw new Error(`npm pack failed:\n${pack.stderr}`);
  const tarball = path.join(tmp, (JSON.parse(pack.stdout) as { filename: string }[])[0]!.filename);

  registry = await startLocalRegistry(path.join(ROOT, "package-lock.json"));
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
      },
    }),
  );
  for (const f of ["use.mjs", "graph.ts"]) await cp(path.join(ROOT, "test", "package", "consumer", f), path.join(consumer, f));
  const install = await runAsync(
    "npm",
    ["install", "--no-audit", "--no-fund", "--registry", registry.url, "--cache", path.join(tmp, "npm-cache"), "--fetch-retries", "0"],
    consumer,
  );
  installLog = install.output;
  if (install.status !== 0) throw new Error(`npm install of the tarball failed:\n${installLog}`);
}, 600_000);

afterAll(async () => {
  await registry?.close();
  if (tmp !== undefined) await rm(tmp, { recursive: true, force: true });
});

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
    expect(got).toMatchObject({ hit: 1, recall: 1, ndcg: 1, rootExportsRetrieveNode: "function", rootExportsOpenSystem: "function" });
  });

  for (const resolution of ["NodeNext", "Bundler"] as const) {
    it(`a .ts consumer adding the retrieve node to its own StateGraph type-checks with tsc --strict (moduleResolution ${resolution})`, async () => {
      const tsconfig = {
        compilerOptions: {
          strict: true,
          noEmit: true,
          target: "ES2022",
          module: resolution === "NodeNext" ? "NodeNext" : "ESNext",
          moduleResolution: resolution,
          types: ["node"],
          skipLibCheck: false,
        },
        files: ["graph.ts"],
      };
      await writeFile(path.join(consumer, `tsconfig.${resolution}.json`), JSON.stringify(tsconfig));
      const r = run(process.execPath, [path.join(consumer, "node_modules", "typescript", "bin", "tsc"), "-p", `tsconfig.${resolution}.json`], consumer);
      // Every error must come from a third party's declarations, never from ours or the consumer's code:
      // chromadb 3.5.0's own chromadb.d.ts imports '@hey-api/client-fetch', which it does not install
      // (consumers with the usual `skipLibCheck: true` never see it).
      const errors = (r.stdout + r.stderr).split("\n").filter((line) => /error TS\d+/.test(line));
      expect(errors.filter((line) => !line.startsWith("node_modules/chromadb/"))).toEqual([]);
      expect(r.status === 0 || errors.length > 0).toBe(true);
    }, 300_000); // type-checks LangChain's declarations too (skipLibCheck off)
  }

  it("the installed bin runs the compiled CLI", () => {
    const r = run(path.join(consumer, "node_modules", ".bin", "retrace"), ["--help"], consumer);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^Usage: retrace/m);
    for (const command of ["eval", "check", "score", "compare", "trace", "ingest"]) expect(r.stdout).toContain(command);
  });
});
