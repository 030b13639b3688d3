/**
 * The CLI with transformers.js models (generated tiny BERT models with random
 * weights — the real loading path, no download): `--embedder auto` picks the
 * local model when its weights are under RETRACE_MODELS_DIR, and `--rerank`
 * adds the cross-encoder stage to the trace.
 */
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTinyBertEmbedder, makeTinyCrossEncoder } from "../fixtures/models/make-tiny-models.js";
import { runCli } from "../helpers/cli.js";
import { chromaPids, tempDir } from "../helpers/chroma.js";

let dir: string;
let cleanup: () => Promise<void>;
let modelsDir: string;

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir("models-cli"));
  modelsDir = path.join(dir, "models");
  // The default model ids, so that `auto` finds them.
  await makeTinyBertEmbedder(modelsDir, { org: "Xenova", name: "bge-small-en-v1.5", pooling: "cls" });
  await makeTinyCrossEncoder(modelsDir, { org: "Xenova", name: "ms-marco-MiniLM-L-6-v2" });
});
afterAll(async () => {
  expect(chromaPids(dir)).toEqual([]);
  await cleanup();
});

describe("retrace with local transformers.js models", () => {
  it("uses the local model for --embedder auto and the cross-encoder for --rerank auto", async () => {
    const r = await runCli(["trace", "en-refund-009", "--turn", "0", "--rerank", "auto", "--data-dir", path.join(dir, "chroma"), "--top", "3"], {
      env: { RETRACE_MODELS_DIR: modelsDir },
    });
    expect(r.stderr).toMatch(/embedder: .*Xenova\/bge-small-en-v1\.5/);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/config: embedder=Xenova\/bge-small-en-v1\.5 mode=hybrid .* rerank=Xenova\/ms-marco-MiniLM-L-6-v2/);
    expect(r.stdout).toMatch(/^ {2}reranked \(\d+ listed/m);
  }, 120_000);

  it("fails with exit 3 and says where it looked when a named model is missing", async () => {
    const r = await runCli(["eval", "--embedder", "Xenova/no-such-model", "--data-dir", path.join(dir, "chroma")], { env: { RETRACE_MODELS_DIR: modelsDir } });
    expect(r.exitCode).toBe(3);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(path.join(modelsDir, "Xenova", "no-such-model"));
  }, 60_000);
});
