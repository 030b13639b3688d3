/**
 * A cross-encoder reranker on transformers.js: a sequence-classification
 * model (e.g. `Xenova/ms-marco-MiniLM-L-6-v2`) reads each (query, text) pair
 * together and outputs logits; the relevance score of a text is one logit.
 *
 * Which logit: with one label (ms-marco cross-encoders) that label; with
 * several, the **last** one, which is the positive/"relevant" class of binary
 * relevance classifiers (label 1 of [not relevant, relevant]). Raw logits are
 * returned (no sigmoid/softmax): monotone either way, and the trace keeps the
 * model's own numbers.
 *
 * Loading follows the offline rules of `embedders/transformers-runtime.ts`: the model
 * folder (`<modelsDir>/<org>/<name>/` or a path) must hold config.json,
 * tokenizer.json, tokenizer_config.json and onnx/model.onnx (or
 * model_quantized.onnx); otherwise ModelUnavailableError, and no download is
 * attempted unless `allowRemote`.
 */
import type { PreTrainedModel, PreTrainedTokenizer, Tensor } from "@huggingface/transformers";
import { ModelUnavailableError } from "../errors.js";
import { log } from "../log.js";
import {
  DEFAULT_BATCH_SIZE,
  DEFAULT_RERANK_MODEL,
  type LocalModelOptions,
  type ModelDtype,
  checkBatchSize,
  loadFailed,
  modelIdOf,
  prepareLoad,
  withTransformersEnv,
} from "./embedders/transformers-runtime.js";
import type { Reranker } from "./types.js";

export { DEFAULT_RERANK_MODEL };

export interface CrossEncoderRerankerOptions extends LocalModelOptions {
  /** Hub id (default `Xenova/ms-marco-MiniLM-L-6-v2`) or a path to a model folder. */
  model?: string;
}

export class CrossEncoderReranker implements Reranker {
  readonly id: string;
  /** Labels in the model config (`id2label`); the score is the last label's logit. */
  readonly numLabels: number;
  readonly modelDir: string | null;
  readonly dtype: ModelDtype;
  readonly batchSize: number;
  readonly description: string;

  private constructor(
    private readonly tokenizer: PreTrainedTokenizer,
    private readonly model: PreTrainedModel,
    fields: { id: string; numLabels: number; modelDir: string | null; dtype: ModelDtype; batchSize: number },
  ) {
    this.id = fields.id;
    this.numLabels = fields.numLabels;
    this.modelDir = fields.modelDir;
    this.dtype = fields.dtype;
    this.batchSize = fields.batchSize;
    this.description =
      `transformers.js cross-encoder ${fields.id} (${fields.numLabels} label${fields.numLabels === 1 ? "" : "s"}, ` +
      `score = ${fields.numLabels === 1 ? "the" : "the last label's"} logit, ${fields.dtype} onnx)`;
  }

  /** Loads tokenizer and model (offline unless `allowRemote`), or throws ModelUnavailableError. */
  static async load(options: CrossEncoderRerankerOptions = {}): Promise<CrossEncoderReranker> {
    const modelName = options.model ?? DEFAULT_RERANK_MODEL;
    const batchSize = checkBatchSize(options.batchSize ?? DEFAULT_BATCH_SIZE);
    const allowRemote = options.allowRemote ?? false;
    const prepared = await prepareLoad(modelName, options);
    const { tokenizer, model } = await withTransformersEnv(
      { modelsDir: prepared.modelsDir, cacheDir: options.cacheDir, allowRemote },
      async (tf) => {
        const common = {
          local_files_only: !allowRemote,
          ...(options.cacheDir !== undefined ? { cache_dir: options.cacheDir } : {}),
        };
        try {
          const tokenizer = await tf.AutoTokenizer.from_pretrained(prepared.target, common);
          const model = await tf.AutoModelForSequenceClassification.from_pretrained(prepared.target, {
            ...common,
            dtype: prepared.dtype,
          });
          return { tokenizer, model };
        } catch (e) {
          throw loadFailed(modelName, prepared.dir, e);
        }
      },
    );
    const id2label = (model.config as { id2label?: unknown }).id2label;
    const numLabels = id2label !== null && typeof id2label === "object" ? Object.keys(id2label).length : 1;
    log.debug(`reranker ${modelName}: ${prepared.dir ?? "downloaded"}, ${prepared.dtype}, ${numLabels} label(s)`);
    return new CrossEncoderReranker(tokenizer, model, {
      id: modelIdOf(modelName),
      numLabels: Math.max(numLabels, 1),
      modelDir: prepared.dir,
      dtype: prepared.dtype,
      batchSize,
    });
  }

  /** One logit per text (higher = more relevant), in input order, scored in batches of `batchSize`. */
  async score(query: string, texts: string[]): Promise<number[]> {
    const out: number[] = [];
    for (let i = 0; i < texts.length; i += this.batchSize) {
      out.push(...(await this.scoreBatch(query, texts.slice(i, i + this.batchSize))));
    }
    return out;
  }

  /** Releases the ONNX session. */
  async dispose(): Promise<void> {
    await this.model.dispose();
  }

  private async scoreBatch(query: string, texts: string[]): Promise<number[]> {
    if (texts.length === 0) return [];
    const inputs = this.tokenizer(
      texts.map(() => query),
      { text_pair: texts, padding: true, truncation: true },
    );
    const outputs = (await this.model(inputs)) as { logits?: Tensor };
    const logits = outputs.logits;
    const dims = logits?.dims ?? [];
    const labels = dims[1];
    if (logits === undefined || dims.length !== 2 || dims[0] !== texts.length || labels === undefined || labels < 1) {
      throw new ModelUnavailableError(
        this.id,
        `Model \`${this.id}\` is not a sequence classifier: expected \`logits\` of shape [${texts.length}, num_labels], got [${dims.join(", ")}]`,
      );
    }
    const data = logits.data as Float32Array;
    const scores: number[] = [];
    for (let r = 0; r < texts.length; r++) scores.push(data[r * labels + labels - 1] ?? NaN);
    return scores;
  }
}
