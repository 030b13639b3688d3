/**
 * A missing optional peer (tsx, @huggingface/transformers) is exit 2 with the
 * exact command that installs it, never the internal-error exit 70
 * (docs/gates-and-exit-codes.md). The peer is made really unavailable, not
 * mocked: the built CLI (dist/, `npm run build`) is copied into a temporary
 * package whose node_modules links every installed package but the peer, so
 * Node's resolver, starting from the copied dist/, cannot find it (checked
 * before each test; no NODE_PATH).
 */
import { spawnSync } from "node:child_process";
import { cp, mkdir, readdir, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "../helpers/chroma.js";
import { ROOT, runCli } from "../helpers/cli.js";
import { MINI_KB } from "../helpers/fixtures.js";

const DEAD_STORE = { CHROMA_URL: "http://127.0.0.1:9" };
let dir: string;
let cleanup: () => Promise<void>;

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir("optional-peers"));
});
afterAll(async () => cleanup());

/** A copy of the built package at `<dir>/<name>` whose node_modules has every package of the checkout's but `peer`. */
async function packageWithout(peer: string, specifier: string, name: string): Promise<{ bin: string; root: string }> {
  const root = path.join(dir, name);
  for (const part of ["bin", "dist", "package.json"])
    await cp(path.join(ROOT, part), path.join(root, part), { recursive: true });
  const from = path.join(ROOT, "node_modules");
  for (const entry of await readdir(from)) {
    if (entry.startsWith(".")) continue;
    if (entry.startsWith("@")) {
      for (const sub of await readdir(path.join(from, entry))) {
        if (`${entry}/${sub}` === peer) continue;
        await mkdir(path.join(root, "node_modules", entry), { recursive: true });
        await symlink(path.join(from, entry, sub), path.join(root, "node_modules", entry, sub), "dir");
      }
    } else if (entry !== peer) {
      await mkdir(path.join(root, "node_modules"), { recursive: true });
      await symlink(path.join(from, entry), path.join(root, "node_modules", entry), "dir");
    }
  }
  // The precondition, checked for real: from the copied dist/, the specifier retrace imports does not resolve.
  const probe = path.join(root, "dist", "probe-peer.mjs");
  await writeFile(probe, `import.meta.resolve(${JSON.stringify(specifier)});\n`);
  const r = spawnSync(process.execPath, [probe], { cwd: root, env: cleanEnv(), encoding: "utf8" });
  expect(
    r.status,
    `${specifier} must not resolve from ${root} (is ${peer} installed in a folder above ${dir}?)`,
  ).not.toBe(0);
  expect(r.stderr).toContain(`Cannot find package '${peer}'`);
  return { bin: path.join(root, "bin", "retrace.mjs"), root };
}

/** The environment without NODE_PATH; on a Node that strips TypeScript types itself, that turned off so the .ts module needs tsx as on Node 20. */
function cleanEnv(): Record<string, string | undefined> {
  const stripsTypes = Boolean((process.features as { typescript?: unknown }).typescript);
  return {
    ...process.env,
    NODE_PATH: undefined,
    NODE_OPTIONS: stripsTypes ? "--no-experimental-strip-types" : undefined,
  };
}

describe("a missing optional peer is exit 2 with the install command", () => {
  it("retrace eval --graph agent.ts without tsx", async () => {
    const { bin } = await packageWithout("tsx", "tsx/esm/api", "no-tsx");
    const project = path.join(dir, "project-ts");
    await mkdir(project, { recursive: true });
    await writeFile(path.join(project, "agent.ts"), "export const graph: number = 1;\n");
    const r = await runCli(["eval", "--graph", "agent.ts", "--kb", MINI_KB], { bin, cwd: project, env: cleanEnv() });
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(
      "retrace: --graph agent.ts is TypeScript and needs the optional peer tsx (^4.20.0), which is not installed: run `npm install -D tsx`",
    );
    expect(r.stderr).not.toMatch(/internal error|This is a bug in retrace|\n {4}at /);
    // The control: with tsx installed (the checkout's own bin), the same module loads and fails on what it exports.
    const control = await runCli(["eval", "--graph", "agent.ts", "--kb", MINI_KB], { cwd: project, env: cleanEnv() });
    expect(control.exitCode).toBe(2);
    expect(control.stderr).toContain(
      "--graph agent.ts#graph: expected a compiled LangGraph graph or a factory returning one, got number",
    );
  }, 120_000);

  it("a model embedder or reranker without @huggingface/transformers", async () => {
    const { bin } = await packageWithout("@huggingface/transformers", "@huggingface/transformers", "no-transformers");
    // A model folder with the files retrace checks for: loading gets as far as importing transformers.js.
    const model = path.join(dir, "stub-model");
    await mkdir(path.join(model, "onnx"), { recursive: true });
    for (const f of ["config.json", "tokenizer.json", "tokenizer_config.json"])
      await writeFile(path.join(model, f), "{}\n");
    await writeFile(path.join(model, "onnx", "model.onnx"), "");
    const install = "run `ONNXRUNTIME_NODE_INSTALL_CUDA=skip npm install @huggingface/transformers@^3.8.1`";
    for (const option of [
      ["--config", JSON.stringify({ retrieval: { embedder: model } })],
      [
        "--config",
        '{"retrieval":{"embedder":"builtin"}}',
        "--config",
        JSON.stringify({ retrieval: { rerank: model } }),
      ],
    ]) {
      const r = await runCli(["eval", "--kb", MINI_KB, ...option], { bin, env: { ...cleanEnv(), ...DEAD_STORE } });
      expect(r.exitCode, option.join(" ")).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr).toContain(
        `need the optional peer @huggingface/transformers (^3.8.1), which is not installed: ${install}`,
      );
      expect(r.stderr).not.toMatch(/internal error|This is a bug in retrace/);
    }
  }, 120_000);
});
