/**
 * The compiled CLI loads a command's heavy dependencies only when that
 * command runs: `retrace --help` resolves no LangChain, LangGraph, chromadb
 * or transformers.js module, and `retrace score` (a pure trec_eval scorer)
 * none of LangChain's. Every module the process resolves is recorded by a
 * resolve hook preloaded with `node --import`.
 */
import { spawnSync } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildProgram, COMMANDS } from "../../src/cli/main.js";
import { BIN, ROOT } from "../helpers/cli.js";

const HOOK = path.join(ROOT, "test", "fixtures", "hooks", "record-imports.mjs");
const HEAVY = /node_modules\/(@langchain\/|chromadb\/|@huggingface\/transformers\/|onnxruntime)/;
let tmp: string;

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), "retrace-imports-"));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

async function resolvedBy(args: string[]): Promise<{ status: number | null; stdout: string; modules: string[] }> {
  const file = path.join(tmp, `${args.join("_").replace(/\W/g, "") || "none"}.txt`);
  const r = spawnSync(process.execPath, ["--import", HOOK, BIN, ...args], {
    cwd: ROOT,
    encoding: "utf8",
    env: { ...process.env, RECORD_IMPORTS_FILE: file },
  });
  const modules = (await readFile(file, "utf8").catch(() => "")).split("\n").filter((l) => l !== "");
  return { status: r.status, stdout: r.stdout, modules };
}

describe("lazy command loading", () => {
  it("retrace --help lists every command and loads none of the heavy packages", async () => {
    const r = await resolvedBy(["--help"]);
    expect(r.status).toBe(0);
    for (const name of Object.keys(COMMANDS)) expect(r.stdout).toContain(name);
    expect(r.modules.some((m) => m.includes("/dist/cli/main.js"))).toBe(true); // the hook saw the CLI load
    expect(r.modules.filter((m) => HEAVY.test(m))).toEqual([]);
  });

  it("retrace score --help loads no LangChain or Chroma module", async () => {
    const r = await resolvedBy(["score", "--help"]);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/--metric|qrels/i);
    expect(r.modules.filter((m) => HEAVY.test(m))).toEqual([]);
  });

  it("retrace eval --help does load the command's own module (the table is not a stub)", async () => {
    const r = await resolvedBy(["eval", "--help"]);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain("--store");
    expect(r.modules.some((m) => m.includes("/dist/cli/commands/eval.js"))).toBe(true);
  });
});

describe("the command table", () => {
  it("each summary is the description the command's own module gives it", async () => {
    for (const [name, { summary }] of Object.entries(COMMANDS)) {
      const program = await buildProgram(["node", "retrace", name]);
      const cmd = program.commands.find((c) => c.name() === name);
      expect(cmd?.description(), name).toBe(summary);
      expect(
        (cmd?.options.length ?? 0) + (cmd?.commands.length ?? 0) + (cmd?.registeredArguments.length ?? 0),
        `${name} is fully defined when it is the command run`,
      ).toBeGreaterThan(0);
    }
  });
});
