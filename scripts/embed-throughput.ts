/**
 * Embedding throughput of a named model on the first N SciFact documents
 * (title + text, as `retrace beir` embeds them): wall-clock documents per
 * second and documents per CPU-second (user + system time of this process,
 * every onnxruntime thread included), which a busy shared machine distorts
 * less. docs/models.md ("Throughput") quotes its output.
 *
 *   npx tsx scripts/embed-throughput.ts [CORPUS.jsonl] [N] [BATCH]
 *   (defaults: ../shared/datasets/scifact/corpus.jsonl, 128, 32; models: bge-small-en-v1.5 fp32 and q8)
 */
import { readFileSync } from "node:fs";
import { TransformersEmbedder } from "../src/retrieval/embedders/transformers.js";

async function main(): Promise<void> {
  const [corpus = "../shared/datasets/scifact/corpus.jsonl", n = "128", batch = "32"] = process.argv.slice(2);
  const texts = readFileSync(corpus, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .slice(0, Number(n))
    .map((l) => {
      const d = JSON.parse(l) as { title?: string; text?: string };
      return `${d.title ?? ""}\n${d.text ?? ""}`;
    });
  for (const dtype of ["fp32", "q8"]) {
    const e = await TransformersEmbedder.load({ model: `Xenova/bge-small-en-v1.5@${dtype}`, batchSize: Number(batch) });
    await e.embedDocuments(texts.slice(0, 8)); // warm-up
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    await e.embedDocuments(texts);
    const wall = (performance.now() - t0) / 1000;
    const c = process.cpuUsage(c0);
    const cpu = (c.user + c.system) / 1e6;
    console.log(
      `${e.id}: ${texts.length} docs, batch ${batch}: ${wall.toFixed(1)} s wall = ${(texts.length / wall).toFixed(1)} docs/s; ` +
        `${cpu.toFixed(1)} CPU-s = ${(texts.length / cpu).toFixed(1)} docs per CPU-second`,
    );
    await e.dispose();
  }
}

void main();
