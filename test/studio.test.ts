/**
 * The LangGraph CLI / Studio entry: langgraph.json names an exported factory,
 * and the factory builds the graph the environment asks for.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { HumanMessage } from "@langchain/core/messages";
import { afterEach, describe, expect, it, vi } from "vitest";
import { InvalidArgumentError } from "../src/errors.js";
import { hasRetrieval } from "../src/graph/build.js";
import { createStudioGraph, studioStore } from "../src/studio.js";
import { ROOT } from "./helpers/cli.js";
import { MINI_KB } from "./helpers/fixtures.js";

afterEach(() => {
  vi.unstubAllEnvs();
});

describe("langgraph.json", () => {
  it("points LangGraph's CLI at an exported graph factory of this repository", async () => {
    const config = JSON.parse(await readFile(path.join(ROOT, "langgraph.json"), "utf8")) as {
      node_version: string;
      graphs: Record<string, string>;
    };
    expect(config.node_version).toBe("20");
    const spec = config.graphs.retrace!;
    const [file, exportName] = spec.split(":") as [string, string];
    expect(file).toBe("./src/studio.ts");
    const mod = (await import(path.join(ROOT, file))) as Record<string, unknown>;
    expect(typeof mod[exportName]).toBe("function");
  });
});

describe("studio factory", () => {
  it("picks the store from the environment", () => {
    expect(studioStore({})).toBe("memory");
    expect(studioStore({ CHROMA_URL: "http://127.0.0.1:8000" })).toBe("http://127.0.0.1:8000");
    expect(studioStore({ CHROMA_URL: "http://127.0.0.1:8000", RETRACE_STORE: "none" })).toBe("none");
    expect(studioStore({ CHROMA_URL: "http://127.0.0.1:8000", RETRACE_STORE: "local" })).toBe("local");
    expect(studioStore({ RETRACE_STORE: "memory" })).toBe("memory");
    // The old vocabulary is gone: one set of words for flags, env and docs.
    expect(() => studioStore({ RETRACE_STORE: "chroma" })).toThrow(InvalidArgumentError);
    expect(() => studioStore({ RETRACE_STORE: "pinecone" })).toThrow(InvalidArgumentError);
  });

  it("builds a store-backed graph over an in-memory index that answers a turn", async () => {
    const h = await createStudioGraph({ RETRACE_KB: MINI_KB, RETRACE_STORE: "memory", RETRACE_EMBEDDER: "builtin" });
    expect(h.store).toBe("memory");
    expect(hasRetrieval(h.graph)).toBe(true);
    const s = (await h.graph.invoke({ messages: [new HumanMessage("how do I freeze my card?")], locale: "en" })) as {
      retrieval: { retrievedIds: string[] }[];
      citedIds: string[];
    };
    expect(s.retrieval[0]!.retrievedIds[0]).toBe("card-freeze");
    expect(s.citedIds).toContain("card-freeze");
    await h.close();
  });

  it("builds the store-less graph for RETRACE_STORE=none", async () => {
    const h = await createStudioGraph({ RETRACE_KB: MINI_KB, RETRACE_STORE: "none" });
    expect(hasRetrieval(h.graph)).toBe(false);
  });

  it("the exported factory builds once and reuses the graph", async () => {
    vi.stubEnv("RETRACE_KB", MINI_KB);
    vi.stubEnv("RETRACE_STORE", "memory");
    vi.stubEnv("RETRACE_EMBEDDER", "builtin");
    const mod = await import("../src/studio.js");
    const a = await mod.graph();
    const b = await mod.graph();
    expect(a).toBe(b);
    expect(hasRetrieval(a)).toBe(true);
  });
});
