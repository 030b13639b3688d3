/** `retrace ingest --list` / `--prune` on a data dir holding collections of two KBs (docs/reliability.md). */
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromaPids, tempDir } from "../helpers/chroma.js";
import { runCli } from "../helpers/cli.js";
import { copyKb, editFile, MINI_KB } from "../helpers/fixtures.js";

let tmp: { dir: string; cleanup: () => Promise<void> };
let other: { dir: string; cleanup: () => Promise<void> };
beforeAll(async () => {
  tmp = await tempDir("collections");
  other = await copyKb(MINI_KB);
  await editFile(
    path.join(other.dir, "cards", "en", "card-freeze.md"),
    (t) => `${t}\nOne more line, so this KB has another hash.\n`,
  );
});
afterAll(async () => {
  const left = chromaPids(tmp.dir);
  await tmp?.cleanup();
  await other?.cleanup();
  expect(left).toEqual([]);
});

describe("retrace ingest --list / --prune", () => {
  it("lists both KBs' collections with sizes, and prune keeps only the current one", async () => {
    const dataDir = path.join(tmp.dir, "chroma");
    const env = { CHROMA_URL: "" };
    const run = (kb: string, ...more: string[]) =>
      runCli(
        [
          "ingest",
          "--kb",
          kb,
          "--config",
          JSON.stringify({ retrieval: { embedder: "builtin" } }),
          "--data-dir",
          dataDir,
          ...more,
        ],
        { env },
      );
    expect((await run(MINI_KB)).exitCode).toBe(0);
    const second = await run(other.dir, "--json");
    expect(second.exitCode, second.stderr).toBe(0);
    expect(JSON.parse(second.stdout).store).toEqual({
      kind: "local",
      url: null,
      state: "stopped",
      dataDir: path.resolve(dataDir),
    }); // not the URL of a stopped server

    const listed = await run(MINI_KB, "--list", "--json");
    expect(listed.exitCode, listed.stderr).toBe(0);
    const l = JSON.parse(listed.stdout);
    expect(l.collections).toHaveLength(2);
    const current = l.collections.find((c: { state: string }) => c.state === "current");
    expect(current.name).toBe(l.current);
    expect(current.records).toBeGreaterThan(0);
    expect(current.vectorBytes).toBe(current.records * 384 * 4);

    const pruned = await run(MINI_KB, "--prune", "--json");
    expect(pruned.exitCode, pruned.stderr).toBe(0);
    const p = JSON.parse(pruned.stdout);
    expect(p.removed).toEqual([JSON.parse(second.stdout).collection]);
    expect(p.collections.map((c: { name: string }) => c.name)).toEqual([l.current]);

    const upToDate = await run(MINI_KB);
    expect(upToDate.stdout).toMatch(/already up to date/);
    expect(upToDate.stderr).not.toMatch(/\d+\/\d+ chunks/); // no progress line when nothing is written
  }, 300_000);
});
