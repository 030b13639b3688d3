/**
 * A query that is blank after Unicode white space (`\p{White_Space}`: NBSP,
 * ideographic space, …) and format characters (`\p{Cf}`: zero-width space,
 * ZWJ, word joiner, BOM, soft hyphen) is empty everywhere a query or a turn's
 * question is checked (docs/reliability.md): an eval case's `user` (exit 2
 * naming file, line and field), the hybrid retriever, the retrieve node and
 * the contextualize node. Messages show the invisible characters escaped.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { DataValidationError, formatIssue, InvalidArgumentError } from "../src/errors.js";
import { loadKnowledgeBase } from "../src/kb/cards.js";
import { loadCases, parseCaseLine } from "../src/kb/cases.js";
import { isBlankText, type Chunk } from "../src/kb/types.js";
import { contextualize } from "../src/nodes/contextualize.js";
import { retrieveNode } from "../src/nodes/retrieve.js";
import { InMemoryDenseIndex } from "../src/retrieval/dense.js";
import { HashingEmbedder } from "../src/retrieval/embedders/builtin.js";
import { HybridRetriever } from "../src/retrieval/hybrid.js";
import { MINI_KB } from "./helpers/fixtures.js";
import { RecordingRetrieverDouble } from "./graph/helpers.js";

/** Blank texts: NBSP + zero-width space (the drill), ZWJ, BOM, word joiner + ideographic space + soft hyphen, a tab and a newline. */
const BLANK: readonly [string, string][] = [
  ["NBSP and zero-width spaces", "\u00a0\u200b\u00a0\u200b"],
  ["a zero-width joiner", "\u200d"],
  ["a byte-order mark", "\ufeff"],
  ["word joiner, ideographic space, soft hyphen, Mongolian vowel separator", "\u2060\u3000\u00ad\u180e"],
  ["ASCII white space", " \t\n"],
  ["nothing", ""],
];

describe("isBlankText", () => {
  it.each(BLANK)("%s is blank", (_name, text) => {
    expect(isBlankText(text)).toBe(true);
  });

  it("a visible character is not blank, whatever surrounds it", () => {
    for (const t of ["a", "\u200bx\u200b", "\u00a0¿?\u00a0", "é", "😀", "\u0301"])
      expect(isBlankText(t), JSON.stringify(t)).toBe(false);
  });
});

describe("eval cases: a blank `user` is a data error naming file, line and field", () => {
  const good = {
    id: "en-x-001",
    locale: "en",
    kind: "golden",
    turns: [{ user: "q", must_cite_one_of: ["card-freeze"], expect: "answer" }],
  };

  it.each(BLANK.filter(([, t]) => t !== ""))("%s", (_name, user) => {
    const { case: c, issues } = parseCaseLine(
      JSON.stringify({ ...good, turns: [good.turns[0], { ...good.turns[0], user }] }),
      "cases.jsonl",
      7,
    );
    expect(c).toBeUndefined();
    expect(issues).toEqual([
      {
        file: "cases.jsonl",
        line: 7,
        field: "turns[1].user",
        message: expect.stringContaining("expected a non-empty string"),
      },
    ]);
  });

  it("the message shows the invisible characters escaped", () => {
    const { issues } = parseCaseLine(
      JSON.stringify({ ...good, turns: [{ ...good.turns[0], user: "\u00a0\u200b" }] }),
      "cases.jsonl",
      7,
    );
    expect(formatIssue(issues[0]!)).toBe(
      'cases.jsonl:7: field `turns[0].user` expected a non-empty string, got "\\u00a0\\u200b" (only white space or invisible format characters)',
    );
  });

  it("loadCases: exit 2 naming the file and line", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "retrace-blank-"));
    try {
      const file = path.join(dir, "cases.jsonl");
      await writeFile(
        file,
        `${JSON.stringify(good)}\n${JSON.stringify({ ...good, id: "en-x-002", turns: [{ ...good.turns[0], user: "\u200b\u200d\ufeff" }] })}\n`,
      );
      const e = await loadCases(file, await loadKnowledgeBase(MINI_KB)).then(
        () => undefined,
        (x: unknown) => x,
      );
      expect(e).toBeInstanceOf(DataValidationError);
      expect((e as DataValidationError).exitCode).toBe(2);
      expect((e as DataValidationError).issues).toEqual([
        expect.objectContaining({ file, line: 2, field: "turns[0].user" }),
      ]);
      expect((e as Error).message).toContain('got "\\u200b\\u200d\\ufeff"');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("the hybrid retriever refuses a blank query", () => {
  const chunks: Chunk[] = [
    { id: "a#1", parentId: "a", locale: "en", title: "a", section: "s", text: "freeze your card in the app" },
  ];

  it.each(BLANK)("%s", async (_name, query) => {
    const embedder = new HashingEmbedder();
    const retriever = new HybridRetriever({
      chunks,
      embedder,
      dense: await InMemoryDenseIndex.fromChunks(chunks, embedder),
    });
    const e = await retriever.retrieve(query).then(
      () => undefined,
      (x: unknown) => x,
    );
    expect(InvalidArgumentError.isInstance(e)).toBe(true);
    expect((e as Error).message).toMatch(
      /^Expected `query` to be a non-empty query \(not only white space or invisible format characters/,
    );
    if (query.includes("\u200b")) expect((e as Error).message).toContain("\\u200b");
  });

  it("still answers a query with visible text among invisible characters", async () => {
    const embedder = new HashingEmbedder();
    const retriever = new HybridRetriever({
      chunks,
      embedder,
      dense: await InMemoryDenseIndex.fromChunks(chunks, embedder),
    });
    expect((await retriever.retrieve("\u00a0freeze\u200b")).retrievedIds).toEqual(["a"]);
  });
});

describe("the graph's nodes treat a blank question as empty", () => {
  it("retrieve: a blank state.query falls back to the human message; both blank is an InvalidArgumentError", async () => {
    const retriever = new RecordingRetrieverDouble(["x"]);
    await retrieveNode(
      { query: "\u00a0\u200b", messages: [new HumanMessage("freeze my card")] },
      { configurable: { retriever } },
    );
    expect(retriever.calls[0]?.query).toBe("freeze my card");
    await expect(
      retrieveNode({ query: "\u200b", messages: [new HumanMessage("\u00a0\ufeff")] }, { configurable: { retriever } }),
    ).rejects.toThrow(/Expected `query` to be a non-empty query .*, got "\\u00a0\\ufeff"/);
  });

  it("contextualize: a human message of NBSP and zero-width spaces is an InvalidArgumentError", async () => {
    await expect(contextualize({ messages: [new HumanMessage("\u00a0\u200b")] }, {})).rejects.toThrow(
      InvalidArgumentError,
    );
    await expect(
      contextualize({ messages: [new HumanMessage("hi"), new AIMessage("ok"), new HumanMessage("\u200d")] }, {}),
    ).rejects.toThrow(/non-empty human message/);
  });

  it("contextualize: a blank previous query is not carried into a follow-up", async () => {
    const update = await contextualize(
      { messages: [new HumanMessage("and what about the fee?")], locale: "en", query: "\u00a0\u200b" },
      {},
    );
    expect(update.query).toBe("and what about the fee?");
  });
});
