/**
 * Locating and loading transformers.js (`@huggingface/transformers` 3.x)
 * models, **offline** by default: the helpers shared by every model loader of
 * retrace (the embedder of transformers.ts, the cross-encoder of
 * ../rerank-model.ts).
 *
 * Where a model is looked for (docs/models.md). A model id such as
 * `Xenova/bge-small-en-v1.5` is a folder `<dir>/Xenova/bge-small-en-v1.5/`
 * under the models directory `modelsDir` when one is given; else, in order,
 * under `$RETRACE_MODELS_DIR` (when set), `<cwd>/models`, and the folder
 * `npm run models` fills (`${XDG_CACHE_HOME:-~/.cache}/retrace/models`), then
 * in the Hugging Face hub cache users already have
 * (`$HF_HUB_CACHE`, else `$HF_HOME/hub`, else `~/.cache/huggingface/hub`:
 * `models--Xenova--bge-small-en-v1.5/snapshots/<revision>/`). A value that is
 * a path (absolute, or starting with `./` or `../`) is that folder itself. A
 * spec may end in `@fp32` or `@q8` to pick the precision.
 * The folder holds what transformers.js loads for an encoder:
 * `config.json`, `tokenizer.json`, `tokenizer_config.json` and
 * `onnx/model.onnx` (fp32) or `onnx/model_quantized.onnx` (q8). With
 * `allowRemote = false` (the default) every file is checked **before**
 * transformers.js is called, and a missing one fails fast with a
 * `ModelUnavailableError` that names every folder looked in, what is missing
 * and how to fetch it; no download is ever attempted (`env.allowRemoteModels =
 * false` and `local_files_only: true` as well). Downloads from the Hugging
 * Face Hub happen only when the user opts in (`allowRemote`, or
 * `RETRACE_ALLOW_DOWNLOADS=1` for the CLI).
 *
 * transformers.js keeps its settings in one global `env`; every load here
 * sets all the fields it depends on and loads run one at a time, so two
 * embedders with different model folders cannot see each other's settings.
 */
import { access, readFile, readdir } from "node:fs/promises";
import { homedir } from "node:os";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { InvalidArgumentError, ModelUnavailableError, isRetraceError } from "../../errors.js";
import { missingPeerError } from "../../peers.js";

/** The cross-encoder `auto` reranking uses when its weights are present. */
export const DEFAULT_RERANK_MODEL = "Xenova/ms-marco-MiniLM-L-6-v2";
export const DEFAULT_BATCH_SIZE = 32;
/** Environment variable that points at the models directory. */
export const MODELS_DIR_ENV = "RETRACE_MODELS_DIR";
/** Environment variable that opts in to downloads from the Hugging Face Hub (`1` or `true`); off by default. */
export const ALLOW_DOWNLOADS_ENV = "RETRACE_ALLOW_DOWNLOADS";
/** The models `npm run models` fetches (scripts/models.json): a missing one's error says to run it. */
export const FETCHABLE_MODELS: readonly string[] = ["Xenova/bge-small-en-v1.5"];

/** transformers.js dtype, which picks the ONNX file: fp32 -> onnx/model.onnx, q8 -> onnx/model_quantized.onnx. */
export type ModelDtype = "fp32" | "q8";

/** Files every encoder folder needs besides its ONNX weights. */
export const REQUIRED_MODEL_FILES = ["config.json", "tokenizer.json", "tokenizer_config.json"] as const;
export const ONNX_FILES: Record<ModelDtype, string> = { fp32: "onnx/model.onnx", q8: "onnx/model_quantized.onnx" };

/** Options shared by every transformers.js model loader of retrace. */
export interface LocalModelOptions {
  /** Folder that holds `<org>/<name>/` model folders. Default: `$RETRACE_MODELS_DIR`, else `<cwd>/models`. */
  modelsDir?: string;
  /** transformers.js file cache (`env.cacheDir`); when given, it is also searched and downloads land there. */
  cacheDir?: string;
  /** Allow downloads from the Hugging Face Hub. Default false: offline only. */
  allowRemote?: boolean;
  /** true -> q8 weights (`onnx/model_quantized.onnx`), false -> fp32 (`onnx/model.onnx`); default: fp32 when present, else q8. */
  quantized?: boolean;
  /** Texts per model call. Default 32. */
  batchSize?: number;
}

/** The models directory in effect: `$RETRACE_MODELS_DIR` (when set and non-empty), else `<cwd>/models`. */
export function defaultModelsDir(): string {
  const fromEnv = process.env[MODELS_DIR_ENV];
  return fromEnv !== undefined && fromEnv !== "" ? resolve(fromEnv) : resolve(process.cwd(), "models");
}

/** The folder `npm run models` lays models out in when `RETRACE_MODELS_DIR` is unset: `${XDG_CACHE_HOME:-~/.cache}/retrace/models`. */
export function modelsCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_CACHE_HOME;
  return resolve(xdg !== undefined && xdg !== "" ? xdg : join(homedir(), ".cache"), "retrace", "models");
}

/** The Hugging Face hub cache: `$HF_HUB_CACHE`, else `$HF_HOME/hub`, else `${XDG_CACHE_HOME:-~/.cache}/huggingface/hub`. */
export function huggingFaceHubCache(env: NodeJS.ProcessEnv = process.env): string {
  if (env.HF_HUB_CACHE !== undefined && env.HF_HUB_CACHE !== "") return resolve(env.HF_HUB_CACHE);
  if (env.HF_HOME !== undefined && env.HF_HOME !== "") return resolve(env.HF_HOME, "hub");
  const xdg = env.XDG_CACHE_HOME;
  return resolve(xdg !== undefined && xdg !== "" ? xdg : join(homedir(), ".cache"), "huggingface", "hub");
}

/** True when the environment opts in to Hub downloads (`RETRACE_ALLOW_DOWNLOADS=1` or `true`). */
export function downloadsAllowedByEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  const v = env[ALLOW_DOWNLOADS_ENV];
  return v === "1" || v === "true";
}

/** A model spec split into the model (id or folder) and the precision it names (`…@fp32`, `…@q8`), if any. */
export function parseModelSpec(spec: string): { model: string; dtype?: ModelDtype } {
  const m = /^(.*)@(fp32|q8)$/.exec(spec);
  if (m === null) return { model: spec };
  return { model: m[1] ?? "", dtype: m[2] as ModelDtype };
}

/** The snapshot folders of `model` in a Hugging Face hub cache: the one `refs/main` names first, then the others by name. */
async function hubSnapshots(hubCache: string, model: string): Promise<string[]> {
  const repo = join(hubCache, `models--${model.split("/").join("--")}`);
  let names: string[];
  try {
    names = (await readdir(join(repo, "snapshots"))).sort();
  } catch {
    return [join(repo, "snapshots", "<revision>")];
  }
  let main: string | undefined;
  try {
    main = (await readFile(join(repo, "refs", "main"), "utf8")).trim();
  } catch {
    main = undefined;
  }
  const ordered = main !== undefined && names.includes(main) ? [main, ...names.filter((n) => n !== main)] : names;
  return ordered.length > 0 ? ordered.map((n) => join(repo, "snapshots", n)) : [join(repo, "snapshots", "<revision>")];
}

/**
 * Every folder a model is looked for in, in order (the module doc): the folder
 * itself for a path; `modelsDir/<id>` when a models directory is given; else
 * `$RETRACE_MODELS_DIR/<id>`, `<cwd>/models/<id>`, the `npm run models`
 * cache and the Hugging Face hub cache's snapshots; then `cacheDir/<id>`.
 */
export async function modelSearchDirs(
  model: string,
  options: { modelsDir?: string; cacheDir?: string } = {},
): Promise<string[]> {
  if (isModelPath(model)) return [resolve(model)];
  const dirs: string[] = [];
  if (options.modelsDir !== undefined) dirs.push(join(resolve(options.modelsDir), model));
  else {
    const fromEnv = process.env[MODELS_DIR_ENV];
    if (fromEnv !== undefined && fromEnv !== "") dirs.push(join(resolve(fromEnv), model));
    dirs.push(join(resolve(process.cwd(), "models"), model), join(modelsCacheDir(), model));
    dirs.push(...(await hubSnapshots(huggingFaceHubCache(), model)));
  }
  if (options.cacheDir !== undefined) dirs.push(join(resolve(options.cacheDir), model));
  return [...new Set(dirs)];
}

/** True when `model` names a folder rather than a hub id. */
export function isModelPath(model: string): boolean {
  return isAbsolute(model) || model.startsWith("./") || model.startsWith("../") || model === "." || model === "..";
}

const MODEL_ID = /^[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+)?$/;

function checkModelSpec(model: string): void {
  if (isModelPath(model)) return;
  if (!MODEL_ID.test(model) || model.includes("..")) {
    throw new InvalidArgumentError(
      "model",
      "a model id like `Xenova/bge-small-en-v1.5` or a path to a model folder",
      model,
    );
  }
}

/** @internal True when `path` can be accessed. */
export async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}

export type ModelLocation =
  { found: true; dir: string; dtype: ModelDtype } | { found: false; lookedIn: string[]; missing: string[] };

/**
 * Where a model's files are, without touching transformers.js: the first
 * candidate folder (the models directory, then the cache when one is given)
 * that holds every required file and the ONNX weights for the dtype.
 */
export async function locateModel(
  model: string,
  options: { modelsDir?: string; cacheDir?: string; quantized?: boolean } = {},
): Promise<ModelLocation> {
  checkModelSpec(model);
  const candidates = await modelSearchDirs(model, options);
  const onnxChoices: ModelDtype[] =
    options.quantized === true ? ["q8"] : options.quantized === false ? ["fp32"] : ["fp32", "q8"];
  let firstMissing: string[] | undefined;
  for (const dir of candidates) {
    const missing: string[] = [];
    for (const f of REQUIRED_MODEL_FILES) if (!(await exists(join(dir, f)))) missing.push(f);
    let dtype: ModelDtype | undefined;
    for (const d of onnxChoices) {
      if (await exists(join(dir, ONNX_FILES[d]))) {
        dtype = d;
        break;
      }
    }
    if (dtype === undefined) missing.push(onnxChoices.map((d) => ONNX_FILES[d]).join(" or "));
    if (missing.length === 0 && dtype !== undefined) return { found: true, dir, dtype };
    firstMissing ??= missing;
  }
  return { found: false, lookedIn: candidates, missing: firstMissing ?? [] };
}

/** The error for a model that is not on disk, saying where it looked and what to do. */
export function modelUnavailable(
  model: string,
  where: { lookedIn: string[]; missing: string[] },
  quantized?: boolean,
): ModelUnavailableError {
  const onnx = quantized === true ? ONNX_FILES.q8 : ONNX_FILES.fp32;
  const layout = `${REQUIRED_MODEL_FILES.join(", ")}, ${onnx}`;
  const place = isModelPath(model)
    ? `put the model files in ${resolve(model)}`
    : `put the model under ${where.lookedIn[0] ?? model}`;
  const fetch = FETCHABLE_MODELS.includes(model)
    ? `fetch it with \`npm run models\` in a retrace checkout (it lands in ${join(modelsCacheDir(), model)}), or `
    : "";
  return new ModelUnavailableError(
    model,
    `Model \`${model}\` is not available locally: looked in ${where.lookedIn.join(", ")} (missing ${where.missing.join(", ")}). ` +
      `To use it, ${fetch}${place} (${layout})` +
      (isModelPath(model) ? "" : ` or set ${MODELS_DIR_ENV} to a folder that holds ${model}/`) +
      `; downloads from the Hugging Face Hub are off (${ALLOW_DOWNLOADS_ENV}=1 turns them on; docs/models.md).`,
  );
}

// ---------------------------------------------------------------- transformers.js environment

/** @internal transformers.js is an optional peer dependency: its types stay out of the shipped declarations. */
type TransformersModule = typeof import("@huggingface/transformers");

let transformersModule: Promise<TransformersModule> | undefined;
let defaultCacheDir: string | null | undefined;

/** @internal transformers.js, imported on first use (it loads onnxruntime; the built-in embedder never needs it). */
export async function loadTransformers(): Promise<TransformersModule> {
  transformersModule ??= import("@huggingface/transformers").then(
    (m) => {
      defaultCacheDir = m.env.cacheDir;
      return m;
    },
    (e: unknown) => {
      transformersModule = undefined;
      // An optional peer dependency: absent unless the user added it (docs/decisions/0007-package-and-peer-dependencies.md).
      // Missing, it is a usage problem (MissingPeerError, exit 2) with the command that installs it.
      throw (
        missingPeerError(
          "@huggingface/transformers",
          "model embedders and rerankers (retrieval.embedder MODEL, retrieval.rerank) need",
          e,
          "or use a weight-free embedder (retrieval.embedder lsa or builtin) without retrieval.rerank",
        ) ?? e
      );
    },
  );
  return transformersModule;
}

let envLock: Promise<void> = Promise.resolve();

export interface TransformersEnvSettings {
  modelsDir: string;
  cacheDir?: string;
  allowRemote: boolean;
}

/**
 * @internal
 * Runs `fn` with transformers.js' global `env` set for one load: local files
 * from `modelsDir`, remote only when allowed, the file cache only when a
 * cacheDir is given or downloads are allowed. Loads are serialised because
 * `env` is shared by the whole process.
 */
export async function withTransformersEnv<T>(
  settings: TransformersEnvSettings,
  fn: (tf: TransformersModule) => Promise<T>,
): Promise<T> {
  const tf = await loadTransformers();
  const previous = envLock;
  let release: () => void = () => undefined;
  envLock = new Promise<void>((r) => {
    release = r;
  });
  await previous;
  try {
    tf.env.allowLocalModels = true;
    tf.env.allowRemoteModels = settings.allowRemote;
    tf.env.localModelPath = settings.modelsDir;
    tf.env.useFSCache = settings.cacheDir !== undefined || settings.allowRemote;
    tf.env.cacheDir = settings.cacheDir ?? defaultCacheDir ?? tf.env.cacheDir;
    return await fn(tf);
  } finally {
    release();
  }
}

export interface PreparedLoad {
  /** What to pass to `from_pretrained` / `pipeline`: the hub id, or the absolute folder of a path model. */
  target: string;
  /** The local folder the model is read from (null when it is to be downloaded). */
  dir: string | null;
  dtype: ModelDtype;
  modelsDir: string;
}

/** Checks that a model can be loaded under the offline rules and decides its dtype; throws ModelUnavailableError. */
export async function prepareLoad(model: string, options: LocalModelOptions): Promise<PreparedLoad> {
  const modelsDir = resolve(options.modelsDir ?? defaultModelsDir());
  const location = await locateModel(model, {
    ...(options.modelsDir !== undefined ? { modelsDir: options.modelsDir } : {}),
    ...(options.cacheDir !== undefined ? { cacheDir: options.cacheDir } : {}),
    ...(options.quantized !== undefined ? { quantized: options.quantized } : {}),
  });
  const target = isModelPath(model) ? resolve(model) : model;
  // A folder found is loaded by its absolute path (transformers.js reads a path that is not a hub id as is).
  if (location.found) return { target: location.dir, dir: location.dir, dtype: location.dtype, modelsDir };
  if (options.allowRemote === true && !isModelPath(model)) {
    return { target, dir: null, dtype: options.quantized === true ? "q8" : "fp32", modelsDir };
  }
  throw modelUnavailable(model, location, options.quantized);
}

/** Wraps a failure of transformers.js itself (corrupt ONNX, unreadable tokenizer, failed download). */
export function loadFailed(model: string, where: string | null, e: unknown): Error {
  if (isRetraceError(e)) return e;
  const reason = e instanceof Error ? e.message : String(e);
  return new ModelUnavailableError(
    model,
    `Model \`${model}\` could not be loaded${where !== null ? ` from ${where}` : ""}: ${reason}`,
    { cause: e },
  );
}

/** A readable id for a model: the hub id, or `<parent>/<folder>` for a path. */
export function modelIdOf(model: string): string {
  if (!isModelPath(model)) return model;
  const abs = resolve(model);
  return `${basename(dirname(abs))}/${basename(abs)}`;
}

export function checkBatchSize(batchSize: number): number {
  if (!Number.isInteger(batchSize) || batchSize < 1) {
    throw new InvalidArgumentError("batchSize", "a positive integer", batchSize);
  }
  return batchSize;
}
