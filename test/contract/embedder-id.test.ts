/** The embedder-identity rule of src/contract/embedder-id.ts: what a baseline compares of an embedder id. */
import { describe, expect, it } from "vitest";
import { embedderIdentity } from "../../src/contract/embedder-id.js";

describe("embedderIdentity", () => {
  it("drops the 12-hex fit hash of a corpus-fit id, keeping name, dimension and version", () => {
    expect(embedderIdentity("lsa-128-916eee2dd175-v1")).toBe("lsa-128-v1");
    expect(embedderIdentity("lsa-64-000000000000-v2")).toBe("lsa-64-v2");
    expect(embedderIdentity("my-fitted-32-abcdefabcdef-v3")).toBe("my-fitted-32-v3");
  });
  it("leaves every other id unchanged", () => {
    for (const id of [
      "builtin-hashed-ngrams-384-v1",
      "Xenova/bge-small-en-v1.5",
      "lsa-128-916eee2dd17-v1",
      "lsa-128-916EEE2DD175-v1",
      "graph:g.mjs#graph",
      "lsa-128-916eee2dd175",
    ])
      expect(embedderIdentity(id)).toBe(id);
  });
});
