/**
 * A BEIR-layout dataset (corpus.jsonl, queries.jsonl, qrels/test.tsv) read
 * into memory. Qrels are graded (`score` column); only positive judgments
 * make a document relevant (trec_eval's relevance_level 1).
 */
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";

export interface BeirDocument {
  id: string;
  title: string;
  text: string;
}

export interface BeirQuery {
  id: string;
  text: string;
}

export interface BeirDataset {
  dir: string;
  corpus: BeirDocument[];
  queries: BeirQuery[];
  /** query id → (doc id → graded relevance). */
  qrels: Map<string, Map<string, number>>;
}

const FILES = ["corpus.jsonl", "queries.jsonl", path.join("qrels", "test.tsv")];

/** The files of a BEIR dataset missing under `dir` (empty when complete). */
export function missingBeirFiles(dir: string): string[] {
  return FILES.filter((f) => !existsSync(path.join(dir, f)));
}

async function readJsonl(file: string): Promise<Record<string, unknown>[]> {
  const text = await readFile(file, "utf8");
  const out: Record<string, unknown>[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    if (line.trim() === "") return;
    try {
      out.push(JSON.parse(line) as Record<string, unknown>);
    } catch (e) {
      throw new Error(`${file}:${i + 1}: not JSON (${(e as Error).message})`);
    }
  });
  return out;
}

function str(row: Record<string, unknown>, key: string, file: string): string {
  const v = row[key];
  if (typeof v === "string") return v;
  if (typeof v === "number") return String(v);
  if (v === undefined && key === "title") return "";
  throw new Error(`${file}: expected \`${key}\` to be a string, got ${JSON.stringify(v)}`);
}

export async function loadBeir(dir: string): Promise<BeirDataset> {
  const corpusFile = path.join(dir, "corpus.jsonl");
  const queriesFile = path.join(dir, "queries.jsonl");
  const qrelsFile = path.join(dir, "qrels", "test.tsv");
  const corpus = (await readJsonl(corpusFile)).map((r) => ({ id: str(r, "_id", corpusFile), title: str(r, "title", corpusFile), text: str(r, "text", corpusFile) }));
  const queries = (await readJsonl(queriesFile)).map((r) => ({ id: str(r, "_id", queriesFile), text: str(r, "text", queriesFile) }));
  const qrels = new Map<string, Map<string, number>>();
  const lines = (await readFile(qrelsFile, "utf8")).split(/\r?\n/);
  lines.forEach((line, i) => {
    if (line.trim() === "") return;
    const [qid, did, score] = line.split("\t");
    if (i === 0 && qid === "query-id") return; // header
    const grade = Number(score);
    if (qid === undefined || did === undefined || !Number.isFinite(grade)) {
      throw new Error(`${qrelsFile}:${i + 1}: expected "query-id<TAB>corpus-id<TAB>score", got ${JSON.stringify(line)}`);
    }
    let m = qrels.get(qid);
    if (m === undefined) {
      m = new Map();
      qrels.set(qid, m);
    }
    m.set(did, grade);
  });
  return { dir, corpus, queries, qrels };
}
