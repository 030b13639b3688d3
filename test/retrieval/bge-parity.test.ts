/**
 * Vectors that equal an independent implementation (docs/models.md, "Parity"):
 * the real bge-small-en-v1.5 weights that `npm run models` lays out, embedded
 * by retrace's transformers.js path and by Python's onnxruntime + tokenizers
 * (test/retrieval/parity/embed.py, the packages pinned in
 * test/retrieval/parity/requirements.txt) on the same ONNX and tokenizer
 * files. Every one of 252 texts — ASCII, accented Spanish and Portuguese, CJK,
 * empty after trimming, and longer than 512 tokens — and every query (with
 * BGE's query instruction, the model card's) must have cosine >= 0.9999, for
 * the fp32 and the q8 model.
 *
 * Needs the model (`npm run models`) and the Python packages (`.ci/run`
 * installs both). Missing either, the test fails when CI=true and is skipped
 * with the reason printed otherwise.
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { locateModel, type ModelDtype } from "../../src/retrieval/embedders/transformers-runtime.js";
import {
  BGE_QUERY_INSTRUCTION,
  DEFAULT_EMBEDDING_MODEL,
  TransformersEmbedder,
} from "../../src/retrieval/embedders/transformers.js";

const SCRIPT = path.join(import.meta.dirname, "parity", "embed.py");
const MIN_COSINE = 0.9999;

const EN = [
  "How do I get a refund for a duplicate charge on my card?",
  "The order arrived late and the box was damaged.",
  "Reset your password from the account settings page.",
  "Shipping to Canada takes five to seven business days.",
  "Can I cancel my subscription before the next invoice?",
  "Large language models retrieve passages before answering.",
  "BM25 scores terms by frequency and inverse document frequency.",
  "The quick brown fox jumps over the lazy dog.",
  "Error 503: the service is temporarily unavailable, retry later.",
  "Contact support@example.com or call +1 (555) 010-2030.",
];
const ES_PT = [
  "¿Cómo solicito el reembolso de un cargo duplicado?",
  "El pedido llegó tarde y la caja estaba dañada.",
  "Restablezca su contraseña desde la configuración de la cuenta.",
  "Año, niño, corazón, acción, pingüino: acentos y eñes.",
  "Não consigo acessar minha conta após a atualização.",
  "A entrega para São Paulo leva de três a cinco dias úteis.",
  "Você pode cancelar a assinatura antes da próxima fatura?",
  "Informações sobre devolução: até trinta dias após a compra.",
  "Atenção: coração, ação, pão, avó e avô.",
  "La política de devoluciones cambió el último trimestre.",
];
const CJK = [
  "如何申请重复扣款的退款？",
  "订单延迟到达，包装盒也损坏了。",
  "请在账户设置页面重置密码。",
  "注文が遅れて届き、箱が破損していました。",
  "パスワードはアカウント設定から再設定できます。",
  "次回の請求前にサブスクリプションを解約できますか？",
  "중복 결제에 대한 환불은 어떻게 받나요?",
  "주문이 늦게 도착했고 상자가 손상되었습니다.",
  "检索增强生成先检索段落再回答问题。",
  "東京から大阪まで新幹線で約二時間半です。",
];
const BLANK = ["", " ", "   ", "\t", "\n", "\n\n  \t ", "\u00a0", "\u3000", " \r\n ", "\t\t\t"];

/** 252 texts, the same on every run: each list as is, in pairs, with numbers, and long ones (> 512 tokens). */
function parityTexts(): string[] {
  const out: string[] = [];
  for (const list of [EN, ES_PT, CJK]) {
    out.push(...list);
    for (let i = 0; i < list.length; i++) out.push(`${list[i]} ${list[(i + 3) % list.length]}`);
    for (let i = 0; i < list.length; i++) out.push(`${i + 1}. ${list[(i + 7) % list.length]} (ref #${1000 + i * 37})`);
    for (let i = 0; i < list.length; i++) out.push(list[i]!.toUpperCase());
  }
  out.push(...BLANK);
  for (let i = 0; i < 10; i++) out.push(`  ${EN[i]}  `, `\t${ES_PT[i]}\n`);
  // Accents decomposed (NFD: a letter and a combining mark), and three scripts in one text.
  for (let i = 0; i < 10; i++) out.push(ES_PT[i]!.normalize("NFD"), `${EN[i]} ${ES_PT[i]} ${CJK[i]}`);
  // Short, query-like heads of each text.
  for (const list of [EN, ES_PT, CJK])
    for (const t of list) out.push(t.slice(0, Math.max(4, Math.floor(t.length / 3))));
  // Longer than 512 tokens: truncated the same way on both sides ([CLS] … [SEP] kept). Few: each costs a full 512-token pass.
  for (let i = 0; i < 3; i++) {
    out.push(Array.from({ length: 60 }, (_, j) => EN[(i + j) % 10]).join(" "));
    out.push(Array.from({ length: 50 }, (_, j) => ES_PT[(i + j) % 10]).join(" "));
    out.push(Array.from({ length: 40 }, (_, j) => CJK[(i + j) % 10]).join(""));
    out.push(Array.from({ length: 30 }, (_, j) => `${EN[j % 10]} ${CJK[(i + j) % 10]}`).join(" "));
  }
  return out;
}

/** Python's vectors, in batches of `batch` padded to their longest text, as retrace batches them (a q8 model's dynamic quantisation scales over the whole batch). */
function pythonVectors(dir: string, onnx: string, texts: string[], batch: number): number[][] {
  const r = spawnSync("python3", [SCRIPT], {
    input: JSON.stringify({ model_dir: dir, onnx, max_length: 512, pooling: "cls", batch, texts }),
    encoding: "utf8",
    maxBuffer: 256 * 1024 * 1024,
  });
  if (r.status !== 0) throw new Error(`python3 ${SCRIPT} failed (exit ${r.status}): ${r.stderr}`);
  return (JSON.parse(r.stdout) as { vectors: number[][] }).vectors;
}

function cosine(a: number[], b: number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += (a[i] ?? 0) * (b[i] ?? 0);
    na += (a[i] ?? 0) ** 2;
    nb += (b[i] ?? 0) ** 2;
  }
  return dot / Math.sqrt(na * nb);
}

/** Why the test cannot run here, or null: the model files, python3, onnxruntime and tokenizers. */
async function missing(dtype: ModelDtype): Promise<string | null> {
  const where = await locateModel(DEFAULT_EMBEDDING_MODEL, { quantized: dtype === "q8" });
  if (!where.found)
    return `${DEFAULT_EMBEDDING_MODEL} (${dtype}) not found in ${where.lookedIn.join(", ")}: run \`npm run models\``;
  const py = spawnSync("python3", ["-c", "import onnxruntime, tokenizers, numpy"], { encoding: "utf8" });
  if (py.status !== 0)
    return `python3 with onnxruntime, tokenizers and numpy is not available (${(py.stderr || String(py.error)).trim().split("\n").pop()}): pip install -r test/retrieval/parity/requirements.txt`;
  return null;
}

const loaded: TransformersEmbedder[] = [];
afterAll(async () => {
  for (const e of loaded) await e.dispose();
});

describe("bge-small-en-v1.5: retrace's embeddings equal onnxruntime + tokenizers (Python)", () => {
  for (const dtype of ["fp32", "q8"] as const) {
    it(`${dtype}: cosine >= ${MIN_COSINE} on every one of 252 texts and on the queries`, async (ctx) => {
      const why = await missing(dtype);
      if (why !== null) {
        if (process.env.CI === "true") throw new Error(`parity test cannot run with CI=true: ${why}`);
        console.warn(`skipped: ${why}`);
        ctx.skip();
        return;
      }
      const e = await TransformersEmbedder.load({ model: `${DEFAULT_EMBEDDING_MODEL}@${dtype}`, batchSize: 16 });
      loaded.push(e);
      expect(e.id).toBe(`${DEFAULT_EMBEDDING_MODEL}@${dtype}`);
      expect(e.maxTokens).toBe(512);
      expect(e.queryPrefix).toBe(BGE_QUERY_INSTRUCTION);
      const texts = parityTexts();
      expect(texts.length).toBeGreaterThanOrEqual(200);
      const ours = await e.embedDocuments(texts);
      const theirs = pythonVectors(
        e.modelDir ?? "",
        dtype === "q8" ? "onnx/model_quantized.onnx" : "onnx/model.onnx",
        texts,
        16,
      );
      expect(theirs).toHaveLength(texts.length);
      const low = texts
        .map((t, i) => ({ i, text: t.slice(0, 40), cos: cosine(ours[i] ?? [], theirs[i] ?? []) }))
        .filter((x) => !(x.cos >= MIN_COSINE));
      expect(low).toEqual([]);
      // Queries: the instruction is prepended on our side only by embedQuery; Python gets the prefixed text.
      const queries = [EN[0]!, ES_PT[4]!, CJK[3]!, ""];
      const q = await Promise.all(queries.map((t) => e.embedQuery(t)));
      const qp = pythonVectors(
        e.modelDir ?? "",
        dtype === "q8" ? "onnx/model_quantized.onnx" : "onnx/model.onnx",
        queries.map((t) => `${BGE_QUERY_INSTRUCTION}${t}`),
        1, // embedQuery embeds one text at a time
      );
      for (let i = 0; i < queries.length; i++)
        expect(cosine(q[i] ?? [], qp[i] ?? [])).toBeGreaterThanOrEqual(MIN_COSINE);
    }, 600_000);
  }
});
