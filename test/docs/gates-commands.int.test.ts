/**
 * Every command line quoted in docs/gates-and-exit-codes.md runs and exits as
 * the page says. Each fenced block holding `retrace …` lines (or `$ retrace …`
 * in a block that also shows output) carries a marker on the line above it:
 *
 *   <!-- commands: exit 0 1 0 -->   the exit code of each line, in order (one
 *                                   code for the whole block when it repeats);
 *   <!-- commands: not run here: WHY -->  lines that need another machine
 *                                   or project, with the test that runs them.
 *
 * A block of commands with no marker fails, so a command added to the page
 * is checked too. The lines run in the page's order, with the real bin, in a
 * folder laid out as the page assumes: `kb/` (a copy of the shipped KB),
 * `my-kb/` (the mini KB), `agent.mjs` (a user-style graph over it),
 * `other.json` (a copy of the shipped baseline) and `report.json` (a report
 * of the shipped KB). The store is the default one: a local Chroma retrace
 * starts itself.
 */
import { cp, readFile, symlink } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromaPids, tempDir } from "../helpers/chroma.js";
import { ROOT, runCli } from "../helpers/cli.js";
import { MINI_KB } from "../helpers/fixtures.js";

const DOC = "docs/gates-and-exit-codes.md";
interface Block {
  line: number;
  commands: string[];
  exits: number[] | null;
  why?: string;
}

/** The blocks of `doc` that hold retrace command lines, with their markers. */
async function commandBlocks(doc: string): Promise<Block[]> {
  const lines = (await readFile(path.join(ROOT, doc), "utf8")).split("\n");
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = /^\s*(`{3,})/.exec(lines[i]!);
    if (fence === null) continue;
    const end = lines.findIndex((l, j) => j > i && l.trim().startsWith(fence[1]!));
    const body = lines.slice(i + 1, end);
    const prompted = body.some((l) => l.trim().startsWith("$ "));
    const commands = body
      .map((l) => l.trim())
      .filter((l) => (prompted ? l.startsWith("$ retrace ") : l.startsWith("retrace ")))
      .map((l) => l.replace(/^\$ /, "").replace(/\s+#.*$/, ""));
    const marker = /^\s*<!--\s*commands:\s*(.*?)\s*-->\s*$/.exec(lines[i - 1] ?? "");
    if (commands.length > 0) {
      if (marker === null)
        throw new Error(
          `${doc}:${i + 1}: a block of retrace commands needs a <!-- commands: exit N … --> marker on the line above`,
        );
      const m = marker[1]!;
      if (m.startsWith("not run here:")) blocks.push({ line: i + 1, commands, exits: null, why: m });
      else {
        const codes = /^exit((?:\s+\d+)+)$/.exec(m);
        if (codes === null) throw new Error(`${doc}:${i}: unknown marker "${m}"`);
        const exits = codes[1]!.trim().split(/\s+/).map(Number);
        if (exits.length !== 1 && exits.length !== commands.length)
          throw new Error(`${doc}:${i}: ${exits.length} exit codes for ${commands.length} commands`);
        blocks.push({ line: i + 1, commands, exits: exits.length === 1 ? commands.map(() => exits[0]!) : exits });
      }
    }
    i = end;
  }
  return blocks;
}

let dir: string;
let cleanup: () => Promise<void>;
const blocks = await commandBlocks(DOC);
const env = () => ({ KB_AGENT_KB: path.join(dir, "my-kb") });

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir("gates-commands"));
  await cp(path.join(ROOT, "kb"), path.join(dir, "kb"), { recursive: true });
  await cp(MINI_KB, path.join(dir, "my-kb"), { recursive: true });
  await cp(path.join(ROOT, "test", "fixtures", "graphs", "kb-agent.mjs"), path.join(dir, "agent.mjs"));
  await cp(path.join(ROOT, "kb", "eval", "baseline.json"), path.join(dir, "other.json"));
  await symlink(path.join(ROOT, "node_modules"), path.join(dir, "node_modules"), "dir"); // agent.mjs imports LangChain
  const r = await runCli(["eval", "--out", "json:report.json"], { cwd: dir, timeoutMs: 300_000 });
  expect(r.exitCode, r.stderr).toBe(0);
}, 300_000);
afterAll(async () => {
  expect(chromaPids(dir)).toEqual([]);
  await cleanup();
});

describe(`the command lines of ${DOC}`, () => {
  it("are found, every block marked", () => {
    expect(blocks.filter((b) => b.exits !== null).flatMap((b) => b.commands).length).toBeGreaterThanOrEqual(10);
  });

  for (const block of blocks) {
    if (block.exits === null) {
      it(`${DOC}:${block.line}: ${block.why}`, () => {
        // Not run here, by the marker's reason; the lines still name real commands.
        for (const c of block.commands) expect(c).toMatch(/^retrace [a-z]+/);
      });
      continue;
    }
    block.commands.forEach((command, i) => {
      it(`${DOC}:${block.line}: \`${command}\` exits ${block.exits![i]}`, async () => {
        const args = command.split(/\s+/).slice(1);
        const r = await runCli(args, { cwd: dir, env: env(), timeoutMs: 300_000 });
        expect(r.exitCode, `${r.stderr}\n${r.stdout}`).toBe(block.exits![i]);
      }, 300_000);
    });
  }
});
