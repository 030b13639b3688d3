/**
 * Per-locale embedders (docs/models.md, "Per-locale embedders") through the
 * CLI on the shipped KB (en, es-419, pt-BR) with the real q8
 * bge-small-en-v1.5 (`npm run models`): naming it as the embedder applies it
 * to en only (an English model) and says so in one stderr line, es-419 and
 * pt-BR keep the default LSA; `locales.<tag>.embedder` names it for a locale
 * explicitly. The report's run.retrieval names each locale's embedder.
 *
 * Needs the model: missing, the test fails when CI=true and is skipped with
 * the reason printed otherwise (as the live BGE gate).
 */
import path from "node:path";
import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { locateModel } from "../../src/retrieval/embedders/transformers-runtime.js";
import { DEFAULT_EMBEDDING_MODEL } from "../../src/retrieval/embedders/transformers.js";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/chroma.js";

const BGE = `${DEFAULT_EMBEDDING_MODEL}@q8`;
let why: string | null = null;
let dir: string;
let cleanup: () => Promise<void>;

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir("locale-embedders"));
  const where = await locateModel(DEFAULT_EMBEDDING_MODEL, { quantized: true });
  if (!where.found) why = `${BGE} not found in ${where.lookedIn.join(", ")}: run \`npm run models\``;
});
afterAll(async () => cleanup());

async function evalWith(config: string, out: string) {
  const r = await runCli(["eval", "--store", "memory", "--config", config, "--out", `json:${out}`], {
    timeoutMs: 580_000,
  });
  const report = JSON.parse(await readFile(out, "utf8")) as {
    run: { embedder: string; retrieval: Record<string, { embedder?: string }> };
  };
  const perLocale = Object.fromEntries(Object.entries(report.run.retrieval).map(([l, c]) => [l, c.embedder]));
  return { r, report, perLocale };
}

describe("per-locale embedders", () => {
  it("naming bge-small-en-v1.5 applies it to en only; locales.<tag>.embedder names it for a locale", async (ctx) => {
    if (why !== null) {
      if (process.env.CI === "true") throw new Error(`cannot run with CI=true: ${why}`);
      console.warn(`skipped: ${why}`);
      ctx.skip();
      return;
    }
    const all = await evalWith(`{"retrieval":{"embedder":"${BGE}"}}`, path.join(dir, "all.json"));
    expect([0, 1]).toContain(all.r.exitCode);
    const lines = all.r.stderr.split("\n").filter((l) => l.includes("is for en only"));
    expect(lines).toEqual([
      `embedder: ${BGE} is for en only; es-419, pt-BR keep the default embedder (name a model per locale: locales.<tag>.embedder, docs/models.md)`,
    ]);
    expect(all.perLocale.en).toBe(BGE);
    expect(all.perLocale["es-419"]).toMatch(/^lsa-/);
    expect(all.perLocale["pt-BR"]).toBe(all.perLocale["es-419"]);
    expect(all.report.run.embedder).toBe(
      `locales(en=${BGE};es-419=${all.perLocale["es-419"]};pt-BR=${all.perLocale["pt-BR"]})`,
    );

    const es = await evalWith(
      `{"retrieval":{"embedder":"${BGE}"},"locales":{"es-419":{"embedder":"${BGE}"}}}`,
      path.join(dir, "es.json"),
    );
    expect([0, 1]).toContain(es.r.exitCode);
    expect(es.r.stderr).toContain(`embedder: ${BGE} is for en only; pt-BR keep the default embedder`);
    expect(es.perLocale).toEqual({ en: BGE, "es-419": BGE, "pt-BR": all.perLocale["pt-BR"] });
  }, 1_200_000);

  it("a named model's sweep runs on the main thread whatever run.workers says, with one warning", async (ctx) => {
    if (why !== null) {
      if (process.env.CI === "true") throw new Error(`cannot run with CI=true: ${why}`);
      console.warn(`skipped: ${why}`);
      ctx.skip();
      return;
    }
    // onnxruntime-node in worker threads beside the main one can abort the process (V8 "without proper locking").
    const r = await runCli(
      [
        "eval",
        "--kb",
        "test/fixtures/kb-mini",
        "--store",
        "memory",
        "--config",
        `{"retrieval":{"embedder":"${BGE}"},"run":{"workers":2,"concurrency":1}}`,
      ],
      { timeoutMs: 280_000 },
    );
    expect(r.exitCode).toBe(0);
    expect(r.stderr.split("\n").filter((l) => l.includes("run.workers 2: a named model"))).toHaveLength(1);
    expect(r.stderr).not.toMatch(/on worker 1/);
  }, 300_000);
});
