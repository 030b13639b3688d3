/**
 * Example (a), LangChain's Chroma vector store against a real, self-started
 * Chroma server, evaluated by the real CLI. The expected ranking of each turn
 * is asked of Chroma directly with the chromadb client (same embeddings,
 * nResults 10, as the example's `asRetriever({ k: 10 })`), independently of
 * LangChain and of retrace's capture.
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import { useLocalChroma } from "../helpers/chroma.js";
import { runCli } from "../helpers/cli.js";
import { MINI_KB } from "../helpers/fixtures.js";
import { TrigramHashEmbeddings } from "../../examples/lib/embeddings.js";
import { expectTurnsMatch, readCases } from "./helpers.js";

const chroma = useLocalChroma("example-chroma");

describe("examples/chroma.ts", () => {
  it("per-turn hit/recall/nDCG equal the hand computation on Chroma's own ranking", async () => {
    const collection = "retrace-example-test";
    const r = await runCli(["eval", "--graph", "examples/chroma.ts", "--kb", MINI_KB, "--json"], {
      env: {
        CHROMA_URL: chroma.server.url,
        RETRACE_EXAMPLE_KB: MINI_KB,
        RETRACE_EXAMPLE_COLLECTION: collection,
        RETRACE_LOG: "warn",
      },
    });
    expect(r.stderr).not.toMatch(/unexpected error/);
    const report = JSON.parse(r.stdout);
    expect(report.run.graph.retrievers).toEqual(["VectorStoreRetriever"]);
    const col = await chroma.client.getCollection({ name: collection, embeddingFunction: null as never });
    const embeddings = new TrigramHashEmbeddings();
    const checked = await expectTurnsMatch(
      report,
      readCases(path.join(MINI_KB, "eval", "cases.jsonl")),
      5,
      async (q) => {
        const res = await col.query({
          queryEmbeddings: [await embeddings.embedQuery(q)],
          nResults: 10,
          include: ["metadatas" as never],
        });
        const ids: string[] = [];
        for (const m of res.metadatas[0] ?? []) {
          const id = String((m as Record<string, unknown>).parentId);
          if (!ids.includes(id)) ids.push(id);
        }
        return ids;
      },
    );
    expect(checked).toBe(5);
    expect(r.exitCode).toBe(0);
  }, 180_000);
});
