/**
 * `retrace eval --graph … --counterfactual` and `retrace trace --graph …
 * --counterfactual` through the real bin (issue 23, docs/query-attribution.md),
 * on test/fixtures/graphs/condense-agent.mjs — a LangGraph.js graph whose
 * `condense` node rewrites follow-ups from the conversation before a custom
 * retriever searches the shipped KB's card sections — with
 * test/fixtures/graphs/condense-cases.jsonl. Its documents carry the card's
 * path, so ids go through `--id-map test/fixtures/graphs/path-id-map.mjs`.
 * The retriever appends every query it gets to CONDENSE_AGENT_LOG: the call
 * counts below are the retriever's own, not the report's.
 *
 * Expected, by hand from the fixture's scoring (title, tags and heading terms):
 * - cf-freeze-001#1 "and how do I undo that later?": the raw message finds
 *   only lost-or-stolen-card ("later" is in one of its headings); the oracle
 *   "How do I unfreeze my frozen card?" finds card-freeze first ("unfreeze" is
 *   in its title); the working rewrite carries "freeze card" from turn 0 → rescued;
 * - cf-refund-002#1 "ok, and if it never comes?": the raw message finds only
 *   fees ("Fees we never charge"); the oracle and the working rewrite carry
 *   "refund" → rescued;
 * - cf-fees-003#1 "is there a fee for paper statements?": the raw message
 *   already finds fees → rewrite not needed (working), ok (broken: the query is the raw message);
 * - cf-limits-004#0 "how much can I spend per day?": no term of account-limits → retriever lost it;
 * - cf-nomatch-005#0: no gold, nothing attributed, nothing called.
 * Calls: one per turn (8 turns); with --counterfactual, turn 0s reuse the
 * graph's list (their query is the raw message), each follow-up adds its raw
 * message and oracle when they differ from the graph's query: 3 × 2 = 6 with
 * the working rewrite, 3 × 1 (the oracle) with the broken one.
 */
import { readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Report, TurnReport } from "../../src/eval/report/types.js";
import { tempDir } from "../helpers/chroma.js";
import { ROOT, runCli } from "../helpers/cli.js";

const FIX = path.join("test", "fixtures", "graphs");
const BASE = [
  "--graph",
  path.join(FIX, "condense-agent.mjs"),
  "--cases",
  path.join(FIX, "condense-cases.jsonl"),
  "--id-map",
  path.join(FIX, "path-id-map.mjs"),
];
const BROKEN = ["--config", JSON.stringify({ run: { configurable: JSON.stringify({ condense: "drop-history" }) } })];
const TURNS = 8;

let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => {
  ({ dir, cleanup } = await tempDir("graph-counterfactual"));
});
afterAll(async () => cleanup());

/** Runs `eval` with the args and returns the JSON report and the retriever's queries. */
async function evalRun(name: string, args: string[]): Promise<{ report: Report; queries: string[]; stdout: string }> {
  const log = path.join(dir, `${name}.log`);
  await writeFile(log, "");
  const r = await runCli(["eval", ...BASE, ...args, "--json"], { env: { CONDENSE_AGENT_LOG: log } });
  expect(r.exitCode, r.stderr).toBe(0);
  const queries = (await readFile(log, "utf8"))
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => (JSON.parse(l) as { query: string }).query);
  await rm(log);
  return { report: JSON.parse(r.stdout) as Report, queries, stdout: r.stdout };
}

const key = (t: TurnReport) => `${t.caseId}#${t.turn}`;
const attributions = (r: Report) => Object.fromEntries(r.turns.map((t) => [key(t), t.queries?.attribution ?? null]));
const ownScores = (r: Report) =>
  r.turns.map((t) => ({ turn: key(t), results: t.results, retrievedIds: t.retrievedIds, captured: t.captured }));

describe("eval --graph --counterfactual on a graph with a condense step", () => {
  let working: Awaited<ReturnType<typeof evalRun>>;
  let workingOff: Awaited<ReturnType<typeof evalRun>>;
  let broken: Awaited<ReturnType<typeof evalRun>>;
  let brokenOff: Awaited<ReturnType<typeof evalRun>>;
  beforeAll(async () => {
    working = await evalRun("working", ["--counterfactual"]);
    workingOff = await evalRun("working-off", []);
    broken = await evalRun("broken", ["--counterfactual", ...BROKEN]);
    brokenOff = await evalRun("broken-off", [...BROKEN]);
  }, 240_000);

  it("the broken condense step: the follow-ups whose history it dropped are `rewrite lost it`", () => {
    expect(attributions(broken.report)).toEqual({
      "cf-freeze-001#0": "ok",
      "cf-freeze-001#1": "rewrite_lost_it",
      "cf-refund-002#0": "ok",
      "cf-refund-002#1": "rewrite_lost_it",
      "cf-fees-003#0": "ok",
      "cf-fees-003#1": "ok",
      "cf-limits-004#0": "retriever_lost_it",
      "cf-nomatch-005#0": null,
    });
    const qa = broken.report.queryAttribution!;
    expect(qa.enabled).toBe(true);
    expect(qa.counts).toEqual({
      ok: 4,
      rewrite_rescued_it: 0,
      rewrite_not_needed: 0,
      rewrite_lost_it: 2,
      retriever_lost_it: 1,
    });
    expect(qa.splits.position?.["2"]).toEqual({
      ok: 1,
      rewrite_rescued_it: 0,
      rewrite_not_needed: 0,
      rewrite_lost_it: 2,
      retriever_lost_it: 0,
    });
    // The graph's query misses, the raw message (the same query) misses, the oracle finds card-freeze first: ids mapped by --id-map.
    const q = broken.report.turns.find((t) => key(t) === "cf-freeze-001#1")!.queries!;
    expect([q.graph.rank, q.raw.rank, q.standalone?.rank]).toEqual([null, null, 1]);
    expect(q.standalone?.query).toBe("How do I unfreeze my frozen card?");
  });

  it("the working condense step: the follow-ups are rescued (or the rewrite was not needed), first turns ok", () => {
    expect(attributions(working.report)).toEqual({
      "cf-freeze-001#0": "ok",
      "cf-freeze-001#1": "rewrite_rescued_it",
      "cf-refund-002#0": "ok",
      "cf-refund-002#1": "rewrite_rescued_it",
      "cf-fees-003#0": "ok",
      "cf-fees-003#1": "rewrite_not_needed",
      "cf-limits-004#0": "retriever_lost_it",
      "cf-nomatch-005#0": null,
    });
    const q = working.report.turns.find((t) => key(t) === "cf-refund-002#1")!.queries!;
    expect(q.graph.query).toBe("when will my refund arrive? ok, and if it never comes?");
    expect([q.graph.rank, q.raw.rank, q.standalone?.rank]).toEqual([2, null, 2]);
  });

  it("costs the counted extra retriever calls, and nothing without the flag", () => {
    expect(workingOff.queries).toHaveLength(TURNS);
    expect(brokenOff.queries).toHaveLength(TURNS);
    expect(working.queries).toHaveLength(TURNS + 6);
    expect(broken.queries).toHaveLength(TURNS + 3);
    expect(working.report.queryAttribution?.retrieverCalls).toBe(6);
    expect(broken.report.queryAttribution?.retrieverCalls).toBe(3);
    // The extra queries are exactly the follow-ups' raw messages and oracles (broken: the oracles only).
    const extra = (all: string[], own: string[]) => {
      const rest = [...all];
      for (const q of own) rest.splice(rest.indexOf(q), 1);
      return rest.sort();
    };
    expect(extra(broken.queries, brokenOff.queries)).toEqual([
      "How do I unfreeze my frozen card?",
      "My refund never came; what should I do?",
      "What is the fee for paper statements?",
    ]);
    expect(extra(working.queries, workingOff.queries)).toEqual(
      [
        "How do I unfreeze my frozen card?",
        "My refund never came; what should I do?",
        "What is the fee for paper statements?",
        "and how do I undo that later?",
        "is there a fee for paper statements?",
        "ok, and if it never comes?",
      ].sort(),
    );
    for (const off of [workingOff, brokenOff]) {
      expect(off.report.queryAttribution).toMatchObject({ enabled: false, turns: 0 });
      expect(off.report.queryAttribution?.reason).toContain("--counterfactual");
      expect(
        off.report.turns.some(
          (t) => t.queries !== undefined || t.queriesOff !== undefined || t.counterfactualCalls !== undefined,
        ),
      ).toBe(false);
    }
  });

  it("never changes the turns' own scores", () => {
    expect(ownScores(working.report)).toEqual(ownScores(workingOff.report));
    expect(ownScores(broken.report)).toEqual(ownScores(brokenOff.report));
    expect(working.report.aggregates).toEqual(workingOff.report.aggregates);
    expect(broken.report.aggregates).toEqual(brokenOff.report.aggregates);
  });

  it("the text and markdown reports carry the counts and the calls; without the flag they say it was off", async () => {
    const md = path.join(dir, "r.md");
    const on = await runCli(["eval", ...BASE, "--counterfactual", ...BROKEN, "--out", md, "--verbose"]); // --verbose: the per-position table (the first screen has one line)
    expect(on.exitCode, on.stderr).toBe(0);
    expect(on.stdout).toMatch(/^turn #1 +3 +1 +0 +0 +2 +0$/m); // position "2": the cases' second turns, turn #1
    expect(on.stdout).toContain("counterfactual retriever calls: 3; gold-bearing turns not attributed: none");
    const markdown = await readFile(md, "utf8");
    expect(markdown).toContain("## Query attribution");
    expect(markdown).toContain("counterfactual retriever calls: 3");
    const off = await runCli(["eval", ...BASE, ...BROKEN]);
    expect(off.exitCode, off.stderr).toBe(0);
    // The first screen says it in its first words; --verbose gives the reason in full.
    expect(off.stdout).toContain("query attribution: off: not asked for (--verbose says why)");
    const offVerbose = await runCli(["eval", ...BASE, ...BROKEN, "--verbose"]);
    expect(offVerbose.stdout).toContain(
      "query attribution: off: not asked for: a --graph run attributes queries only with --counterfactual",
    );
  }, 120_000);
});

describe("trace --graph --counterfactual, and the refusals", () => {
  it("trace shows the three queries side by side with each one's rank of the gold", async () => {
    const r = await runCli(["trace", "cf-freeze-001", "--turn", "1", ...BASE, "--counterfactual", ...BROKEN]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toContain("queries: rewrite lost it");
    expect(r.stdout).toMatch(/standalone \(oracle\) +rank 1 +hit@5 1 +"How do I unfreeze my frozen card\?"/);
    expect(r.stdout).toMatch(/raw message +rank — +hit@5 0 +"and how do I undo that later\?"/);
    const plain = await runCli(["trace", "cf-freeze-001", "--turn", "1", ...BASE, ...BROKEN]);
    expect(plain.exitCode, plain.stderr).toBe(0);
    expect(plain.stdout).not.toContain("queries:");
  }, 120_000);

  it("--counterfactual with --repeat is refused before the graph loads (exit 2), and trace --counterfactual without --graph", async () => {
    const log = path.join(dir, "repeat.log");
    await writeFile(log, "");
    const r = await runCli(["eval", ...BASE, "--counterfactual", "--repeat", "2"], {
      env: { CONDENSE_AGENT_LOG: log },
    });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("Expected `--counterfactual` to be used without --repeat");
    expect(await readFile(log, "utf8")).toBe("");
    const t = await runCli(["trace", "cf-freeze-001", "--counterfactual"], { cwd: ROOT });
    expect(t.exitCode).toBe(2);
    expect(t.stderr).toContain("option '--counterfactual' is not used without --graph");
  }, 120_000);
});
