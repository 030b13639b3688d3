import { describe, expect, it } from "vitest";
import type { DataIssue } from "../../src/errors.js";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { importCases } from "../../src/app/cases-import.js";
import { chatConversation, contentText, conversationCase, conversationId, readMessage, rootRunTurn, type RootRunTurn } from "../../src/kb/conversations.js";
import { userTextOf } from "../../src/eval/traces/otlp.js";

const where = { file: "runs.json", line: 1 };

function run(over: Record<string, unknown>): Record<string, unknown> {
  return { id: "r", name: "agent", run_type: "chain", parent_run_id: null, start_time: "2025-01-01T10:00:00.000000", inputs: { messages: [] }, ...over };
}

describe("messages in their three serialized shapes", () => {
  it("reads role/content dicts with OpenAI and LangChain roles, type dicts and the lc constructor form", () => {
    expect(readMessage({ role: "user", content: "a" })).toEqual({ role: "user", content: "a" });
    expect(readMessage({ role: "human", content: "a" })).toEqual({ role: "user", content: "a" });
    expect(readMessage({ role: "ai", content: "b" })).toEqual({ role: "assistant", content: "b" });
    expect(readMessage({ type: "human", data: { content: "c" } })).toEqual({ role: "user", content: "c" });
    expect(readMessage({ lc: 1, type: "constructor", id: ["langchain_core", "messages", "HumanMessage"], kwargs: { content: "d" } })).toEqual({ role: "user", content: "d" });
    expect(readMessage({ lc: 1, type: "constructor", id: ["langchain_core", "messages", "AIMessage"], kwargs: { content: "e" } })).toEqual({ role: "assistant", content: "e" });
    expect(readMessage({ role: "robot", content: "x" })).toHaveProperty("error");
    expect(readMessage("hello")).toHaveProperty("error");
  });

  it("joins the text parts of a content array and leaves images out", () => {
    expect(contentText([{ type: "text", text: "one" }, { type: "image_url", image_url: { url: "x" } }, "two"])).toBe("one\ntwo");
    expect(contentText([{ type: "image_url" }])).toBeNull();
    expect(contentText(42)).toBeUndefined();
  });
});

describe("chat conversations", () => {
  it("keeps the user messages in order as turns", () => {
    const issues: DataIssue[] = [];
    const c = chatConversation({ messages: [{ role: "system", content: "s" }, { role: "user", content: "q1" }, { role: "assistant", content: "a" }, { role: "user", content: [{ type: "text", text: "q2" }] }], locale: "en" }, where, issues);
    expect(issues).toEqual([]);
    expect(c?.turns).toEqual(["q1", "q2"]);
    expect(c?.locale).toBe("en");
  });

  it("keeps the assistant's messages before each user turn as its context (text parts only; tool-call-only and system messages left out)", () => {
    const issues: DataIssue[] = [];
    const c = chatConversation(
      {
        messages: [
          { role: "assistant", content: "Hi, how can I help?" },
          { role: "user", content: "my light is red" },
          { role: "assistant", content: null, tool_calls: [{ id: "t" }] },
          { role: "tool", content: "status: red" },
          { role: "assistant", content: [{ type: "text", text: "Try restarting it." }] },
          { role: "assistant", content: "did the light turn green?" },
          { role: "user", content: "no it stayed red" },
        ],
      },
      where,
      issues,
    );
    expect(issues).toEqual([]);
    expect(c?.contexts).toEqual([["Hi, how can I help?"], ["Try restarting it.", "did the light turn green?"]]);
    const ic = conversationCase(c!, "en");
    expect(ic.turns).toEqual([
      { user: "my light is red", context: [{ role: "assistant", content: "Hi, how can I help?" }] },
      { user: "no it stayed red", context: [{ role: "assistant", content: "Try restarting it." }, { role: "assistant", content: "did the light turn green?" }] },
    ]);
    // The id reads the user turns only: the same as before context was kept.
    expect(ic.id).toBe(conversationId("en", ["my light is red", "no it stayed red"]));
  });

  it("names the field of a bad message and refuses a conversation without a user message", () => {
    const issues: DataIssue[] = [];
    expect(chatConversation({ messages: [{ role: "user", content: "q" }, { role: "bot", content: "a" }] }, where, issues)).toBeNull();
    expect(issues[0]).toMatchObject({ file: "runs.json", line: 1, field: "messages[1]" });
    const more: DataIssue[] = [];
    expect(chatConversation({ messages: [{ role: "assistant", content: "hi" }] }, where, more)).toBeNull();
    expect(more[0]?.message).toMatch(/at least one user message/);
    const locale: DataIssue[] = [];
    chatConversation({ messages: [{ role: "user", content: "q" }], locale: "pt-br" }, where, locale);
    expect(locale[0]?.message).toMatch(/did you mean "pt-BR"/);
  });
});

describe("LangSmith root runs", () => {
  it("takes the last human message of inputs.messages, nested or not, with the assistant messages before it as context", () => {
    const issues: DataIssue[] = [];
    const r = run({ inputs: { messages: [[{ lc: 1, type: "constructor", id: ["x", "HumanMessage"], kwargs: { content: "first" } }, { type: "ai", content: "reply" }, { role: "user", content: "second" }, { type: "ai", content: "r2" }]] } });
    const turn = rootRunTurn(r, where, issues);
    expect(issues).toEqual([]);
    expect((turn as RootRunTurn).text).toBe("second");
    // The assistant messages between the previous human message and the last one; the reply after it ("r2") is not context.
    expect((turn as RootRunTurn).context).toEqual(["reply"]);
  });

  it("reads the user text by the rule eval --traces reads it with (content parts too), so an imported turn joins its recording", () => {
    const inputs = { messages: [{ role: "user", content: "old" }, { type: "ai", content: "a" }, { role: "user", content: [{ type: "text", text: "how do I" }, { type: "image_url", image_url: "x" }, { type: "text", text: "freeze it?" }] }, { role: "user", content: "  " }] };
    const turn = rootRunTurn(run({ inputs }), where, []) as RootRunTurn;
    expect(turn.text).toBe("how do I\nfreeze it?");
    expect(userTextOf(inputs)).toBe(turn.text);
    // The OTLP input.value (a JSON string) reads the same.
    expect(userTextOf(JSON.stringify(inputs))).toBe(turn.text);
  });

  it("groups by the thread LangSmith groups runs in, never by the run-level session_id (the tracing project), ordered by start_time", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "retrace-conv-"));
    try {
      const rows = [
        run({ id: "3", session_id: "project-1", start_time: "2025-01-01T10:05:00", extra: { metadata: { thread_id: "t1" } }, inputs: { messages: [{ role: "user", content: "t1 second" }] } }),
        run({ id: "1", session_id: "project-1", start_time: "2025-01-01T10:00:00", extra: { metadata: { thread_id: "t1" } }, inputs: { messages: [{ role: "user", content: "t1 first" }] } }),
        run({ id: "2", session_id: "project-1", start_time: "2025-01-01T10:01:00", extra: { metadata: { conversation_id: "c9" } }, inputs: { messages: [{ role: "user", content: "c9 only" }] } }),
        run({ id: "4", session_id: "project-1", start_time: 1735725900000, extra: { metadata: { session_id: "s5" } }, inputs: { messages: [{ role: "user", content: "s5 only" }] } }),
        // A v2 run: the thread at the top level.
        { id: "5", run_type: "CHAIN", is_root: true, project_id: "p", start_time: "2025-01-01T10:02:00", thread_id: "v2", inputs: { messages: [{ role: "user", content: "v2 only" }] } },
      ];
      const file = path.join(dir, "runs.jsonl");
      await writeFile(file, rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
      const out = await importCases(file, { locale: "en" });
      // Four threads, not one (all runs share the project's session_id), sorted by thread id as eval --traces sorts them.
      expect(out.cases.map((c) => [c.id, c.turns.map((t) => t.user)])).toEqual([
        ["c9", ["c9 only"]],
        ["s5", ["s5 only"]],
        ["t1", ["t1 first", "t1 second"]],
        ["v2", ["v2 only"]],
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("refuses a root run without chat messages, naming the field", () => {
    const issues: DataIssue[] = [];
    expect(rootRunTurn(run({ inputs: { question: "q" } }), where, issues)).toBeNull();
    expect(issues[0]).toMatchObject({ field: "inputs.messages" });
  });
});

describe("case ids", () => {
  it("are a stable hash of locale and turns", () => {
    expect(conversationId("en", ["a", "b"])).toBe(conversationId("en", ["a", "b"]));
    expect(conversationId("en", ["a", "b"])).not.toBe(conversationId("es-419", ["a", "b"]));
    expect(conversationId("en", ["a", "b"])).toMatch(/^conv-[0-9a-f]{16}$/);
  });
});
