/** Copy a fixture KB into a temp dir so a test can mutate it (one fixture per kind of bad input). */
import { spawnSync } from "node:child_process";
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { TestContext } from "vitest";
import { ROOT } from "./cli.js";

export const MINI_KB = path.join(ROOT, "test", "fixtures", "kb-mini");
export const SHIPPED_KB = path.join(ROOT, "kb");

export async function copyKb(from: string = MINI_KB): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "retrace-kb-"));
  await cp(from, dir, { recursive: true });
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

export async function editFile(file: string, edit: (text: string) => string): Promise<void> {
  await writeFile(file, edit(await readFile(file, "utf8")));
}

/** A third English card for the graded-relevance data (so a top-3 over kb-mini can hold a card no one judged). */
const REPLACE_CARD = `---
id: card-replace
locale: en
title: Replace a lost card
tags: [cards]
---
## Order a new card
Open the app, tap Card, then Replace card. A new card reaches you in five working days; the lost card stops working at once.
`;

/** Hand-made graded cases (docs/metrics.md): a graded turn with a contract, a relevance-only turn, a contract turn with `judged`. */
export const GRADED_CASES = [
  {
    id: "en-graded-001",
    locale: "en",
    kind: "golden",
    turns: [
      {
        user: "how do I lock my card?",
        must_cite_one_of: ["card-freeze"],
        expect: "answer",
        relevant: { "card-freeze": 3, "card-replace": 1, "refund-timelines": 0 },
      },
      { user: "and will my refund still arrive?", relevant: { "refund-timelines": 3, "card-freeze": 1 } },
    ],
  },
  {
    id: "en-judged-001",
    locale: "en",
    kind: "golden",
    turns: [
      {
        user: "I lost my card, how do I replace it?",
        must_cite_one_of: ["card-replace"],
        expect: "answer",
        judged: ["card-replace"],
      },
    ],
  },
];

/** kb-mini copied to `dir/kb` (without its baseline) with card-replace added, and `cases` written to `dir/cases.jsonl`. */
export async function writeGradedKb(dir: string, cases: readonly object[]): Promise<{ kb: string; cases: string }> {
  const kb = path.join(dir, "kb");
  await cp(MINI_KB, kb, { recursive: true });
  await rm(path.join(kb, "eval", "baseline.json"), { force: true });
  await writeFile(path.join(kb, "cards", "en", "card-replace.md"), REPLACE_CARD);
  const file = path.join(dir, "cases.jsonl");
  await writeFile(file, cases.map((c) => JSON.stringify(c)).join("\n") + "\n");
  return { kb, cases: file };
}

/** True when the tests run as root (mounting a tmpfs needs it; a read-only folder does not stop root). */
export const IS_ROOT = typeof process.getuid === "function" && process.getuid() === 0;

/**
 * Mounts a tmpfs of `size` (e.g. "64k") at `mnt` (created first), for a
 * full-file-system test; unmount it with `unmountTmpfs` in a `finally`. Not
 * root, or a mount that fails: the test is skipped, its reason printed.
 */
export async function mountSmallTmpfs(mnt: string, size: string, ctx: Pick<TestContext, "skip">): Promise<void> {
  await mkdir(mnt, { recursive: true });
  const m = IS_ROOT ? spawnSync("mount", ["-t", "tmpfs", "-o", `size=${size}`, "tmpfs", mnt]) : undefined;
  if (m?.status !== 0) {
    console.log(
      `skipped: tmpfs test: ${IS_ROOT ? `mount failed: ${m?.stderr.toString().trim()}` : "not running as root"}`,
    );
    ctx.skip();
  }
}

export function unmountTmpfs(mnt: string): void {
  spawnSync("umount", [mnt]);
}
