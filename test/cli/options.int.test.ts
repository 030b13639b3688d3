/** Options are checked before anything starts (docs/reliability.md): an unknown --case starts no server. */
import { existsSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "../helpers/chroma.js";
import { runCli } from "../helpers/cli.js";
import { MINI_KB } from "../helpers/fixtures.js";

let tmp: { dir: string; cleanup: () => Promise<void> };
beforeAll(async () => {
  tmp = await tempDir("options");
});
afterAll(async () => {
  await tmp?.cleanup();
});

describe("retrace eval --case", () => {
  it("rejects an unknown case id with exit 2 before any server starts or anything is ingested", async () => {
    const dataDir = path.join(tmp.dir, "chroma");
    const r = await runCli(
      [
        "eval",
        "--kb",
        MINI_KB,
        "--config",
        '{"retrieval":{"embedder":"builtin"}}',
        "--data-dir",
        dataDir,
        "--case",
        "no-such-case",
      ],
      { env: { CHROMA_URL: "" } },
    );
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('Expected `--case` to be the id of a case in the dataset, got "no-such-case"');
    expect(r.stderr).not.toMatch(/Chroma|ingest/i);
    expect(existsSync(dataDir)).toBe(false);
  }, 60_000);
});
