/**
 * Conversations as long as real ones (issue 53), through the real bin: a 200-turn chat is
 * imported whole (`--max-turns` cuts only when asked, and says so), and a 200-turn case
 * validates, evaluates (position buckets with n), gates (a floor, a baseline), traces its
 * turn #150 and goes on a labelling page; a bad field deep in it is named by file, line and
 * field. Before, a case held at most 4 turns and import kept the first 4.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { MINI_KB } from "../helpers/fixtures.js";

const TURNS = 200;
const QUESTIONS = [
  "how do I lock my card?",
  "and will my refund still arrive?",
  "how long do refunds take?",
  "and how do I unfreeze it?",
];
const GOLD = [["card-freeze"], ["refund-timelines", "card-freeze"], ["refund-timelines"], ["card-freeze"]];

let dir: string;
let cases: string;
const BUILTIN = '{"retrieval":{"embedder":"builtin"}}';

/** One 200-turn case: every 10th turn labelled, the rest to label; each turn after the first with the assistant's reply before it. */
function longCase() {
  return {
    id: "en-long-001",
    locale: "en",
    kind: "golden",
    turns: Array.from({ length: TURNS }, (_, i) => ({
      user: `${QUESTIONS[i % 4]} (${i})`,
      ...(i % 10 === 0 ? { must_cite_one_of: GOLD[i % 4], expect: "answer" } : {}),
      ...(i > 0 ? { context: [{ role: "assistant", content: `reply ${i}` }] } : {}),
    })),
  };
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "retrace-long-"));
  cases = path.join(dir, "cases.jsonl");
  await writeFile(cases, JSON.stringify(longCase()) + "\n");
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("a 200-turn conversation", () => {
  it("cases import keeps every user turn; --max-turns cuts only when asked and counts the cut", async () => {
    const chat = path.join(dir, "chat.jsonl");
    const messages = Array.from({ length: TURNS }, (_, i) => [
      { role: "user", content: `question ${i}` },
      { role: "assistant", content: `answer ${i}` },
    ]).flat();
    await writeFile(chat, JSON.stringify({ messages, locale: "en" }) + "\n");
    const out = path.join(dir, "imported.jsonl");
    const r = await runCli(["cases", "import", chat, "--out", out]);
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toMatch(/Imported 1 conversation \(200 turns to label\)/);
    expect(r.stderr).not.toMatch(/kept their first/);
    const imported = JSON.parse((await readFile(out, "utf8")).trim());
    expect(imported.turns).toHaveLength(TURNS);
    expect(imported.turns[199]).toEqual({
      user: "question 199",
      context: [{ role: "assistant", content: "answer 198" }],
    });
    const check = await runCli(["check", "--kb", MINI_KB, "--cases", out]);
    expect(check.exitCode).toBe(0);

    const cut = await runCli(["cases", "import", chat, "--max-turns", "12", "--out", path.join(dir, "cut.jsonl")]);
    expect(cut.exitCode).toBe(0);
    expect(cut.stderr).toMatch(/1 longer than 12 user turns kept their first 12 \(--max-turns\)/);
    expect(JSON.parse((await readFile(path.join(dir, "cut.jsonl"), "utf8")).trim()).turns).toHaveLength(12);
  });

  it("a bad field at turn 157 is exit 2 naming file, line and field", async () => {
    const bad = longCase();
    (bad.turns[157] as Record<string, unknown>).expect = "maybe";
    const file = path.join(dir, "bad.jsonl");
    await writeFile(file, "\n" + JSON.stringify(bad) + "\n");
    const r = await runCli(["check", "--kb", MINI_KB, "--cases", file]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(`${file}:2: field \`turns[157].expect\` expected "answer" or "refuse", got "maybe"`);
  });

  it("evaluates and gates: every labelled turn scored, positions in buckets with n; a baseline of it gates the next run", async () => {
    const json = path.join(dir, "report.json");
    const baseline = path.join(dir, "baseline.json");
    const args = ["eval", "--kb", MINI_KB, "--cases", cases, "--store", "memory", "--config", BUILTIN];
    const r = await runCli(
      [...args, "--gate", "min-hit=0.5", "--baseline", baseline, "--update-baseline", "--out", `json:${json}`],
      {
        timeoutMs: 600_000,
      },
    );
    expect(r.exitCode).toBe(0);
    const report = JSON.parse(await readFile(json, "utf8"));
    expect(report.turns).toHaveLength(TURNS);
    expect(report.aggregates.retrieval_hit_at_k.n).toBe(20);
    expect(Object.keys(report.splits.position)).toEqual(["1", "2", "3", "4-5", "6-10", "11+"]);
    // Labelled turns are #0, #10, …, #190: one in #0, none in #1–#9, 19 in #10+.
    expect(report.splits.position["11+"].retrieval_hit_at_k.n).toBe(19);
    expect(report.splits.position["4-5"].retrieval_hit_at_k).toBeUndefined(); // turns to label only: n = 0
    // The position table is in the full table (`report --table`, `eval --verbose`), not on the first screen.
    expect(r.stdout).not.toMatch(/^metric \(position\)/m);
    const full = (await runCli(["report", json, "--table"])).stdout;
    const header = full.split("\n").find((l) => l.startsWith("metric (position)"))!;
    expect(header).toMatch(/turn #0 .*turn #10\+/);
    expect(full).toMatch(/n=19 \(1 case\)/);

    const again = await runCli([...args, "--baseline", baseline, "--gate", "max-drop=0.01", "--gate", "max-flips=0"], {
      timeoutMs: 600_000,
    });
    expect(again.stderr).not.toMatch(/error/i);
    expect(again.exitCode).toBe(0);
    expect(again.stdout).toMatch(/gate: PASS/);
  }, 900_000);

  it("traces turn #150 (the 150 before it run for context)", async () => {
    const r = await runCli(
      [
        "trace",
        "en-long-001",
        "--turn",
        "150",
        "--kb",
        MINI_KB,
        "--cases",
        cases,
        "--store",
        "memory",
        "--config",
        BUILTIN,
        "--json",
      ],
      { timeoutMs: 600_000 },
    );
    expect(r.exitCode).toBe(0);
    const traced = JSON.parse(r.stdout);
    expect(traced.turns).toHaveLength(1);
    expect(traced.turns[0].report.turn).toBe(150);
    expect(traced.turns[0].report.user).toBe("how long do refunds take? (150)");
    expect(traced.turns[0].report.retrievedIds).toContain("refund-timelines");
    const outOfRange = await runCli([
      "trace",
      "en-long-001",
      "--turn",
      "200",
      "--kb",
      MINI_KB,
      "--cases",
      cases,
      "--store",
      "memory",
      "--config",
      BUILTIN,
    ]);
    expect(outOfRange.exitCode).toBe(2);
    expect(outOfRange.stderr).toMatch(/0 to 199/);
  }, 600_000);

  it("goes on a labelling page whole: 200 turns, the conversation so far with the recorded replies", async () => {
    const html = path.join(dir, "label.html");
    const r = await runCli(
      [
        "label",
        cases,
        "--kb",
        MINI_KB,
        "--store",
        "memory",
        "--config",
        JSON.stringify({ retrieval: { embedder: "builtin" } }),
        "--out",
        `html:${html}`,
      ],
      {
        timeoutMs: 600_000,
      },
    );
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toMatch(/1 case, 200 turns/);
  }, 600_000);
});
