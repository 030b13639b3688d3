/**
 * Atomic file writes: the data goes to a temporary file in the target's
 * directory, which is then renamed over the target, so a reader sees the old
 * file or the new one, never half of one. The temporary file is removed if
 * anything fails. Importable from every layer, like errors.ts and log.ts.
 */
import { randomBytes } from "node:crypto";
import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

export async function writeFileAtomic(path: string, data: string): Promise<void> {
  const dir = dirname(path);
  await mkdir(dir, { recursive: true });
  const tmp = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`);
  try {
    await writeFile(tmp, data, { encoding: "utf8", flag: "wx" });
    await rename(tmp, path);
  } catch (e) {
    await rm(tmp, { force: true });
    throw e;
  }
}
