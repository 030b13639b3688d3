/**
 * Which embedder (and reranker) a run uses, and why, so a reader knows whether
 * the dense branch was semantic or a weight-free fallback: `summary` is the
 * one short line the CLI prints on stderr (`embedder: lsa-128-… (default;
 * real model: npm run models, docs/models.md)`), `reason` the full account
 * (how to name a model, where the state was saved), logged at debug level
 * (`--verbose` or `RETRACE_LOG=debug`).
 *
 * Embedder spec:
 *   - `auto` (default): the corpus-fit LSA embedder fitted on `corpus`
 *     (docs/fusion-and-tuning.md: it won the choice of the shipped default),
 *     else — no corpus given — the built-in `HashingEmbedder`; whatever model
 *     folders exist (docs/models.md, "The rule for auto"): a model is used only
 *     when it is named, so the same command gives the same embedder on every
 *     machine. Its summary line says how to switch to a real model.
 *   - `builtin`: always the built-in `HashingEmbedder`.
 *   - `lsa`: the corpus-fit LSA embedder (./lsa.ts), fitted on `corpus.chunks`
 *     (its state loaded from / saved to `corpus.stateDir` when given); an
 *     InvalidArgumentError when no corpus is given (only a command that has
 *     the chunks can fit it).
 *   - anything else: a model id or folder path, optionally ending in `@fp32`
 *     or `@q8` (`Xenova/bge-small-en-v1.5@q8`), loaded with transformers.js
 *     from the folders of transformers-runtime.ts; missing weights are a
 *     ModelUnavailableError (exit 3) naming every folder looked in and how to
 *     fetch them, a missing transformers.js (an optional peer) a
 *     MissingPeerError (exit 2). The Hub is reached only with `allowRemote`
 *     (default: `RETRACE_ALLOW_DOWNLOADS=1`, else off).
 *
 * Reranker spec:
 *   - `null`, `none` or `off` (default): no reranker.
 *   - `auto`: the cross-encoder `Xenova/ms-marco-MiniLM-L-6-v2` when its
 *     weights are present locally, else none.
 *   - anything else: a model id or folder path (ModelUnavailableError if missing).
 */
import { InvalidArgumentError } from "../../errors.js";
import { log } from "../../log.js";
import type { Analyzers } from "../analyzer.js";
import { CrossEncoderReranker } from "../rerank-model.js";
import type { Embedder, Reranker } from "../types.js";
import { HashingEmbedder } from "./builtin.js";
import {
  LocaleRoutedEmbedder,
  formatLocaleSpec,
  modelLanguages,
  parseLocaleSpec,
  specsPerLocale,
} from "./locale-routed.js";
import { loadOrFitLsa, type LsaChunk } from "./lsa.js";
import { fingerprinted } from "../fingerprint.js";
import {
  DEFAULT_EMBEDDING_MODEL,
  DEFAULT_RERANK_MODEL,
  TransformersEmbedder,
  defaultModelsDir,
  downloadsAllowedByEnv,
  locateModel,
} from "./transformers.js";

export type EmbedderSpec = "auto" | "builtin" | "lsa" | (string & {});
export type RerankerSpec = "auto" | "none" | "off" | (string & {}) | null;

export interface ResolveOptions {
  /** Folder of `<org>/<name>/` model folders. Default: `$RETRACE_MODELS_DIR`, else `<cwd>/models`. */
  modelsDir?: string;
  /** transformers.js file cache (searched too; downloads land there). */
  cacheDir?: string;
  /** Allow downloads from the Hugging Face Hub. Default: `RETRACE_ALLOW_DOWNLOADS=1` (or `true`) in the environment, else false. */
  allowRemote?: boolean;
  /** Texts per model call for transformers models. */
  batchSize?: number;
  /**
   * The chunks the `lsa` embedder is fitted on, the folder its fitted state is
   * saved in (none: not saved), and the analyzers it analyses with (the KB's;
   * default: the default profile).
   */
  corpus?: { chunks: readonly LsaChunk[]; stateDir?: string; analyzers?: Analyzers };
}

export interface ResolvedEmbedder {
  embedder: Embedder;
  /** One sentence: which embedder and why, with every folder searched and file missing. */
  reason: string;
  /** One short line: the embedder's id and why in a few words (`lsa-128-… (default; no transformer weights found, …)`). */
  summary: string;
  /** What made it ready: `lsa-fit` (fitted or refitted on the corpus), `lsa-load` (its saved state read), `model-load` (transformers.js weights), `none` (built-in). */
  setup: "lsa-fit" | "lsa-load" | "model-load" | "none";
  /** `lsa-fit`: wall-clock ms of the LSA chance baseline, part of the fit. */
  chanceMs?: number;
}

export interface ResolvedReranker {
  /** null: reranking off. */
  reranker: Reranker | null;
  /** One sentence: which reranker (or none) and why, with the folders searched. */
  reason: string;
  /** One short line: the reranker's id (or `none`) and why in a few words. */
  summary: string;
}

/**
 * @internal Logs a choice on stderr: its one-line `summary` (at `level`,
 * default info) and, at debug level (`--verbose`, `RETRACE_LOG=debug`), the full `reason`.
 */
export function logChoice(
  what: "embedder" | "reranker",
  r: { summary: string; reason: string },
  level: "info" | "warn" = "info",
): void {
  log[level](`${what}: ${r.summary}`);
  log.debug(`${what}: ${r.reason}`);
}

/** The one-line pointer of `auto`'s summary: how to switch to a real model. */
export const SWITCH_HINT = "real model: npm run models, docs/models.md";
const SWITCH_HINT_LONG =
  `to use a real model, fetch it (\`npm run models\`) and name it: \`--config '{"retrieval":{"embedder":"${DEFAULT_EMBEDDING_MODEL}"}}'\`` +
  " (docs/models.md)";

/** The hints of a summary whose `reason` names folders: where to see them. */
const SEARCH_PATH_HINT = "--verbose for the search path";
const FOLDER_HINT = "--verbose for the folder";

function checkSpec(name: string, spec: unknown): asserts spec is string {
  if (typeof spec !== "string" || spec.trim() === "") {
    throw new InvalidArgumentError(name, '"auto", "builtin", "lsa" or a model id', spec);
  }
}

function modelOptions(options: ResolveOptions) {
  return {
    ...(options.modelsDir !== undefined ? { modelsDir: options.modelsDir } : {}),
    ...(options.cacheDir !== undefined ? { cacheDir: options.cacheDir } : {}),
    ...(options.batchSize !== undefined ? { batchSize: options.batchSize } : {}),
    allowRemote: options.allowRemote ?? downloadsAllowedByEnv(),
  };
}

function describeLoaded(e: TransformersEmbedder): string {
  return `${e.id} (transformers.js, ${e.dimension}-d, ${e.pooling} pooling from ${e.poolingSource}, ${e.dtype})`;
}

async function resolveLsa(options: ResolveOptions, why: string, short: string): Promise<ResolvedEmbedder> {
  if (options.corpus === undefined)
    throw new InvalidArgumentError(
      "embedder",
      "lsa only where the chunks to fit it on are known (ingest, eval, trace, beir)",
      "lsa",
    );
  const r = await loadOrFitLsa(options.corpus.chunks, {
    ...(options.corpus.stateDir !== undefined ? { dir: options.corpus.stateDir } : {}),
    ...(options.corpus.analyzers !== undefined ? { analyzers: options.corpus.analyzers } : {}),
  });
  const where =
    r.file === null
      ? "fitted in memory, not saved"
      : r.status === "loaded"
        ? `state loaded from ${r.file}`
        : `${r.status}, state saved to ${r.file}`;
  return {
    embedder: r.embedder,
    reason: `${r.embedder.id} (corpus-fit LSA, no model weights): ${why}, ${where}`,
    summary: `${r.embedder.id} (${short})`,
    setup: r.status === "loaded" ? "lsa-load" : "lsa-fit",
    ...(r.chanceMs !== undefined ? { chanceMs: r.chanceMs } : {}),
  };
}

/** Picks the embedder for `spec` (see the module doc); throws ModelUnavailableError for a named model that is missing. */
export async function resolveEmbedder(
  spec: EmbedderSpec = "auto",
  options: ResolveOptions = {},
): Promise<ResolvedEmbedder> {
  checkSpec("embedder", spec);
  if (spec.includes(";") || options.corpus !== undefined) {
    const routed = await resolvePerLocale(spec, options);
    if (routed !== undefined) return routed;
    spec = parseLocaleSpec(spec).default;
  }
  return resolveOne(spec, options);
}

/** One embedder for every text (a plain spec, no per-locale parts). */
async function resolveOne(spec: string, options: ResolveOptions): Promise<ResolvedEmbedder> {
  checkSpec("embedder", spec);
  if (spec === "builtin") {
    const embedder = new HashingEmbedder();
    return {
      embedder,
      reason: `${embedder.id}: the built-in embedder was requested (lexical-fuzzy, not semantic)`,
      summary: `${embedder.id} (requested; built-in, lexical-fuzzy, not semantic)`,
      setup: "none",
    };
  }
  if (spec === "lsa") return resolveLsa(options, "requested", "requested; corpus-fit LSA");
  if (spec !== "auto") {
    const embedder = await TransformersEmbedder.load({ ...modelOptions(options), model: spec });
    return {
      embedder,
      reason: `${describeLoaded(embedder)}: requested, loaded from ${embedder.modelDir ?? "the download cache"}`,
      summary: `${embedder.id} (requested; transformers.js, ${embedder.dimension}-d)`,
      setup: "model-load",
    };
  }

  // `auto` never looks for model folders: the same command gives the same embedder on every machine (docs/models.md).
  return weightFree(options, `auto is the embedded default (no model weights); ${SWITCH_HINT_LONG}`, SWITCH_HINT);
}

/**
 * Per-locale embedders (./locale-routed.ts, docs/models.md): each locale of
 * the corpus gets its own spec, or the default's, or — the default being a
 * model for other languages (bge-small-en-v1.5 is English) — `auto`, said in
 * one stderr line. Undefined when every locale has the same spec (resolved as
 * a plain spec, the same id as before).
 */
async function resolvePerLocale(spec: string, options: ResolveOptions): Promise<ResolvedEmbedder | undefined> {
  const parsed = parseLocaleSpec(spec);
  const locales = options.corpus?.chunks.map((c) => c.locale) ?? Object.keys(parsed.locales);
  const { specs, kept } = specsPerLocale(parsed, locales);
  const distinct = [...new Set(specs.values())];
  if (distinct.length <= 1 && (distinct[0] ?? parsed.default) === parsed.default) return undefined;
  if (kept.length > 0)
    log.info(
      `embedder: ${parsed.default} is for ${modelLanguages(parsed.default)!.join(", ")} only; ${kept.join(", ")} keep the default embedder (name a model per locale: locales.<tag>.embedder, docs/models.md)`,
    );
  if (distinct.length === 1) return resolveOne(distinct[0]!, options);
  const bySpec = new Map<string, ResolvedEmbedder>();
  for (const s of distinct.sort()) bySpec.set(s, await resolveOne(s, options));
  const byLocale = new Map<string, Embedder>();
  for (const [l, s] of specs) byLocale.set(l, await fingerprinted(bySpec.get(s)!.embedder));
  const fallbackSpec = specsPerLocale(parsed, ["und"]).specs.get("und")!;
  const fallback = bySpec.get(fallbackSpec)?.embedder ?? (await resolveOne(fallbackSpec, options)).embedder;
  const embedder = new LocaleRoutedEmbedder(byLocale, await fingerprinted(fallback));
  const setups = [...bySpec.values()].map((r) => r.setup);
  return {
    embedder,
    reason: `${embedder.id}: per-locale embedders (${formatLocaleSpec(parsed)}): ${[...bySpec.values()].map((r) => r.reason).join("; ")}`,
    summary: `${embedder.id} (per-locale embedders)`,
    setup: setups.includes("model-load") ? "model-load" : setups.includes("lsa-fit") ? "lsa-fit" : setups[0]!,
  };
}

/** The weight-free embedder of `auto`: LSA fitted on the corpus when one is given, else the built-in hashed n-grams. */
async function weightFree(options: ResolveOptions, why: string, short: string): Promise<ResolvedEmbedder> {
  if (options.corpus !== undefined) return resolveLsa(options, why, `default; ${short}`);
  const embedder = new HashingEmbedder();
  return {
    embedder,
    reason: `${embedder.id} (built-in, lexical-fuzzy, not semantic): ${why}; no corpus given to fit the LSA embedder on`,
    summary: `${embedder.id} (default, built-in; no corpus to fit LSA on; ${short})`,
    setup: "none",
  };
}

/** Picks the reranker for `spec` (see the module doc); throws ModelUnavailableError for a named model that is missing. */
export async function resolveReranker(
  spec: RerankerSpec = null,
  options: ResolveOptions = {},
): Promise<ResolvedReranker> {
  if (spec === null || spec === "none" || spec === "off") {
    return { reranker: null, reason: "no reranker (off by default)", summary: "none (off by default)" };
  }
  checkSpec("reranker", spec);
  if (spec !== "auto") {
    const reranker = await CrossEncoderReranker.load({ ...modelOptions(options), model: spec });
    return {
      reranker,
      reason: `${reranker.id} (cross-encoder): requested, loaded from ${reranker.modelDir ?? "the download cache"}`,
      summary: `${reranker.id} (requested; cross-encoder)`,
    };
  }
  const modelsDir = options.modelsDir ?? defaultModelsDir();
  const location = await locateModel(DEFAULT_RERANK_MODEL, {
    modelsDir,
    ...(options.cacheDir !== undefined ? { cacheDir: options.cacheDir } : {}),
  });
  if (!location.found) {
    return {
      reranker: null,
      reason: `no reranker: auto, no ${DEFAULT_RERANK_MODEL} weights in ${location.lookedIn.join(", ")} (missing ${location.missing.join(", ")})`,
      summary: `none (auto; no ${DEFAULT_RERANK_MODEL} weights found, ${SEARCH_PATH_HINT})`,
    };
  }
  const reranker = await CrossEncoderReranker.load({
    ...modelOptions(options),
    modelsDir,
    model: DEFAULT_RERANK_MODEL,
  });
  return {
    reranker,
    reason: `${reranker.id} (cross-encoder): auto, its weights are in ${location.dir}`,
    summary: `${reranker.id} (auto; cross-encoder, weights found, ${FOLDER_HINT})`,
  };
}
