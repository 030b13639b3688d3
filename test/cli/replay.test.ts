/**
 * `run.replay` (docs/configuration.md#replay-own-or-recorded-history) through the real bin:
 * `own` (the default) replays a case on one thread, so a turn sees the graph's own earlier
 * answers; `recorded` runs each turn on a fresh thread fed the case's recorded conversation
 * (its assistant messages, `context`). A case whose entity only the recorded assistant turn
 * names: retrace's own graph (its contextualize node carries the conversation) retrieves it
 * in `recorded` mode and not in `own`; the query attribution says "rewrite lost it" only in
 * `own`; the dataset hash takes `context` in `recorded` mode only; a `--graph` graph gets the
 * recorded messages on the messages channel (default input) or through `turn.history`
 * (an `--input` builder); `retrace trace` honours it; `--traces` refuses it.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, runCli } from "../helpers/cli.js";
import { MINI_KB } from "../helpers/fixtures.js";

let dir: string;
let cases: string;
const CASE = {
  id: "en-replay-001",
  locale: "en",
  kind: "golden",
  turns: [
    { user: "how do I freeze my card?", must_cite_one_of: ["card-freeze"], expect: "answer" },
    {
      user: "and how long does that take?",
      must_cite_one_of: ["refund-timelines"],
      expect: "answer",
      // Only the recorded assistant turn names the refund the user asks about.
      context: [{ role: "assistant", content: "Your merchant refund for the duplicate charge is on its way." }],
    },
  ],
};
const HISTORY_AGENT = path.join(ROOT, "test", "fixtures", "graphs", "history-agent.mjs");
const HISTORY_INPUT = path.join(ROOT, "test", "fixtures", "graphs", "history-input.mjs");

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "retrace-replay-"));
  cases = path.join(dir, "cases.jsonl");
  await writeFile(cases, JSON.stringify(CASE) + "\n");
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const config = (replay?: string, graph = false) =>
  JSON.stringify({
    ...(graph ? {} : { retrieval: { embedder: "builtin" } }),
    ...(replay !== undefined ? { run: { replay } } : {}),
  });

async function evalReport(name: string, replay: string | undefined, extra: string[] = []) {
  const out = path.join(dir, `${name}.json`);
  const graph = extra.includes("--graph");
  const r = await runCli(
    [
      "eval",
      "--kb",
      MINI_KB,
      "--cases",
      cases,
      ...(graph ? [] : ["--store", "memory"]),
      "-k",
      "1",
      "--config",
      config(replay, graph),
      ...extra,
      "--out",
      `json:${out}`,
    ],
    { timeoutMs: 300_000 },
  );
  expect(r.stderr).not.toMatch(/error/i);
  expect(r.exitCode).toBe(0);
  return { r, report: JSON.parse(await readFile(out, "utf8")) };
}

describe("run.replay on retrace's own graph", () => {
  it("recorded retrieves the entity named only by the recorded assistant turn; own does not; the report says which", async () => {
    const own = await evalReport("own", undefined);
    const explicitOwn = await evalReport("own-explicit", "own");
    const recorded = await evalReport("recorded", "recorded");

    const turn1 = (rep: { turns: { turn: number }[] }) =>
      rep.turns.find((t) => t.turn === 1) as never as {
        retrievedIds: string[];
        trace: { query: string };
        queries: { attribution: string };
      };
    expect(turn1(own.report).retrievedIds).toEqual(["card-freeze"]);
    expect(turn1(own.report).queries.attribution).toBe("rewrite_lost_it");
    expect(turn1(recorded.report).retrievedIds).toEqual(["refund-timelines"]);
    expect(turn1(recorded.report).trace.query).toContain("merchant refund");
    expect(turn1(recorded.report).queries.attribution).not.toBe("rewrite_lost_it");

    // The mode is stated; the default's report and hash are as they always were.
    expect(own.report.run).not.toHaveProperty("replay");
    expect(recorded.report.run.replay).toBe("recorded");
    expect(recorded.r.stdout).toMatch(/^replay: recorded history/m);
    expect(own.r.stdout).not.toMatch(/^replay:/m);
    expect(explicitOwn.report.run.datasetHash).toBe(own.report.run.datasetHash);
    const check = await runCli(["check", "--kb", MINI_KB, "--cases", cases, "--json"]);
    expect(JSON.parse(check.stdout).hashes.dataset).toBe(own.report.run.datasetHash);
    // `context` enters the hash in recorded mode only.
    expect(recorded.report.run.datasetHash).not.toBe(own.report.run.datasetHash);
  }, 600_000);

  it("retrace trace honours it", async () => {
    const args = (replay: string) => [
      "trace",
      CASE.id,
      "--turn",
      "1",
      "--kb",
      MINI_KB,
      "--cases",
      cases,
      "--store",
      "memory",
      "-k",
      "1",
      "--config",
      config(replay),
      "--json",
    ];
    const own = await runCli(args("own"), { timeoutMs: 300_000 });
    const recorded = await runCli(args("recorded"), { timeoutMs: 300_000 });
    expect(own.exitCode).toBe(0);
    expect(recorded.exitCode).toBe(0);
    const top = (stdout: string) => JSON.parse(stdout).turns[0].report.retrievedIds;
    expect(top(own.stdout)).toEqual(["card-freeze"]);
    expect(top(recorded.stdout)).toEqual(["refund-timelines"]);
  }, 600_000);
});

describe("run.replay with --graph", () => {
  it("the default input sends the recorded conversation on the messages channel, each turn on a fresh thread", async () => {
    const own = await evalReport("graph-own", undefined, ["--graph", HISTORY_AGENT]);
    const recorded = await evalReport("graph-recorded", "recorded", ["--graph", HISTORY_AGENT]);
    const answer = (rep: { turns: { turn: number; answer: string }[] }, i: number) =>
      rep.turns.find((t) => t.turn === i)!.answer;
    // Own: the thread holds the graph's own answer to turn 0.
    expect(answer(own.report, 1)).toBe(
      "user: how do I freeze my card? | assistant: user: how do I freeze my card? | user: and how long does that take?",
    );
    // Recorded: the case's recorded assistant message instead, and nothing of the graph's own.
    expect(answer(recorded.report, 1)).toBe(
      "user: how do I freeze my card? | assistant: Your merchant refund for the duplicate charge is on its way. | user: and how long does that take?",
    );
    expect(answer(recorded.report, 0)).toBe("user: how do I freeze my card?");
    expect(recorded.report.run.replay).toBe("recorded");
    expect(own.report.run.datasetHash).not.toBe(recorded.report.run.datasetHash);
  }, 600_000);

  it("an --input builder gets the recorded conversation as turn.history", async () => {
    const { report } = await evalReport("graph-input", "recorded", [
      "--graph",
      HISTORY_AGENT,
      "--input",
      HISTORY_INPUT,
    ]);
    expect(report.turns.find((t: { turn: number }) => t.turn === 1).answer).toContain(
      "assistant: via input: Your merchant refund",
    );
  }, 600_000);

  it("--traces refuses it (a recording is scored as recorded), exit 2 naming the setting", async () => {
    const r = await runCli([
      "eval",
      "--traces",
      path.join(dir, "none.jsonl"),
      "--kb",
      MINI_KB,
      "--cases",
      cases,
      "--config",
      '{"run":{"replay":"recorded"}}',
    ]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/replay/);
  });
});
