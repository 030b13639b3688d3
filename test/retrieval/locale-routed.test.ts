/** LocaleRoutedEmbedder and the per-locale spec (docs/models.md, "Per-locale embedders"). */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  LocaleRoutedEmbedder,
  embedderIdForLocale,
  modelLanguages,
  formatLocaleSpec,
  parseLocaleSpec,
  specsPerLocale,
} from "../../src/retrieval/embedders/locale-routed.js";
import type { Embedder } from "../../src/retrieval/types.js";
import { readSettings } from "../../src/cli/settings.js";
import { DataValidationError } from "../../src/errors.js";

const fixed = (id: string, v: number[]): Embedder => ({
  id,
  dimension: v.length,
  description: id,
  embedDocuments: async (texts) => texts.map(() => v),
  embedQuery: async () => v,
});

describe("per-locale embedders", () => {
  it("an English model applies to en locales only; a locale named explicitly gets its own", () => {
    const s = parseLocaleSpec("Xenova/bge-small-en-v1.5@q8;pt-BR=lsa");
    expect(s).toEqual({ default: "Xenova/bge-small-en-v1.5@q8", locales: { "pt-BR": "lsa" } });
    expect(formatLocaleSpec(s)).toBe("Xenova/bge-small-en-v1.5@q8;pt-BR=lsa");
    const { specs, kept } = specsPerLocale(s, ["es-419", "en", "pt-BR", "en-GB"]);
    expect(Object.fromEntries(specs)).toEqual({
      en: "Xenova/bge-small-en-v1.5@q8",
      "en-GB": "Xenova/bge-small-en-v1.5@q8",
      "es-419": "auto",
      "pt-BR": "lsa",
    });
    expect(kept).toEqual(["es-419"]);
    // A model of unknown languages applies everywhere.
    expect([...specsPerLocale(parseLocaleSpec("org/other"), ["en", "es-419"]).specs.values()]).toEqual([
      "org/other",
      "org/other",
    ]);
  });

  it("routes documents and queries by locale and zero-pads to the widest embedder", async () => {
    const e = new LocaleRoutedEmbedder(
      new Map([
        ["en", fixed("wide", [1, 2, 3])],
        ["es-419", fixed("narrow", [4])],
      ]),
      fixed("narrow", [4]),
    );
    expect(e.dimension).toBe(3);
    expect(e.id).toBe("locales(en=wide;es-419=narrow)");
    expect(embedderIdForLocale(e.id, "es-419")).toBe("narrow");
    expect(embedderIdForLocale("lsa-128-x", "en")).toBeUndefined();
    expect(await e.embedDocuments(["a", "b", "c"], { locales: ["es-419", "en", "pt-BR"] })).toEqual([
      [4, 0, 0],
      [1, 2, 3],
      [4, 0, 0],
    ]);
    expect(await e.embedQuery("q", { locale: "en" })).toEqual([1, 2, 3]);
    expect(await e.embedQuery("q", { locale: "es-419" })).toEqual([4, 0, 0]);
  });

  it("--config's locales.<tag>.embedder folds into retrieval.embedder's spec; a bad one is exit 2 naming the key", async () => {
    const m = await readSettings([
      '{"retrieval":{"embedder":"Xenova/bge-small-en-v1.5@q8"},"locales":{"es-419":{"embedder":"lsa"},"pt-BR":{"denseK":7}}}',
    ]);
    expect(m.settings.get("retrieval.embedder")?.value).toBe("Xenova/bge-small-en-v1.5@q8;es-419=lsa");
    expect(m.config.locales).toEqual({ "pt-BR": { denseK: 7 } });
    const only = await readSettings(['{"locales":{"en":{"embedder":"Xenova/bge-small-en-v1.5@q8"}}}']);
    expect(only.settings.get("retrieval.embedder")?.value).toBe("auto;en=Xenova/bge-small-en-v1.5@q8");
    const err = await readSettings(['{"locales":{"en":{"embedder":""}}}']).catch((e: unknown) => e);
    expect(String((err as Error).message)).toContain("locales.en.embedder");
    expect(err).toBeInstanceOf(DataValidationError); // exit 2 (src/errors.ts)
  });

  it("the runtime's model languages agree with scripts/models.json (bge-small-en-v1.5: en)", () => {
    const table = JSON.parse(readFileSync("scripts/models.json", "utf8")) as {
      models: { id: string; languages?: string[] }[];
    };
    const bge = table.models.find((m) => m.id === "Xenova/bge-small-en-v1.5");
    expect(bge?.languages).toEqual(["en"]);
    for (const m of table.models) {
      expect(modelLanguages(m.id)).toEqual(m.languages);
      expect(modelLanguages(`${m.id}@q8`)).toEqual(m.languages);
    }
  });
});
