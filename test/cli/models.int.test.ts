/**
 * The CLI with transformers.js models (generated tiny BERT models with random
 * weights — the real loading path, no download): a model named in `--config`
 * loads from RETRACE_MODELS_DIR, `auto` stays the embedded LSA even with the
 * weights there (docs/models.md), and `--rerank` adds the cross-encoder stage
 * to the trace.
 */
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTinyBertEmbedder, makeTinyCrossEncoder } from "../fixtures/models/make-tiny-models.js";
import { runCli } from "../helpers/cli.js";
import { MINI_KB } from "../helpers/fixtures.js";
import { chromaPids, tempDir } from "../helpers/chroma.js";

let dir: string;
let cleanup: () => Promise<void>;
let modelsDir: string;

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir("models-cli"));
  modelsDir = path.join(dir, "models");
  // The ids retrace names (a named embedder, the `auto` reranker).
  await makeTinyBertEmbedder(modelsDir, { org: "Xenova", name: "bge-small-en-v1.5", pooling: "cls" });
  await makeTinyCrossEncoder(modelsDir, { org: "Xenova", name: "ms-marco-MiniLM-L-6-v2" });
});
afterAll(async () => {
  expect(chromaPids(dir)).toEqual([]);
  await cleanup();
});

describe("retrace with local transformers.js models", () => {
  it("uses the named local model and the cross-encoder for --rerank auto; auto stays LSA with the weights there", async () => {
    const r = await runCli(
      [
        "trace",
        "en-refund-009",
        "--turn",
        "0",
        "--config",
        '{"retrieval":{"embedder":"Xenova/bge-small-en-v1.5","rerank":"auto"}}',
        "--data-dir",
        path.join(dir, "chroma"),
        "--top",
        "3",
      ],
      {
        env: { RETRACE_MODELS_DIR: modelsDir },
      },
    );
    // An English model: the shipped KB's es-419 and pt-BR keep the default LSA (docs/models.md, "Per-locale embedders").
    expect(r.stderr).toMatch(
      /^embedder: locales\(en=Xenova\/bge-small-en-v1\.5@fp32;es-419=lsa-[^;]+;pt-BR=lsa-[^)]+\) \(per-locale embedders\)$/m,
    );
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(
      /config: embedder=locales\(en=Xenova\/bge-small-en-v1\.5@fp32;\S+\) mode=hybrid .* rerank=Xenova\/ms-marco-MiniLM-L-6-v2/,
    );
    expect(r.stdout).toMatch(/^ {2}reranked \(\d+ listed/m);
    const auto = await runCli(
      ["trace", "en-refund-009", "--turn", "0", "--data-dir", path.join(dir, "chroma"), "--top", "3"],
      { env: { RETRACE_MODELS_DIR: modelsDir } },
    );
    expect(auto.exitCode, auto.stderr).toBe(0);
    expect(auto.stderr).toMatch(/^embedder: lsa-\S+ \(default; real model: npm run models, docs\/models\.md\)$/m);
    expect(auto.stdout).toMatch(/config: embedder=lsa-/);
  }, 120_000);

  it("fails with exit 3 and says where it looked when a named model is missing", async () => {
    const r = await runCli(
      ["eval", "--config", '{"retrieval":{"embedder":"Xenova/no-such-model"}}', "--data-dir", path.join(dir, "chroma")],
      { env: { RETRACE_MODELS_DIR: modelsDir } },
    );
    expect(r.exitCode).toBe(3);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(path.join(modelsDir, "Xenova", "no-such-model"));
  }, 60_000);

  it("a named model found nowhere is exit 3 naming every place looked and `npm run models`", async () => {
    const env = {
      RETRACE_MODELS_DIR: path.join(dir, "nothing"),
      XDG_CACHE_HOME: path.join(dir, "xdg"),
      HF_HOME: path.join(dir, "hf"),
    };
    const r = await runCli(
      ["eval", "--config", '{"retrieval":{"embedder":"Xenova/bge-small-en-v1.5@q8"}}', "--store", "memory"],
      { env },
    );
    expect(r.exitCode).toBe(3);
    expect(r.stdout).toBe("");
    for (const place of [
      path.join(dir, "nothing", "Xenova", "bge-small-en-v1.5"),
      path.join(dir, "xdg", "retrace", "models", "Xenova", "bge-small-en-v1.5"),
      path.join(dir, "hf", "hub", "models--Xenova--bge-small-en-v1.5", "snapshots"),
      path.join("models", "Xenova", "bge-small-en-v1.5"),
    ])
      expect(r.stderr).toContain(place);
    expect(r.stderr).toContain("npm run models");
    expect(r.stderr).toContain("onnx/model_quantized.onnx");
  }, 60_000);

  it("re-ingests when the weights under the same model id change (the fingerprint is in the collection identity)", async () => {
    const own = path.join(dir, "models-changing");
    await makeTinyBertEmbedder(own, { org: "Xenova", name: "bge-small-en-v1.5", pooling: "cls", seed: 1 });
    const env = { RETRACE_MODELS_DIR: own, RETRACE_CACHE_DIR: path.join(dir, "cache"), CHROMA_URL: "" };
    const ingest = () =>
      runCli(
        [
          "ingest",
          "--kb",
          MINI_KB,
          "--config",
          JSON.stringify({ retrieval: { embedder: "Xenova/bge-small-en-v1.5" } }),
          "--data-dir",
          path.join(dir, "chroma-w"),
          "--json",
        ],
        { env },
      );
    const first = await ingest();
    expect(first.exitCode, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout).status).toBe("ingested");
    const again = await ingest();
    expect(JSON.parse(again.stdout).status).toBe("up-to-date");
    await makeTinyBertEmbedder(own, { org: "Xenova", name: "bge-small-en-v1.5", pooling: "cls", seed: 2 });
    const changed = await ingest();
    expect(changed.exitCode, changed.stderr).toBe(0);
    expect(JSON.parse(changed.stdout).status).toBe("ingested");
    expect(JSON.parse(changed.stdout).collection).not.toBe(JSON.parse(first.stdout).collection);
    expect(JSON.parse(changed.stdout).collection).toMatch(/-w[0-9a-f]{8}-d\d+$/);
  }, 180_000);
});
