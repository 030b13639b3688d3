/**
 * `retrace beir` and `retrace label`'s dense pool with the real q8
 * bge-small-en-v1.5 named (`npm run models`), end to end through the CLI on
 * tiny data: a 20-document BEIR folder written here, and the mini KB.
 *
 * Needs the model: missing, the test fails when CI=true and is skipped with
 * the reason printed otherwise (as the live BGE gate).
 */
import path from "node:path";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { locateModel } from "../../src/retrieval/embedders/transformers-runtime.js";
import { DEFAULT_EMBEDDING_MODEL } from "../../src/retrieval/embedders/transformers.js";
import { runCli } from "../helpers/cli.js";
import { chromaPids, tempDir } from "../helpers/chroma.js";
import { MINI_KB } from "../helpers/fixtures.js";

const BGE = `${DEFAULT_EMBEDDING_MODEL}@q8`;
const TOPICS = ["wing lift", "boundary layer", "heat transfer", "shell buckling", "rotor noise"];
let why: string | null = null;
let dir: string;
let cleanup: () => Promise<void>;
let data: string;

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir("model-beir-label"));
  const where = await locateModel(DEFAULT_EMBEDDING_MODEL, { quantized: true });
  if (!where.found) why = `${BGE} not found in ${where.lookedIn.join(", ")}: run \`npm run models\``;
  data = path.join(dir, "ds");
  await mkdir(path.join(data, "qrels"), { recursive: true });
  const docs = Array.from({ length: 20 }, (_, i) => ({
    _id: `d${i}`,
    title: TOPICS[i % 5]!,
    text: `study ${i} of ${TOPICS[i % 5]} measured in experiment ${Math.floor(i / 5)}`,
  }));
  await writeFile(path.join(data, "corpus.jsonl"), docs.map((d) => JSON.stringify(d)).join("\n") + "\n");
  await writeFile(
    path.join(data, "queries.jsonl"),
    TOPICS.map((t, i) => JSON.stringify({ _id: `q${i}`, text: `what is known about ${t}` })).join("\n") + "\n",
  );
  await writeFile(
    path.join(data, "qrels", "test.tsv"),
    "query-id\tcorpus-id\tscore\n" + TOPICS.map((_, i) => `q${i}\td${i}\t1\nq${i}\td${i + 5}\t1`).join("\n") + "\n",
  );
});
afterAll(async () => {
  expect(chromaPids(dir)).toEqual([]);
  await cleanup();
});

function needsModel(ctx: { skip: () => void }): boolean {
  if (why === null) return false;
  if (process.env.CI === "true") throw new Error(`cannot run with CI=true: ${why}`);
  console.warn(`skipped: ${why}`);
  ctx.skip();
  return true;
}

describe("the named q8 model in beir and label", () => {
  it("beir --embedder names it: the dense run is the model's", async (ctx) => {
    if (needsModel(ctx)) return;
    const r = await runCli(
      [
        "beir",
        data,
        "--data-dir",
        path.join(dir, "chroma"),
        "--config",
        JSON.stringify({ retrieval: { embedder: BGE } }),
        "--modes",
        "dense",
        "--json",
      ],
      { env: { CHROMA_URL: "" }, timeoutMs: 280_000 },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/^embedder: Xenova\/bge-small-en-v1\.5@q8 \(requested; transformers\.js, 384-d\)$/m);
    const json = JSON.parse(r.stdout) as {
      embedder: string;
      modes: Array<{ mode: string; n: number; mean: Record<string, number> }>;
    };
    expect(json.embedder).toBe(BGE);
    expect(json.modes.map((m) => [m.mode, m.n])).toEqual([["dense", 5]]);
  }, 300_000);

  it("label --pool dense --embedder names it: the dense pool is the model's", async (ctx) => {
    if (needsModel(ctx)) return;
    const html = path.join(dir, "label.html");
    const r = await runCli(
      [
        "label",
        path.join(MINI_KB, "eval", "cases.jsonl"),
        "--kb",
        MINI_KB,
        "--store",
        "memory",
        "--config",
        JSON.stringify({ retrieval: { embedder: BGE } }),
        "--pool",
        "dense",
        "--out",
        `html:${html}`,
      ],
      { timeoutMs: 280_000 },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    // The mini KB has es-419 and pt-BR cards too: the English model embeds en, they keep the LSA (docs/models.md).
    expect(r.stderr).toMatch(
      /^embedder: locales\(en=Xenova\/bge-small-en-v1\.5@q8;es-419=lsa-[^;]+;pt-BR=lsa-[^)]+\) \(per-locale embedders\)$/m,
    );
    expect(r.stderr).toMatch(/10 pooled cards \(top 10 of dense\)/);
    expect(await readFile(html, "utf8")).toMatch(/^<!DOCTYPE html>/);
  }, 300_000);
});
