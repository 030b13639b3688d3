/**
 * Per-locale embedders (docs/models.md, "Per-locale embedders"): one
 * embedder per locale of a KB behind the one `Embedder` interface, so the
 * store, the dense index and every command stay as they are. A document is
 * embedded by its locale's embedder, a query by its locale's; vectors are
 * zero-padded to the widest embedder's dimension, which leaves every cosine
 * between two vectors of the same embedder unchanged (retrieval filters by
 * the turn's locale, so a query only meets vectors of its own embedder).
 *
 * The spec string carries the choice: `<default>` or
 * `<default>;<locale>=<spec>;...` (settings.ts writes it from
 * `retrieval.embedder` and `locales.<tag>.embedder`).
 */
import type { Locale } from "../../kb/types.js";
import type { Embedder } from "../types.js";

/** The languages a named model is for (its model card); absent: any language. */
const MODEL_LANGUAGES: { pattern: RegExp; languages: readonly string[] }[] = [
  // BAAI/bge-*-en-v1.5: English (the model card: "bge-small-en-v1.5 ... English").
  { pattern: /(^|[-_/])bge-(small|base|large)-en-v1\.5(@(fp32|q8))?$/i, languages: ["en"] },
];

/** The languages a model spec is for, or undefined (any, or not a model: `auto`, `lsa`, `builtin`). */
export function modelLanguages(spec: string): readonly string[] | undefined {
  return MODEL_LANGUAGES.find((m) => m.pattern.test(spec.trim()))?.languages;
}

/** The language subtag of a locale (`es-419` -> `es`). */
export const languageOf = (locale: string): string => locale.split(/[-_]/)[0]!.toLowerCase();

/** A spec split into its default and per-locale parts. */
export interface LocaleSpec {
  default: string;
  locales: Record<string, string>;
}

/** Parses `<default>[;<locale>=<spec>]...`. */
export function parseLocaleSpec(spec: string): LocaleSpec {
  const [first, ...rest] = spec.split(";");
  const locales: Record<string, string> = {};
  for (const part of rest) {
    const eq = part.indexOf("=");
    if (eq > 0) locales[part.slice(0, eq).trim()] = part.slice(eq + 1).trim();
  }
  return { default: (first ?? "").trim() === "" ? "auto" : first!.trim(), locales };
}

/** Writes a spec (per-locale parts sorted by locale; none: the default alone). */
export function formatLocaleSpec(s: LocaleSpec): string {
  const parts = Object.keys(s.locales)
    .sort()
    .map((l) => `${l}=${s.locales[l]}`);
  return [s.default, ...parts].join(";");
}

/**
 * Each locale's spec: its own when named, else the default, unless the
 * default is a model for other languages (then `auto`, the embedded default).
 */
export function specsPerLocale(
  s: LocaleSpec,
  locales: readonly string[],
): { specs: Map<string, string>; kept: string[] } {
  const specs = new Map<string, string>();
  const kept: string[] = [];
  const langs = modelLanguages(s.default);
  for (const l of [...new Set(locales)].sort()) {
    const own = s.locales[l];
    if (own !== undefined) specs.set(l, own);
    else if (langs !== undefined && !langs.includes(languageOf(l))) {
      specs.set(l, "auto");
      kept.push(l);
    } else specs.set(l, s.default);
  }
  return { specs, kept };
}

/** One embedder per locale behind one Embedder; `fallback` for texts of other locales. */
export class LocaleRoutedEmbedder implements Embedder {
  readonly id: string;
  readonly dimension: number;
  readonly description: string;
  readonly fingerprint?: string;

  constructor(
    private readonly byLocale: ReadonlyMap<string, Embedder>,
    private readonly fallback: Embedder,
  ) {
    const ids = [...byLocale].map(([l, e]) => `${l}=${e.id}`);
    this.id = `locales(${ids.join(";")})`;
    this.dimension = Math.max(fallback.dimension, ...[...byLocale.values()].map((e) => e.dimension));
    this.description = `per-locale embedders: ${[...byLocale].map(([l, e]) => `${l} ${e.description}`).join("; ")}`;
    const fps = [...byLocale]
      .map(([l, e]) => [l, (e as { fingerprint?: unknown }).fingerprint] as const)
      .filter(([, f]) => typeof f === "string" && f !== "")
      .map(([l, f]) => `${l}=${String(f)}`);
    if (fps.length > 0) this.fingerprint = fps.join(";");
  }

  /** The embedder id of a locale's texts. */
  idFor(locale: string | undefined): string {
    return this.embedderFor(locale).id;
  }

  private embedderFor(locale: string | undefined): Embedder {
    return (locale !== undefined ? this.byLocale.get(locale) : undefined) ?? this.fallback;
  }

  private pad(v: number[]): number[] {
    return v.length >= this.dimension ? v : [...v, ...new Array<number>(this.dimension - v.length).fill(0)];
  }

  async embedDocuments(texts: string[], options?: { locales?: readonly Locale[] }): Promise<number[][]> {
    const out: number[][] = new Array<number[]>(texts.length);
    const groups = new Map<Embedder, number[]>();
    texts.forEach((_, i) => {
      const e = this.embedderFor(options?.locales?.[i]);
      const g = groups.get(e);
      if (g === undefined) groups.set(e, [i]);
      else g.push(i);
    });
    for (const [e, idx] of groups) {
      const vs = await e.embedDocuments(
        idx.map((i) => texts[i]!),
        options?.locales !== undefined ? { locales: idx.map((i) => options.locales![i]!) } : undefined,
      );
      idx.forEach((i, j) => (out[i] = this.pad(vs[j]!)));
    }
    return out;
  }

  async embedQuery(text: string, options?: { locale?: Locale }): Promise<number[]> {
    return this.pad(await this.embedderFor(options?.locale).embedQuery(text, options));
  }
}

/** The locale's embedder id of a `locales(...)` id (a LocaleRoutedEmbedder's), else undefined. */
export function embedderIdForLocale(id: string, locale: string): string | undefined {
  const m = /^locales\((.*)\)$/.exec(id);
  if (m === null) return undefined;
  for (const part of m[1]!.split(";")) {
    const eq = part.indexOf("=");
    if (part.slice(0, eq) === locale) return part.slice(eq + 1);
  }
  return undefined;
}
