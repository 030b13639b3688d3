/**
 * A corpus-fit latent semantic embedder (LSA; Deerwester et al. 1990), no
 * model weights: fitted on the collection's own chunks when they are
 * ingested (docs/fusion-and-tuning.md, "The LSA embedder").
 *
 * Fit, on the chunks sorted by id:
 *   1. terms = the locale analyzer of each chunk (src/retrieval/analyzer.ts:
 *      NFKC, lowercase, accent folding, stop words, Snowball stems), from the
 *      analyzer set given (a KB's `analyzers.json`; default: the default
 *      profile), which the embedder keeps for the texts it embeds;
 *      vocabulary = terms in at least `minDf` chunks (all terms if none is),
 *      sorted by code unit;
 *   2. A (chunks × terms): a_dt = (1 + ln tf_dt) · idf_t with
 *      idf_t = ln((1 + N) / (1 + df_t)) + 1, each row L2-normalised;
 *   3. A ≈ U_k Σ_k V_kᵀ by the seeded randomized SVD of lsa-math.ts
 *      (k = `dimension`, capped at the rank found).
 * Embedding of any text (a chunk at ingest, a query at search time) with its
 * locale: x = its TF-IDF row as in 2 (terms outside the vocabulary ignored),
 * e = x · V_k · Σ_k^p, L2-normalised. p = `scaling`: −1 is the textbook
 * fold-in q·V_k·Σ_k⁻¹ (a training chunk folds in to its own row of U_k);
 * 0 (the default) compares in the space of U_k Σ_k, Deerwester's
 * document–document similarity. Documents and queries go through the same
 * map. A text without a vocabulary term embeds to the first latent axis e_1.
 * Without a locale the text is analysed by every locale of the fit and each
 * term's tf is its largest count among them.
 *
 * Semantic only in the corpus's own co-occurrence sense: it can match terms
 * that co-occur across the KB, not synonyms it never saw.
 *
 * Over 400 lines because the fit, the byte format the id hashes, the state
 * file (checksum, load or refit, prune) and the embedder share that format;
 * the linear algebra itself is in lsa-math.ts.
 *
 * Identity: the fitted state serialises to fixed bytes (format below); the
 * embedder id is `lsa-<k>-<first 12 hex of sha256(bytes)>-v1`, so the
 * dimension and the fit hash name the Chroma collection. The state file is
 * written to the local data dir under a name keyed by the corpus, the
 * parameters and (when not the defaults) the analyzer overrides; a missing,
 * unreadable, corrupt or older-format one is refitted, byte-identical (same
 * chunks, parameters, analyzers and seed), so the id never changes because
 * of the file.
 *
 * State (the bytes the id hashes, state format 1): "RETRACE-LSA\n", u32 LE
 * length of a UTF-8 JSON header ({format, params, corpusKey, docs, locales,
 * rank, terms}), the header, then idf (float64 LE × terms), Σ (float64 LE ×
 * rank), V (float32 LE, terms × rank, row-major). V is rounded to float32
 * right after the fit and only the rounded values are ever used, so a loaded
 * state embeds exactly like a fresh fit.
 *
 * State file (file format 3): the state bytes, the chance section
 * "\nRETRACE-LSA-CHANCE\n" + the chance share (float64 LE; `fitLsa`), then
 * the checksum trailer "\nRETRACE-LSA-SHA256 3\n" and the 32-byte sha256 of
 * everything before it. A file whose checksum does not match is corrupt (one
 * warning line, refitted); a file of format 1 (the state bytes alone, no
 * checksum) or 2 (no chance section) is stale (one info line, refitted). The
 * sections are outside the hashed state bytes, so the embedder ids of older
 * files stay the same.
 */
import { embedderIdentity } from "../../contract/embedder-id.js";
import { createHash, randomBytes } from "node:crypto";
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { OutputWriteError, realWriteFailure } from "../../atomic.js";
import { InvalidArgumentError } from "../../errors.js";
import type { Locale } from "../../kb/types.js";
import { log } from "../../log.js";
import { processAlive } from "../lock.js";
import { isLocale } from "../../kb/types.js";
import { DEFAULT_ANALYZERS, isDefaultAnalyzers, type Analyzers } from "../analyzer.js";
import type { Embedder } from "../types.js";
import { trackTemporary, untrackTemporary } from "../../interrupt.js";
import { byCodeUnit, chanceCorrected, energyShare, lsaCorpusKey, termCounts, tfidfRow } from "./lsa-fit.js";
import type { LsaChunk, LsaFileContent, LsaParams, LsaState } from "./lsa-format.js";
import { fitLsaOffThread } from "./lsa-fit-thread.js";
import { LSA_FORMAT, checkParams, lsaFileBytes, readLsaFile, serializeLsa } from "./lsa-format.js";
export * from "./lsa-format.js";
export * from "./lsa-fit.js";

/** How long `LsaEmbedder.embedDocuments` works before it lets the event loop run (a signal, a progress line), ms. */
const YIELD_EVERY_MS = 100;

/** The id of the LSA embedder whose state bytes are `stateBytes` (rank `rank`): `lsa-<rank>-<first 12 hex of their sha256>-v1`. */
export function lsaEmbedderId(stateBytes: Uint8Array, rank: number): string {
  return `lsa-${rank}-${createHash("sha256").update(stateBytes).digest("hex").slice(0, 12)}-v1`;
}

/** The LSA embedder over a fitted state (see the module comment). Synchronous inside; batch-invariant. */
export class LsaEmbedder implements Embedder {
  readonly id: string;
  readonly dimension: number;
  readonly description: string;
  /** sha256 (hex) of the serialised state. */
  readonly fitHash: string;
  /**
   * Σ σ_i² / N: the share of the TF-IDF matrix's energy the k latent axes
   * keep. Rows are L2-normalised, so ‖A‖²_F is the number of chunks with a
   * vocabulary term (≤ N: the share is a lower bound when some have none).
   * Near 1 when k is close to the corpus's rank (a small KB), small when the
   * corpus has little co-occurrence structure (random words).
   */
  readonly latentShare: number;
  /** The latent share of the same fit on a shuffled copy of the corpus (`LsaState.chanceShare`); undefined when the state lacks it. */
  readonly chanceShare: number | undefined;
  /**
   * The chance-corrected latent share κ = (share − chance)/(1 − chance), as
   * Cohen's κ corrects agreement: 0 when the axes keep no more than they
   * would on words dealt at random (a random-word corpus), positive with
   * co-occurrence structure beyond chance. Undefined without `chanceShare`
   * and at full rank (nothing beyond chance to measure).
   */
  readonly structure: number | undefined;
  readonly state: LsaState;
  /** The analyzers texts are analysed with (those the state was fitted with). */
  readonly analyzers: Analyzers;
  private readonly index: Map<string, number>;
  private readonly scale: Float64Array;

  /** The embedder over `state`, analysing texts with `analyzers`: those the state was fitted with (default: the default profile). */
  constructor(state: LsaState, bytes: Uint8Array = serializeLsa(state), analyzers: Analyzers = DEFAULT_ANALYZERS) {
    this.state = state;
    this.analyzers = analyzers;
    this.fitHash = createHash("sha256").update(bytes).digest("hex");
    this.dimension = state.sigma.length;
    this.latentShare = energyShare(state.sigma, state.docs);
    this.chanceShare = state.chanceShare;
    this.structure = state.chanceShare === undefined ? undefined : chanceCorrected(this.latentShare, state.chanceShare);
    this.id = `lsa-${this.dimension}-${this.fitHash.slice(0, 12)}-v1`; // = lsaEmbedderId(bytes, dimension)
    this.description =
      `corpus-fit LSA (TF-IDF → ${this.dimension}-d truncated SVD of ${state.docs} chunks, ${state.terms.length} terms; ` +
      "co-occurrence semantics of this corpus only; no model weights)";
    this.index = new Map(state.terms.map((t, j) => [t, j]));
    this.scale = Float64Array.from(state.sigma, (s) => (state.params.scaling === 0 ? 1 : s ** state.params.scaling));
  }

  /** x · V_k · Σ_k^p of one text before normalisation (x its L2-normalised TF-IDF row), analysed with `locale` (else every locale of the fit). */
  project(text: string, locale?: Locale): Float64Array {
    if (typeof text !== "string") throw new InvalidArgumentError("text", "a string", text);
    if (locale !== undefined && !isLocale(locale))
      throw new InvalidArgumentError("locale", "a canonical BCP-47 tag", locale);
    const r = this.dimension;
    const row = tfidfRow(
      termCounts(text, locale !== undefined ? [locale] : this.state.locales, this.analyzers),
      this.index,
      this.state.idf,
    );
    const e = new Float64Array(r);
    const v = this.state.v;
    row.cols.forEach((t, i) => {
      const x = row.vals[i] as number;
      for (let c = 0; c < r; c++) e[c] = (e[c] as number) + x * (v[t * r + c] as number);
    });
    for (let c = 0; c < r; c++) e[c] = (e[c] as number) * (this.scale[c] as number);
    return e;
  }

  /** The embedding of one text: `project` L2-normalised; the first latent axis when it has no vocabulary term. */
  embed(text: string, locale?: Locale): number[] {
    const e = this.project(text, locale);
    let norm = 0;
    for (const x of e) norm += x * x;
    norm = Math.sqrt(norm);
    if (norm === 0) {
      const out = new Array<number>(e.length).fill(0);
      out[0] = 1;
      return out;
    }
    return Array.from(e, (x) => x / norm);
  }

  async embedDocuments(texts: string[], options?: { locales?: readonly Locale[] }): Promise<number[][]> {
    const locales = options?.locales;
    if (locales !== undefined && locales.length !== texts.length)
      throw new InvalidArgumentError("locales", `${texts.length} locales (one per text)`, locales.length);
    // Yields to the event loop every YIELD_EVERY_MS of work: embedding a large KB at once is seconds of synchronous
    // work, during which a signal would wait (docs/reliability.md, "Every sweep stops when asked"). Same vectors.
    const out: number[][] = [];
    let since = performance.now();
    for (let i = 0; i < texts.length; i++) {
      out.push(this.embed(texts[i] as string, locales?.[i]));
      if (performance.now() - since > YIELD_EVERY_MS) {
        await new Promise((r) => setImmediate(r));
        since = performance.now();
      }
    }
    return out;
  }

  async embedQuery(text: string, options?: { locale?: Locale }): Promise<number[]> {
    return this.embed(text, options?.locale);
  }
}

/**
 * The embedder id without the fit hash (`lsa-128-<hash>-v1` → `lsa-128-v1`);
 * any other id unchanged. A KB edit refits the LSA embedder and changes its
 * id, yet the run still uses the same embedder: baselines compare families
 * (docs/fusion-and-tuning.md). The LSA id follows the shared identity rule of
 * src/contract/embedder-id.ts, which is what baselines apply.
 */
export const embedderFamily: (id: string) => string = embedderIdentity;

/**
 * File name of the state fitted on `corpusKey` with `params` and `analyzers`:
 * `lsa-<sha256(format, corpusKey, params[, overrides]) first 24 hex>.lsa`, the
 * analyzer overrides (sorted by tag) entering the key only when there are any,
 * so a fit with the default profile keeps its name and a fit with other
 * analyzers is never loaded for it.
 */
export function lsaStateFile(
  dir: string,
  corpusKey: string,
  params: LsaParams,
  analyzers: Analyzers = DEFAULT_ANALYZERS,
): string {
  const parts: unknown[] = [LSA_FORMAT, corpusKey, params];
  if (!isDefaultAnalyzers(analyzers)) {
    const tags = Object.keys(analyzers.overrides).sort(byCodeUnit);
    parts.push(
      tags.map((tag) => [tag, analyzers.overrides[tag]?.stopWords ?? null, analyzers.overrides[tag]?.stemmer ?? null]),
    );
  }
  const key = createHash("sha256").update(JSON.stringify(parts)).digest("hex").slice(0, 24);
  return path.join(dir, `lsa-${key}.lsa`);
}

export interface LsaLoadResult {
  embedder: LsaEmbedder;
  /** `loaded`: the saved state was read; `fitted`: none was saved; `refitted`: the saved one was unreadable, corrupt, of an older format or did not match. */
  status: "loaded" | "fitted" | "refitted";
  /** The state file, or null when `dir` was not given (nothing saved). */
  file: string | null;
  /** Why a saved state was refitted (`corrupt (checksum mismatch)`, `no checksum (older format)`, …); absent otherwise. */
  refitReason?: string;
  /** Wall-clock ms of the chance baseline's fit, part of the fit (absent when the state was loaded). */
  chanceMs?: number;
}

/**
 * The LSA embedder for `chunks` analysed with `analyzers` (default: the
 * default profile): the state saved in `dir` when it is there, intact (its
 * checksum matches) and matches (same corpus, parameters and analyzers),
 * else a fresh fit, written to `dir` atomically (temporary file + rename).
 * A corrupt file is reported in one warning line, a format-1 file (no
 * checksum) in one info line; both are refitted. Without `dir` nothing is
 * read or written. A refit gives the same bytes, so the same id and
 * collection.
 * @throws OutputWriteError (exit 3) when the state cannot be saved.
 */
export async function loadOrFitLsa(
  chunks: readonly LsaChunk[],
  options: { dir?: string; params?: Partial<LsaParams>; analyzers?: Analyzers } = {},
): Promise<LsaLoadResult> {
  const params = checkParams(options.params);
  const analyzers = options.analyzers ?? DEFAULT_ANALYZERS;
  if (options.dir === undefined) {
    const { state, chanceMs } = await fitLsaOffThread(chunks, params, analyzers);
    return { embedder: new LsaEmbedder(state, undefined, analyzers), status: "fitted", file: null, chanceMs };
  }
  const corpusKey = lsaCorpusKey(chunks);
  const file = lsaStateFile(options.dir, corpusKey, params, analyzers);
  let refitReason: string | undefined;
  try {
    const content = readLsaFile(await readFile(file), file);
    if (content.kind === "ok") {
      const { state } = content;
      if (state.corpusKey === corpusKey && JSON.stringify(state.params) === JSON.stringify(params)) {
        return { embedder: new LsaEmbedder(state, content.stateBytes, analyzers), status: "loaded", file };
      }
      refitReason = "fitted on another corpus or with other parameters";
    } else if (content.kind === "old") {
      refitReason = `${content.why} (older format)`;
      log.info(`state file ${file} has ${content.why} (written by an older retrace); refitting`);
    } else {
      refitReason = `corrupt (${content.why})`;
      log.warn(`state file ${file} is corrupt (${content.why}); refitting`);
    }
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") {
      refitReason = `unreadable (${e instanceof Error ? e.message : String(e)})`;
      log.warn(`state file ${file} is unreadable (${e instanceof Error ? e.message : String(e)}); refitting`);
    }
  }
  const { state, chanceMs } = await fitLsaOffThread(chunks, params, analyzers);
  const bytes = serializeLsa(state);
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  trackTemporary(tmp); // removed should the process end before the rename (src/interrupt.ts)
  try {
    await mkdir(options.dir, { recursive: true });
    await writeFile(tmp, lsaFileBytes(bytes, state.chanceShare as number), { flag: "wx" });
    await rename(tmp, file);
  } catch (e) {
    await rm(tmp, { force: true }).catch(() => undefined);
    throw new OutputWriteError(file, await realWriteFailure(file, e)); // EROFS, not ENOENT, on a read-only data dir
  } finally {
    untrackTemporary(tmp);
  }
  return {
    embedder: new LsaEmbedder(state, bytes, analyzers),
    status: refitReason !== undefined ? "refitted" : "fitted",
    file,
    chanceMs,
    ...(refitReason !== undefined ? { refitReason } : {}),
  };
}

/** Name of a state file's temporary file while it is written: `<state file>.<pid>.<8 hex>.tmp`. */
const TMP_NAME = /^lsa-[0-9a-f]{24}\.lsa\.(\d+)\.[0-9a-f]{8}\.tmp$/;

export interface LsaPruneResult {
  /** Files removed (absolute paths, sorted). */
  removed: string[];
  /** Their total size. */
  bytes: number;
}

/**
 * Removes the LSA state files in `dir` that no collection uses any more:
 * an intact state whose embedder id is not in `keep`, a corrupt or
 * format-1 file (it would be refitted anyway), and the temporary file of a
 * write whose process is gone. A removed state that is needed again is
 * refitted to the same bytes.
 */
export async function pruneLsaStates(dir: string, keep: ReadonlySet<string>): Promise<LsaPruneResult> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return { removed: [], bytes: 0 };
    throw e;
  }
  const removed: string[] = [];
  let bytes = 0;
  for (const name of names.sort()) {
    const file = path.join(dir, name);
    const tmp = TMP_NAME.exec(name);
    let stale: boolean;
    if (tmp !== null) stale = !processAlive(Number(tmp[1]));
    else if (/^lsa-[0-9a-f]{24}\.lsa$/.test(name)) {
      let content: LsaFileContent;
      try {
        content = readLsaFile(await readFile(file), file);
      } catch {
        continue; // unreadable (a folder, no permission): not ours to judge
      }
      stale = content.kind !== "ok" || !keep.has(lsaEmbedderId(content.stateBytes, content.state.sigma.length));
    } else continue;
    if (!stale) continue;
    try {
      const size = (await stat(file)).size;
      await rm(file, { force: true });
      removed.push(file);
      bytes += size;
    } catch (e) {
      log.debug(`Could not remove ${file}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  return { removed, bytes };
}
