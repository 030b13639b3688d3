/**
 * Control and bidi characters from input are shown, not obeyed
 * (docs/reliability.md): `escapeControlChars` writes each as `\uXXXX`, keeps
 * tab and newline, and with `keepColor` only the table's own colour codes;
 * through the bin, a cases file whose gold id carries ESC, BEL, NUL and
 * U+202E gets an error message with the escapes, none of the raw characters.
 */
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { escapeControlChars } from "../src/control-chars.js";
import { runCli } from "./helpers/cli.js";
import { MINI_KB } from "./helpers/fixtures.js";

// Every character the terminal could obey: C0 but tab and newline, DEL, C1, bidi controls, line/paragraph separators.
const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

describe("escapeControlChars", () => {
  it("writes C0, DEL, C1 and bidi characters as \\uXXXX escapes, keeps tab and newline", () => {
    expect(escapeControlChars("a\u001b[2Jb\u0007c\u0000d\re\u007ff\u009bg\u202eh\u2066i\u200fj\u2028k\tl\nm")).toBe(
      "a\\u001b[2Jb\\u0007c\\u0000d\\u000de\\u007ff\\u009bg\\u202eh\\u2066i\\u200fj\\u2028k\tl\nm",
    );
    expect(escapeControlChars("plain ascii, accents é ü ñ, CJK 日本")).toBe("plain ascii, accents é ü ñ, CJK 日本");
  });

  it("keepColor lets the table's own SGR codes through and escapes every other sequence (OSC title, cursor moves)", () => {
    expect(escapeControlChars("\u001b[1mbold\u001b[0m \u001b[31mred\u001b[0m", { keepColor: true })).toBe(
      "\u001b[1mbold\u001b[0m \u001b[31mred\u001b[0m",
    );
    expect(escapeControlChars("\u001b]0;pwned\u0007 \u001b[2J \u001b[38;5;1m", { keepColor: true })).toBe(
      "\\u001b]0;pwned\\u0007 \\u001b[2J \\u001b[38;5;1m",
    );
  });

  it("inside a JSON string the escapes mean the same characters", () => {
    const json = JSON.stringify({ id: "x\u202ey\u2066z" });
    expect(JSON.parse(escapeControlChars(json))).toEqual({ id: "x\u202ey\u2066z" });
  });
});

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

describe("commander's own messages through the bin", () => {
  it("an unknown option holding ESC is echoed with the escape, exit 2", async () => {
    const r = await runCli(["eval", "--bo\u001b[2Jgus"]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("error: unknown option '--bo\\u001b[2Jgus'");
    expect(r.stderr).not.toMatch(RAW);
  });
});

describe("a hostile cases file through the bin", () => {
  it("retrace check: the gold id's ESC, BEL, NUL and U+202E appear escaped in the message, raw nowhere", async () => {
    const kb = await mkdtemp(path.join(os.tmpdir(), "retrace-control-"));
    dirs.push(kb);
    await cp(MINI_KB, kb, { recursive: true });
    const cases = path.join(kb, "eval", "cases.jsonl");
    const hostile = "no-such\u001b[2J\u0007\u0000\u202ecard";
    await writeFile(
      cases,
      `${await readFile(cases, "utf8")}${JSON.stringify({ id: "en-x", locale: "en", kind: "golden", turns: [{ user: "hi", must_cite_one_of: [hostile], expect: "answer" }] })}\n`,
    );
    for (const args of [
      ["check", "--kb", kb],
      ["check", "--kb", kb, "--verbose"],
    ]) {
      const r = await runCli(args);
      expect(r.exitCode, r.stderr).toBe(2);
      expect(r.stderr).toContain('gold id "no-such\\u001b[2J\\u0007\\u0000\\u202ecard" names no card in the KB');
      expect(r.stderr).not.toMatch(RAW);
      expect(r.stdout).not.toMatch(RAW);
    }
  });
});

describe("a line break in a path or value cannot inject a CI workflow command (issue 49 item 4)", () => {
  it("escapeControlChars puts a backslash before every line a runner would take for a command", () => {
    expect(escapeControlChars("retrace: bad c\n::warning::INJECT.jsonl\n  ::error::x\n##[error]y\nok :: fine")).toBe(
      "retrace: bad c\n\\::warning::INJECT.jsonl\n  \\::error::x\n\\##[error]y\nok :: fine",
    );
    expect(escapeControlChars("::error file=a::m", { workflowCommands: true })).toBe("::error file=a::m");
  });

  const dirs: string[] = [];
  afterAll(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

  it.each([
    ["--config", (f: string) => ["eval", "--kb", MINI_KB, "--store", "memory", "--config", f]],
    [
      "--baseline",
      (f: string) => ["eval", "--kb", MINI_KB, "--store", "memory", "--baseline", f, "--gate", "max-drop=auto"],
    ],
    ["--graph", (f: string) => ["eval", "--graph", f, "--kb", MINI_KB]],
    ["--cases", (f: string) => ["check", "--kb", MINI_KB, "--cases", f]],
  ])("a %s path holding a line break and `::warning::`", async (_option, args) => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "retrace-inject-"));
    dirs.push(dir);
    const file = path.join(dir, "c\n::warning::INJECT.json");
    await writeFile(file, "{ not json\n{");
    const r = await runCli(args(file), { cwd: dir, timeoutMs: 60_000 });
    expect(r.exitCode, r.stderr).not.toBe(0);
    expect(r.stderr).toContain("INJECT");
    for (const line of `${r.stdout}\n${r.stderr}`.split("\n")) expect(line).not.toMatch(/^\s*(::|##\[)/);
  });
});
