/**
 * `retrace beir` at 5,000 documents (docs/fusion-and-tuning.md): a seeded
 * synthetic BEIR folder (Zipf corpus of bench/lib/synthetic.ts, 200 queries,
 * each judged relevant to the document it was drawn next to) run through the
 * real command — a fresh local Chroma, ingest (with `auto`, the LSA fit),
 * bm25, dense and hybrid, shipped defaults — in a
 * child process; prints the command's own wall-time line and the total.
 * Target: ingest + all modes under a minute on this machine (printed, never
 * asserted).
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { REPO_ROOT } from "./lib/eval-set.js";
import { print } from "./lib/report.js";
import { ZipfCorpus } from "./lib/synthetic.js";

const DOCS = 5000;
const QUERIES = 200;
/** The embedder spec (`BEIR_SCALE_EMBEDDER`, default `auto`: the shipped default, LSA without model weights). */
const EMBEDDER = process.env.BEIR_SCALE_EMBEDDER ?? "auto";

export async function run(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), "retrace-beir-scale-"));
  try {
    const corpus = new ZipfCorpus({ seed: 7 });
    const chunks = corpus.chunks(DOCS, 11);
    const data = path.join(dir, "ds");
    mkdirSync(path.join(data, "qrels"), { recursive: true });
    writeFileSync(
      path.join(data, "corpus.jsonl"),
      chunks.map((c) => JSON.stringify({ _id: c.parentId, title: "", text: c.text })).join("\n"),
    );
    // Query i: the first 6 words of document 25·i, judged relevant to it (a known-item task).
    const qs = Array.from({ length: QUERIES }, (_, i) => ({ id: String(i + 1), doc: chunks[(25 * i) % DOCS]! }));
    writeFileSync(
      path.join(data, "queries.jsonl"),
      qs.map((q) => JSON.stringify({ _id: q.id, text: q.doc.text.split(/\s+/).slice(0, 6).join(" ") })).join("\n"),
    );
    writeFileSync(
      path.join(data, "qrels", "test.tsv"),
      `query-id\tcorpus-id\tscore\n${qs.map((q) => `${q.id}\t${q.doc.parentId}\t1`).join("\n")}\n`,
    );
    const t0 = performance.now();
    const r = spawnSync(
      process.execPath,
      [
        path.join(REPO_ROOT, "bin", "retrace.mjs"),
        "beir",
        data,
        "--config",
        JSON.stringify({ retrieval: { embedder: EMBEDDER } }),
        "--data-dir",
        path.join(dir, "chroma"),
      ],
      {
        cwd: REPO_ROOT,
        env: { ...process.env, CHROMA_URL: "", NO_COLOR: "1", RETRACE_LOG: "warn" },
        encoding: "utf8",
      },
    );
    const ms = performance.now() - t0;
    if (r.status !== 0) {
      print(`retrace beir failed (exit ${r.status}): ${r.stderr}`);
      return;
    }
    print(`Synthetic BEIR folder: ${DOCS} documents, ${QUERIES} known-item queries (seeded Zipf corpus).`);
    print(
      r.stdout
        .split("\n")
        .filter((l) => /^(bm25|dense|hybrid) |Wall time/.test(l))
        .join("\n"),
    );
    print(
      `Whole command (process start, Chroma start, ingest, 3 modes, stop): ${(ms / 1000).toFixed(1)} s (target: ingest + all modes under 60 s).`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
