/**
 * `retrace trace --history N` (issue 23): the contextualizer's window, as
 * `eval --history N`, on the shipped KB's en-freeze-001 turn 2 ("ok found it,
 * how do I turn it back on?"): with every earlier turn the rewrite rescues the
 * gold; with `--history 0` the raw message is the query and the oracle alone
 * finds it. The three queries are printed side by side with the gold's rank,
 * and the text agrees with `--json`. With `--graph`, `--history` is refused
 * (exit 2) with its true reason. In-process memory store, the corpus-fit LSA embedder.
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { TurnReport } from "../../src/eval/report/types.js";
import { ROOT, runCli } from "../helpers/cli.js";

const base = [
  "trace",
  "en-freeze-001",
  "--turn",
  "2",
  "--store",
  "memory",
  "--config",
  '{"retrieval":{"embedder":"lsa"}}',
];
const LABEL: Record<string, string> = { graph: "graph's query", raw: "raw message", standalone: "standalone (oracle)" };

async function traced(extra: string[]): Promise<{ text: string; turn: TurnReport }> {
  const [text, json] = await Promise.all([runCli([...base, ...extra]), runCli([...base, ...extra, "--json"])]);
  expect(text.exitCode, text.stderr).toBe(0);
  expect(json.exitCode, json.stderr).toBe(0);
  const turn = (JSON.parse(json.stdout) as { turns: { report: TurnReport }[] }).turns[0]!.report;
  return { text: text.stdout, turn };
}

/** The lines `  <label>  rank R  hit@5 H  "<query>"` of the text, by label. */
function queryLines(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  const flat = text.replace(/\n {3,}/g, " "); // the output wraps long lines with a deeper indent
  for (const [v, label] of Object.entries(LABEL)) {
    const m = new RegExp(`^ {2}${label.replace(/[()']/g, "\\$&")} +(rank \\S+) +(hit@5 \\d)`, "m").exec(flat);
    if (m !== null) out[v] = `${m[1]} ${m[2]}`;
  }
  return out;
}

describe("retrace trace with run.history", () => {
  it("moves a pronoun follow-up from `rewrite rescued it` to `rewrite lost it` with run.history 0, and prints the three queries with the gold's rank", async () => {
    const all = await traced([]);
    const none = await traced(["--config", '{"run":{"history":0}}']);
    // Every earlier turn: the query is rewritten from the conversation and hits.
    expect(all.turn.queries!.graph.query).not.toBe(all.turn.user);
    expect(all.turn.queries!.attribution).toBe("rewrite_rescued_it");
    expect(all.text).toContain("queries: rewrite rescued it");
    // No history: the raw message is the query, it misses, the oracle hits.
    expect(none.turn.queries!.graph.query).toBe(none.turn.user);
    expect(none.turn.queries!.attribution).toBe("rewrite_lost_it");
    expect(none.turn.queries!.graph.rank === null || none.turn.queries!.graph.rank > 5).toBe(true);
    expect(none.turn.queries!.standalone!.rank).toBeLessThanOrEqual(5);
    expect(none.text).toContain("queries: rewrite lost it");
    for (const t of [all, none]) {
      const q = t.turn.queries!;
      const expected = Object.fromEntries(
        (["graph", "raw", "standalone"] as const).map((v) => [
          v,
          `rank ${q[v]!.rank ?? "—"} hit@5 ${q[v]!.scores.retrieval_hit_at_k}`,
        ]),
      );
      expect(queryLines(t.text)).toEqual(expected);
    }
  }, 120_000);

  it("refuses --history with --graph (exit 2), saying it sets retrace's own contextualizer", async () => {
    const graph = path.join(ROOT, "test", "fixtures", "graphs", "fanout-agent.mjs");
    // On trace as on eval, the window is the run.history key of --config (trace --history is a retired spelling).
    for (const [args, named] of [
      [["trace", "en-freeze-001", "--config", '{"run":{"history":1}}'], "setting 'run.history' of --config"],
      [["eval", "--config", '{"run":{"history":1}}'], "setting 'run.history' of --config"],
    ] as const) {
      const r = await runCli([...args, "--graph", graph]);
      expect(r.exitCode).toBe(2);
      expect(r.stderr).toContain(
        `error: ${named} is not used with --graph (it sets how many earlier turns retrace's own contextualizer may use`,
      );
    }
  });
});
