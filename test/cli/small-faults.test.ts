/**
 * The smaller faults of issue 49, through the real bin:
 * - a newline in the `--cases` path cannot inject a `::warning` workflow
 *   command through the "Next:" hints (printed as `$'…\n…'`);
 * - a `relevant` grade keyed `__proto__` is refused by `check`;
 * - two documents on stdout (`--json --out json:-`, `--out json:- --out
 *   html:/dev/stdout`) are exit 2 before work;
 * - an ingest into a read-only data dir names EROFS (a read-only tmpfs, root only).
 */
import { spawnSync } from "node:child_process";
import { copyFile, mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { shellLine } from "../../src/shell.js";
import { tempDir } from "../helpers/chroma.js";
import { runCli } from "../helpers/cli.js";
import { MINI_KB, mountSmallTmpfs, unmountTmpfs } from "../helpers/fixtures.js";

let dir: string;
let cleanup: () => Promise<void>;
const EVAL = ["eval", "--kb", MINI_KB, "--store", "memory", "--config", '{"retrieval":{"embedder":"builtin"}}'];
beforeAll(async () => {
  ({ dir, cleanup } = await tempDir("small-faults"));
});
afterAll(() => cleanup());

describe("control characters in printed command lines", () => {
  it("shellLine writes them as bash $'…' escapes, which bash reads back as the same argument", () => {
    const arg = "x\n::warning::pwned\t'q'\\\u0007";
    const line = shellLine(["printf", "%s", arg]);
    expect(line).not.toContain("\n");
    expect(spawnSync("bash", ["-c", line], { encoding: "utf8" }).stdout).toBe(arg);
  });

  it("a --cases path with a newline: no line of stderr starts a workflow command", async () => {
    const cases = path.join(dir, "c\n::warning::injected.jsonl");
    await copyFile(path.join(MINI_KB, "eval", "cases.jsonl"), cases);
    const r = await runCli([...EVAL, "--cases", cases]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toContain("Next:");
    expect(r.stderr.split("\n").filter((l) => l.startsWith("::"))).toEqual([]);
  });
});

describe("retrace check: a relevant grade keyed __proto__", () => {
  it("is refused, like a grade naming no card", async () => {
    const cases = path.join(dir, "proto.jsonl");
    const text = await readFile(path.join(MINI_KB, "eval", "cases.jsonl"), "utf8");
    const extra = {
      id: "en-proto-001",
      locale: "en",
      kind: "golden",
      turns: [{ user: "how do I lock my card?", must_cite_one_of: ["card-freeze"], expect: "answer", relevant: {} }],
    };
    const line = JSON.stringify(extra).replace('"relevant":{}', '"relevant":{"__proto__":2,"card-freeze":3}');
    await writeFile(cases, `${text.trimEnd()}\n${line}\n`);
    const r = await runCli(["check", "--kb", MINI_KB, "--cases", cases]);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toContain("relevant.__proto__");
  });
});

describe("two documents on stdout", () => {
  it.each([
    [["--json", "--out", "json:-"], "--out json:"],
    [["--out", "json:-", "--out", "html:/dev/stdout"], "--out html:"],
  ])("%j: exit 2 before work, naming the option", async (flags, option) => {
    const r = await runCli([...EVAL, ...flags]);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(`Expected \`${option}\` to be a path other than stdout`);
    expect(r.stderr).not.toMatch(/embedder:|eval: \d/);
  });

  it("--out json:- alone: stdout is that one JSON document (no table after it)", async () => {
    const r = await runCli([...EVAL, "--out", "json:-"]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(() => JSON.parse(r.stdout) as unknown).not.toThrow();
  });
});

describe("retrace ingest into a read-only data dir", () => {
  it("names EROFS (read-only file system), not ENOENT", async (ctx) => {
    const mnt = path.join(dir, "ro");
    await mountSmallTmpfs(mnt, "1m", ctx);
    try {
      await mkdir(path.join(mnt, "data"));
      expect(spawnSync("mount", ["-o", "remount,ro", mnt]).status).toBe(0);
      const r = await runCli(["ingest", "--kb", MINI_KB, "--data-dir", path.join(mnt, "data")]);
      expect(r.exitCode, r.stderr).toBe(3);
      expect(r.stderr).toContain("read-only file system");
      expect(r.stderr).not.toContain("no such file or directory");
    } finally {
      unmountTmpfs(mnt);
    }
  });
});
