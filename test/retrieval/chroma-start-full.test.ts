/**
 * A local Chroma that cannot start because its data dir's disk is full
 * (docs/reliability.md): the advice names the full file system, never
 * "free the port", and a start log that cannot be written leaves no 0-byte
 * `retrace-chroma-start.log`. The server is a stand-in script (its CLI path,
 * `cliPath`) that prints what chromadb's server prints on a full disk and
 * exits: the failure itself cannot be provoked in the real server on demand.
 */
import { mkdir, readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLocalChroma } from "../../src/retrieval/chroma-process.js";
import { tempDir } from "../helpers/chroma.js";
import { mountSmallTmpfs, unmountTmpfs } from "../helpers/fixtures.js";

let dir: string;
let cleanup: () => Promise<void>;
let cli: string;
beforeAll(async () => {
  ({ dir, cleanup } = await tempDir("chroma-start-full"));
  cli = path.join(dir, "full-disk-server.mjs");
  await writeFile(
    cli,
    `process.stderr.write('Error creating Frontend Config: SqlxError(Database(SqliteError { code: 13, message: "database or disk is full" }))\\n' + "x".repeat(8192) + "\\n");\nprocess.exit(1);\n`,
  );
});
afterAll(() => cleanup());

const failure = (dataDir: string) =>
  startLocalChroma({ dataDir, cliPath: cli, startupTimeoutMs: 10_000 }).then(
    () => {
      throw new Error("started");
    },
    (e: unknown) => e as Error,
  );

describe("a local Chroma on a full disk", () => {
  it("is advised to free space, not to free the port", async () => {
    const e = await failure(path.join(dir, "data"));
    expect(e.message).toContain("database or disk is full");
    expect(e.message).toMatch(/What to do: the file system of .* is full/);
    expect(e.message).not.toContain("free the port");
  });

  it("leaves no 0-byte retrace-chroma-start.log in a data dir with no space left", async (ctx) => {
    const mnt = path.join(dir, "mnt");
    await mountSmallTmpfs(mnt, "16k", ctx);
    try {
      const dataDir = path.join(mnt, "data");
      await mkdir(dataDir, { recursive: true });
      await writeFile(path.join(mnt, "filler"), Buffer.alloc(16 * 1024, 1)).catch(() => undefined); // fill it up
      const e = await failure(dataDir);
      expect(e.message).not.toContain("free the port");
      expect(await readdir(dataDir)).not.toContain("retrace-chroma-start.log");
    } finally {
      unmountTmpfs(mnt);
    }
  });
});
