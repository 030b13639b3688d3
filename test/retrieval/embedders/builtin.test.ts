import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../../src/errors.js";
import { cosineSimilarity } from "../../../src/retrieval/dense.js";
import {
  BUILTIN_DIMENSION,
  HashingEmbedder,
  fmix32,
  fnv1a32,
  hashFeature,
} from "../../../src/retrieval/embedders/builtin.js";

const norm = (v: number[]) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));

describe("HashingEmbedder", () => {
  const e = new HashingEmbedder();

  it("describes itself honestly", () => {
    expect(e.id).toBe("builtin-hashed-ngrams-384-v1");
    expect(e.dimension).toBe(BUILTIN_DIMENSION);
    expect(e.description).toMatch(/not semantic/);
    expect(e.description).toMatch(/no model weights/);
    expect(new HashingEmbedder({ dimension: 64, minN: 2, maxN: 4 }).id).toBe("builtin-hashed-ngrams-64-n2-4-v1");
  });

  it("is deterministic: a fresh instance gives the same vector, and the hash is pinned", async () => {
    const a = await e.embedQuery("How do I freeze my card?");
    const b = await new HashingEmbedder().embedQuery("How do I freeze my card?");
    expect(b).toEqual(a);
    // Published FNV-1a 32-bit test vectors (ASCII: code units = bytes).
    expect(fnv1a32("")).toBe(0x811c9dc5);
    expect(fnv1a32("a")).toBe(0xe40c292c);
    expect(fnv1a32("foobar")).toBe(0xbf9cf968);
    expect(fmix32(0)).toBe(0);
    // Regression pins: stored vectors (and Chroma collections named by `id`) depend on these values.
    expect(hashFeature("w:card")).toBe(1554884356);
    expect(hashFeature("<ca")).toBe(2668736034);
  });

  it("returns unit vectors of the configured dimension, also for empty text", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 60 }), (text) => {
        const v = e.embed(text);
        expect(v).toHaveLength(384);
        expect(norm(v)).toBeCloseTo(1, 12);
        expect(v.every(Number.isFinite)).toBe(true);
      }),
      { seed: 42, numRuns: 200 },
    );
    expect(e.embed("")).toEqual(e.embed("?!"));
    expect(new HashingEmbedder({ dimension: 16 }).embed("card")).toHaveLength(16);
  });

  it("puts similar strings closer than unrelated ones", () => {
    const cos = (a: string, b: string) => cosineSimilarity(e.embed(a), e.embed(b));
    expect(cos("tarjeta bloqueada", "tarjetas bloqueadas")).toBeGreaterThan(
      cos("tarjeta bloqueada", "transferencia SPEI"),
    );
    expect(cos("refund timelines", "refunds timeline")).toBeGreaterThan(cos("refund timelines", "lost phone"));
    expect(cos("cartão", "cartao")).toBeCloseTo(1, 12); // accents folded
    expect(cos("Card Freeze", "card freeze")).toBeCloseTo(1, 12); // case folded
    expect(cos("freeze my card", "freez my crad")).toBeGreaterThan(cos("freeze my card", "direct deposit"));
  });

  it("is batch-invariant: embedDocuments equals embedding each text alone, in any batch", async () => {
    const texts = ["card freeze", "límite diario", "", "Pix chaves", "card freeze"];
    const batch = await e.embedDocuments(texts);
    expect(batch).toHaveLength(texts.length);
    for (const [i, t] of texts.entries()) expect(batch[i]).toEqual(await e.embedQuery(t));
    expect(await e.embedDocuments([...texts].reverse())).toEqual([...batch].reverse());
  });

  it("rejects bad options", () => {
    expect(() => new HashingEmbedder({ dimension: 0 })).toThrow(InvalidArgumentError);
    expect(() => new HashingEmbedder({ minN: 0 })).toThrow("Expected `minN` to be a positive integer, got 0");
    expect(() => new HashingEmbedder({ minN: 4, maxN: 3 })).toThrow(InvalidArgumentError);
  });
});
