/** Copy a fixture KB into a temp dir so a test can mutate it (one fixture per kind of bad input). */
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
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
