/**
 * Sentence embeddings with transformers.js (`@huggingface/transformers` 3.x),
 * loaded **offline** by default.
 *
 * Where a model is looked for, the offline checks and the transformers.js
 * environment: transformers-runtime.ts (its public names are re-exported here;
 * the `@internal` ones that touch transformers.js' own types are not, so the
 * shipped declarations never name the optional peer).
 *
 * Pooling rule (which token vectors make the sentence vector), first match wins:
 *   1. the `pooling` option;
 *   2. sentence-transformers' pooling config in the model folder: the folder of
 *      the `...Pooling` entry of `modules.json`, else `1_Pooling/`; its
 *      `config.json` says `pooling_mode_cls_token` -> cls,
 *      `pooling_mode_mean_tokens` -> mean (any other mode is rejected: it
 *      would be silently wrong);
 *   3. a known model family: `bge-*`, `mxbai-embed-*`, `snowflake-arctic-embed*`
 *      -> cls (they are trained with the [CLS] vector);
 *   4. otherwise mean pooling over the attention mask (the sentence-transformers
 *      default).
 * Vectors are always L2-normalised (cosine = dot product).
 *
 * Query instruction (prepended to queries only, never to documents), first
 * match wins: the `queryPrefix` option (`""` turns it off); the `query` prompt
 * of sentence-transformers' `config_sentence_transformers.json` in the model
 * folder (`npm run models` writes BGE's); the model card of a known family
 * (`bge-{small,base,large}-en-v1.5` -> "Represent this sentence for searching
 * relevant passages: "); otherwise none.
 *
 * Truncation: inputs are cut to the tokenizer's `model_max_length`, never
 * beyond the model's `max_position_embeddings` (512 for BERT-style models),
 * the way Hugging Face's `tokenizers` (and so sentence-transformers) cut them:
 * the text's tokens are cut and the special tokens kept (`[CLS] … [SEP]`).
 * transformers.js' own truncation cuts the encoded row, `[SEP]` included, so
 * this module tokenizes, truncates and pads itself and runs the model on
 * the result (test/retrieval/bge-parity.test.ts checks it against Python).
 *
 * The embedder id names the model and its precision: `Xenova/bge-small-en-v1.5@fp32`,
 * `…@q8` (docs/models.md); a spec may end in `@fp32` or `@q8` to pick one.
 */
import { join } from "node:path";
import type { FeatureExtractionPipeline, Tensor } from "@huggingface/transformers";

/** transformers.js' Tensor class (the optional peer's; only its type is imported here). */
type TensorClass = typeof Tensor;
/** The slice of transformers.js' tokenizer this module calls. */
interface EncodingTokenizer {
  encode(text: string, options?: { add_special_tokens?: boolean }): number[];
  pad_token_id?: number | null;
  model_max_length?: number;
}
import {
  DataValidationError,
  DimensionMismatchError,
  InvalidArgumentError,
  ModelUnavailableError,
} from "../../errors.js";
import { log } from "../../log.js";
import type { Embedder } from "../types.js";
import {
  DEFAULT_BATCH_SIZE,
  type LocalModelOptions,
  type ModelDtype,
  checkBatchSize,
  exists,
  loadFailed,
  modelIdOf,
  parseModelSpec,
  prepareLoad,
  withTransformersEnv,
} from "./transformers-runtime.js";
import { readJsonFileOrThrow } from "../../kb/json.js";

export {
  ALLOW_DOWNLOADS_ENV,
  DEFAULT_BATCH_SIZE,
  DEFAULT_RERANK_MODEL,
  FETCHABLE_MODELS,
  MODELS_DIR_ENV,
  ONNX_FILES,
  REQUIRED_MODEL_FILES,
  checkBatchSize,
  defaultModelsDir,
  downloadsAllowedByEnv,
  huggingFaceHubCache,
  isModelPath,
  loadFailed,
  locateModel,
  modelIdOf,
  modelSearchDirs,
  modelUnavailable,
  modelsCacheDir,
  parseModelSpec,
  prepareLoad,
  type LocalModelOptions,
  type ModelDtype,
  type ModelLocation,
  type PreparedLoad,
  type TransformersEnvSettings,
} from "./transformers-runtime.js";

/** The transformers embedding model retrace's docs name (docs/models.md); `auto` never picks it: it must be named. */
export const DEFAULT_EMBEDDING_MODEL = "Xenova/bge-small-en-v1.5";

/** BGE v1.5's query instruction for retrieval (the model card's "Represent this sentence for searching relevant passages: "). */
export const BGE_QUERY_INSTRUCTION = "Represent this sentence for searching relevant passages: ";

const QUERY_INSTRUCTIONS: { pattern: RegExp; instruction: string; source: string }[] = [
  {
    pattern: /(^|[-_/])bge-(small|base|large)-en-v1\.5$/i,
    instruction: BGE_QUERY_INSTRUCTION,
    source: "bge-*-en-v1.5 model card",
  },
];

/** Applies the query-instruction rule of this module's doc comment. */
export async function resolveQueryInstruction(
  model: string,
  dir: string | null,
  explicit?: string,
): Promise<{ instruction: string; source: string }> {
  if (explicit !== undefined) return { instruction: explicit, source: "option" };
  if (dir !== null) {
    const file = join(dir, "config_sentence_transformers.json");
    if (await exists(file)) {
      const cfg = (await readJsonFileOrThrow(file, "a sentence-transformers config_sentence_transformers.json")) as {
        prompts?: unknown;
      }; // src/kb/json.ts
      const prompts = cfg.prompts as Record<string, unknown> | undefined;
      if (prompts !== undefined && typeof prompts === "object" && prompts !== null && "query" in prompts) {
        const q = prompts.query;
        if (typeof q !== "string")
          throw new DataValidationError([{ file, field: "prompts.query", message: "expected a string" }]);
        return { instruction: q, source: "config_sentence_transformers.json" };
      }
    }
  }
  const name = model.replace(/[\\/]+$/, "");
  for (const k of QUERY_INSTRUCTIONS) if (k.pattern.test(name)) return { instruction: k.instruction, source: k.source };
  return { instruction: "", source: "none" };
}

export type Pooling = "mean" | "cls";

// ---------------------------------------------------------------- pooling

export interface PoolingChoice {
  pooling: Pooling;
  /** Why: `option`, the pooling config file (relative to the model folder), `known model family (...)`, or `default`. */
  source: string;
}

const CLS_FAMILIES: { pattern: RegExp; family: string }[] = [
  { pattern: /(^|[-_/])bge-/i, family: "bge" },
  { pattern: /(^|[-_/])mxbai-embed/i, family: "mxbai-embed" },
  { pattern: /(^|[-_/])snowflake-arctic-embed/i, family: "snowflake-arctic-embed" },
];

/** Which folder of the model holds sentence-transformers' Pooling config (`modules.json`, else `1_Pooling`). */
async function poolingConfigPath(dir: string): Promise<string> {
  const modulesPath = join(dir, "modules.json");
  if (await exists(modulesPath)) {
    const modules = await readJsonFileOrThrow(
      modulesPath,
      "a sentence-transformers modules.json (a JSON array of modules)",
    ); // file:line:column (src/kb/json.ts)
    if (Array.isArray(modules)) {
      for (const m of modules as { type?: unknown; path?: unknown }[]) {
        if (typeof m.type === "string" && m.type.endsWith("Pooling") && typeof m.path === "string") {
          return join(m.path, "config.json");
        }
      }
    }
  }
  return join("1_Pooling", "config.json");
}

/** Applies the pooling rule of this module's doc comment. */
export async function resolvePooling(model: string, dir: string | null, explicit?: Pooling): Promise<PoolingChoice> {
  if (explicit !== undefined) {
    if (explicit !== "cls" && explicit !== "mean")
      throw new InvalidArgumentError("pooling", '"cls" or "mean"', explicit);
    return { pooling: explicit, source: "option" };
  }
  if (dir !== null) {
    const rel = await poolingConfigPath(dir);
    const file = join(dir, rel);
    if (await exists(file)) {
      const cfg = (await readJsonFileOrThrow(file, "a sentence-transformers Pooling config.json")) as Record<
        string,
        unknown
      >; // src/kb/json.ts
      const modes = Object.entries(cfg)
        .filter(([k, v]) => k.startsWith("pooling_mode_") && v === true)
        .map(([k]) => k);
      const named = typeof cfg.pooling_mode === "string" ? cfg.pooling_mode : undefined;
      if (named === "cls" || (modes.length === 1 && modes[0] === "pooling_mode_cls_token")) {
        return { pooling: "cls", source: rel };
      }
      if (named === "mean" || (modes.length === 1 && modes[0] === "pooling_mode_mean_tokens")) {
        return { pooling: "mean", source: rel };
      }
      throw new DataValidationError([
        {
          file,
          field: named !== undefined ? "pooling_mode" : modes.join("+") || "pooling_mode_*",
          message: `selects pooling ${named ?? (modes.length === 0 ? "(none)" : modes.join(" + "))}; retrace supports exactly one of pooling_mode_cls_token or pooling_mode_mean_tokens (pass \`pooling\` to override)`,
        },
      ]);
    }
  }
  for (const { pattern, family } of CLS_FAMILIES) {
    if (pattern.test(model)) return { pooling: "cls", source: `known model family (${family} -> cls)` };
  }
  return { pooling: "mean", source: "default" };
}

// ---------------------------------------------------------------- the embedder

export interface TransformersEmbedderOptions extends LocalModelOptions {
  /** Hub id (`Xenova/bge-small-en-v1.5`, the default) or a path to a model folder. */
  model?: string;
  /** Overrides the pooling rule. */
  pooling?: Pooling;
  /** Prepended to queries only (some models want an instruction, e.g. bge's "Represent this sentence ..."). Default: the module doc's rule. */
  queryPrefix?: string;
}

/** L2-normalises in place; a zero vector stays zero (no NaN). */
function l2normalize(v: number[]): number[] {
  let sum = 0;
  for (const x of v) sum += x * x;
  const norm = Math.sqrt(sum);
  if (norm === 0) return v;
  for (let i = 0; i < v.length; i++) v[i] = (v[i] ?? 0) / norm;
  return v;
}

function hiddenSizeOf(config: unknown): number | undefined {
  const c = config as { hidden_size?: unknown; d_model?: unknown; dim?: unknown };
  const size = c.hidden_size ?? c.d_model ?? c.dim;
  return typeof size === "number" && Number.isInteger(size) && size > 0 ? size : undefined;
}

/** A transformers.js feature-extraction model as an `Embedder`: pooled, L2-normalised, batched. */
export class TransformersEmbedder implements Embedder {
  readonly id: string;
  readonly dimension: number;
  readonly description: string;
  readonly pooling: Pooling;
  /** Why this pooling was chosen (see the module doc). */
  readonly poolingSource: string;
  /** The folder the model was read from (null if it was downloaded into the cache). */
  readonly modelDir: string | null;
  readonly dtype: ModelDtype;
  readonly batchSize: number;
  /** Prepended to queries only (the module doc's rule). */
  readonly queryPrefix: string;
  /** Longest input in tokens; longer texts are truncated. */
  readonly maxTokens: number;

  private constructor(
    private readonly extractor: FeatureExtractionPipeline,
    private readonly tensor: TensorClass,
    /** The special tokens the tokenizer appends after the text (`[SEP]`), kept when a text is truncated. */
    private readonly specialSuffix: number[],
    fields: {
      id: string;
      dimension: number;
      pooling: PoolingChoice;
      modelDir: string | null;
      dtype: ModelDtype;
      batchSize: number;
      queryPrefix: string;
      maxTokens: number;
      modelType: string;
    },
  ) {
    this.id = fields.id;
    this.dimension = fields.dimension;
    this.pooling = fields.pooling.pooling;
    this.poolingSource = fields.pooling.source;
    this.modelDir = fields.modelDir;
    this.dtype = fields.dtype;
    this.batchSize = fields.batchSize;
    this.queryPrefix = fields.queryPrefix;
    this.maxTokens = fields.maxTokens;
    this.description =
      `transformers.js ${fields.id} (${fields.modelType}, ${fields.dimension}-d, ${this.pooling} pooling from ${this.poolingSource}, ` +
      `L2-normalised, ${fields.dtype} onnx, ${fields.maxTokens > 0 ? `truncated at ${fields.maxTokens} tokens` : "no truncation"}` +
      `${fields.queryPrefix !== "" ? ", query instruction" : ""}): semantic dense embeddings`;
  }

  /** Loads the model (offline unless `allowRemote`), or throws ModelUnavailableError. */
  static async load(options: TransformersEmbedderOptions = {}): Promise<TransformersEmbedder> {
    const spec = parseModelSpec(options.model ?? DEFAULT_EMBEDDING_MODEL);
    const model = spec.model;
    const batchSize = checkBatchSize(options.batchSize ?? DEFAULT_BATCH_SIZE);
    const allowRemote = options.allowRemote ?? false;
    const quantized = spec.dtype !== undefined ? spec.dtype === "q8" : options.quantized;
    const prepared = await prepareLoad(model, { ...options, ...(quantized !== undefined ? { quantized } : {}) });
    const pooling = await resolvePooling(model, prepared.dir, options.pooling);
    const query = await resolveQueryInstruction(model, prepared.dir, options.queryPrefix);
    let tensor: TensorClass | undefined;
    const extractor = await withTransformersEnv(
      { modelsDir: prepared.modelsDir, cacheDir: options.cacheDir, allowRemote },
      async (tf) => {
        tensor = tf.Tensor;
        try {
          return await tf.pipeline("feature-extraction", prepared.target, {
            local_files_only: !allowRemote,
            dtype: prepared.dtype,
            ...(options.cacheDir !== undefined ? { cache_dir: options.cacheDir } : {}),
          });
        } catch (e) {
          throw loadFailed(model, prepared.dir, e);
        }
      },
    );
    const dimension = hiddenSizeOf(extractor.model.config);
    if (dimension === undefined) {
      await extractor.dispose();
      throw new ModelUnavailableError(
        model,
        `Model \`${model}\` has no positive integer \`hidden_size\` in its config.json`,
      );
    }
    const modelType = String((extractor.model.config as { model_type?: unknown }).model_type ?? "unknown");
    // Truncation at the model's positions: a tokenizer_config without model_max_length would let a long text through
    // to the ONNX session, which fails past max_position_embeddings (docs/models.md).
    const positions = (extractor.model.config as { max_position_embeddings?: unknown }).max_position_embeddings;
    const tokenizer = extractor.tokenizer as unknown as EncodingTokenizer;
    const limit = typeof positions === "number" && positions > 0 ? positions : Infinity;
    const maxTokens = Math.min(tokenizer.model_max_length ?? Infinity, limit);
    if (Number.isFinite(maxTokens)) tokenizer.model_max_length = maxTokens;
    log.debug(
      `embedder ${model}: ${prepared.dir ?? "downloaded"}, ${prepared.dtype}, ${pooling.pooling} pooling (${pooling.source}), ` +
        `query instruction from ${query.source}, at most ${maxTokens} tokens`,
    );
    // The specials after the text: those of an empty text's encoding past the ones a text starts with ([CLS] | [SEP]).
    const empty = tokenizer.encode("");
    const one = tokenizer.encode("a");
    let lead = 0;
    while (lead < empty.length && empty[lead] === one[lead]) lead++;
    return new TransformersEmbedder(extractor, tensor as TensorClass, empty.slice(lead), {
      id: `${modelIdOf(model)}@${prepared.dtype}`,
      dimension,
      pooling,
      modelDir: prepared.dir,
      dtype: prepared.dtype,
      batchSize,
      queryPrefix: query.instruction,
      maxTokens: Number.isFinite(maxTokens) ? maxTokens : 0,
      modelType,
    });
  }

  /** Embeds in batches of `batchSize`; one unit-length vector per text, in input order. */
  async embedDocuments(texts: string[]): Promise<number[][]> {
    const out: number[][] = [];
    for (let i = 0; i < texts.length; i += this.batchSize) {
      out.push(...(await this.embedBatch(texts.slice(i, i + this.batchSize))));
    }
    return out;
  }

  async embedQuery(text: string): Promise<number[]> {
    const [v] = await this.embedBatch([`${this.queryPrefix}${text}`]);
    if (v === undefined) throw new DimensionMismatchError(this.dimension, 0, `the query embedding of ${this.id}`);
    return v;
  }

  /** Releases the ONNX session. */
  async dispose(): Promise<void> {
    await this.extractor.dispose();
  }

  /** A text's token ids: with the special tokens, truncated to `maxTokens` keeping the trailing specials (the module doc). */
  private encode(text: string): number[] {
    const tokenizer = this.extractor.tokenizer as unknown as EncodingTokenizer;
    const ids = tokenizer.encode(text);
    if (this.maxTokens <= 0 || ids.length <= this.maxTokens) return ids;
    return [...ids.slice(0, this.maxTokens - this.specialSuffix.length), ...this.specialSuffix];
  }

  private async embedBatch(texts: string[]): Promise<number[][]> {
    if (texts.length === 0) return [];
    const rows = texts.map((t) => this.encode(t));
    const n = rows.length;
    const len = Math.max(...rows.map((r) => r.length));
    const pad = BigInt((this.extractor.tokenizer as unknown as EncodingTokenizer).pad_token_id ?? 0);
    const ids = new BigInt64Array(n * len).fill(pad);
    const mask = new BigInt64Array(n * len);
    rows.forEach((r, i) => {
      r.forEach((id, j) => {
        ids[i * len + j] = BigInt(id);
        mask[i * len + j] = 1n;
      });
    });
    const outputs = (await this.extractor.model({
      input_ids: new this.tensor("int64", ids, [n, len]),
      attention_mask: new this.tensor("int64", mask, [n, len]),
      token_type_ids: new this.tensor("int64", new BigInt64Array(n * len), [n, len]),
    })) as Record<string, Tensor | undefined>;
    const hidden = outputs.last_hidden_state ?? outputs.token_embeddings;
    const width = hidden?.dims[2] ?? 0;
    if (hidden === undefined || hidden.dims.length !== 3 || hidden.dims[0] !== n || width !== this.dimension) {
      throw new DimensionMismatchError(
        this.dimension,
        width,
        `the output of ${this.id} (dims [${hidden?.dims.join(", ") ?? "none"}])`,
      );
    }
    const data = hidden.data as Float32Array;
    const seq = hidden.dims[1] ?? len;
    const out: number[][] = [];
    for (let i = 0; i < n; i++) {
      const v = new Array<number>(width).fill(0);
      if (this.pooling === "cls") {
        for (let d = 0; d < width; d++) v[d] = data[i * seq * width + d] ?? 0;
      } else {
        const count = rows[i]?.length ?? 0;
        for (let j = 0; j < count; j++)
          for (let d = 0; d < width; d++) v[d] = (v[d] ?? 0) + (data[(i * seq + j) * width + d] ?? 0);
        for (let d = 0; d < width; d++) v[d] = (v[d] ?? 0) / Math.max(count, 1);
      }
      out.push(l2normalize(v));
    }
    return out;
  }
}
