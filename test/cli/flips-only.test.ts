/**
 * A gate checks exactly the checks named (docs/gates-and-exit-codes.md, "A
 * gate means one thing"): `--gate max-flips=N` alone checks flips only,
 * `--gate max-drop=X` (or `auto`, the default tolerance) checks drops, and
 * naming the baseline file with `--baseline` adds or removes no check — on a
 * regression (the graph's ranks fall, no hit is lost) the default baseline and
 * the same file named give the same checks and the same exit code; before,
 * the named one added drop checks (exit 1 against exit 0). `--baseline` with
 * no baseline check is exit 2. A one-locale dataset is checked once, overall,
 * not again as its locale. Through the real bin, on a user-style graph
 * (test/fixtures/graphs/kb-agent.mjs) over a copy of the mini KB whose cases
 * are all `en`.
 */
import { cp, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Report } from "../../src/eval/report/types.js";
import { tempDir } from "../helpers/chroma.js";
import { ROOT, runCli } from "../helpers/cli.js";
import { MINI_KB } from "../helpers/fixtures.js";

const GRAPH = path.join(ROOT, "test", "fixtures", "graphs", "kb-agent.mjs");
let dir: string;
let cleanup: () => Promise<void>;
let kb: string;
const env = { KB_AGENT_KB: MINI_KB };
const checksOf = (stdout: string) =>
  (JSON.parse(stdout) as Report).gate!.checks!.map(
    (c) => `${c.kind} ${c.key}${c.scope === "all" ? "" : `[${c.scope}]`}`,
  );

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir("flips-only"));
  kb = path.join(dir, "kb");
  await cp(MINI_KB, kb, { recursive: true });
  const cases = (await readFile(path.join(kb, "eval", "cases.jsonl"), "utf8"))
    .split("\n")
    .filter((l) => l.includes('"locale": "en"'));
  expect(cases.length).toBeGreaterThan(1);
  await writeFile(path.join(kb, "eval", "cases.jsonl"), `${cases.join("\n")}\n`);
  const w = await runCli(["eval", "--graph", GRAPH, "--kb", kb, "--update-baseline"], { env });
  expect(w.exitCode, w.stderr).toBe(0);
}, 60_000);
afterAll(async () => cleanup());

describe("what a baseline option checks", () => {
  it("--max-flips 0 alone: the flip check (and the graph's own turn-error check), no drop check", async () => {
    const r = await runCli(["eval", "--graph", GRAPH, "--kb", kb, "--gate", "max-flips=0", "--json"], { env });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(checksOf(r.stdout)).toEqual(["flips retrieval_hit_at_k", "turn_errors turn_errors"]);
    expect(r.stderr).not.toContain("baseline tolerance");
  });

  it("--baseline FILE alone names no check: exit 2 before the run", async () => {
    const r = await runCli(
      ["eval", "--graph", GRAPH, "--kb", kb, "--baseline", path.join(kb, "eval", "baseline.json")],
      { env },
    );
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("Expected `--baseline` to be used with a baseline check");
    expect(r.stdout).toBe("");
  });

  it("--gate max-drop=auto: drops at the default tolerance, each key once on a one-locale dataset", async () => {
    const r = await runCli(["eval", "--graph", GRAPH, "--kb", kb, "--gate", "max-drop=auto", "--json"], { env });
    expect(r.exitCode, r.stderr).toBe(0);
    const checks = checksOf(r.stdout);
    expect(checks.filter((c) => c.startsWith("drop "))).toEqual([
      "drop retrieval_hit_at_k",
      "drop retrieval_recall_at_k",
      "drop retrieval_ndcg_at_k",
      "drop retrieval_mrr_at_k",
    ]);
    expect(checks.some((c) => c.includes("[en]"))).toBe(false);
    expect((JSON.parse(r.stdout) as Report).gate!.tolerance).toMatchObject({ maxDrop: 0.02 });
  });

  it("--max-drop 0.05 alone: drops at 0.05, no flip check", async () => {
    const r = await runCli(["eval", "--graph", GRAPH, "--kb", kb, "--gate", "max-drop=0.05", "--json"], { env });
    expect(r.exitCode, r.stderr).toBe(0);
    const checks = checksOf(r.stdout);
    expect(checks).not.toContain("flips retrieval_hit_at_k");
    expect(checks).toContain("drop retrieval_hit_at_k");
    expect((JSON.parse(r.stdout) as Report).gate!.tolerance).toMatchObject({
      maxDrop: 0.05,
      source: "set with --gate max-drop",
    });
  });
});

describe("one regression, the default baseline and the same file named", () => {
  /** The graph reads a copy of the KB in which a card of another locale holds every word of the questions: it ranks first everywhere, the gold cards stay retrieved one rank lower. */
  let regressed: Record<string, string>;
  beforeAll(async () => {
    const graphKb = path.join(dir, "graph-kb");
    await cp(MINI_KB, graphKb, { recursive: true });
    const questions = (await readFile(path.join(kb, "eval", "cases.jsonl"), "utf8"))
      .split("\n")
      .filter(Boolean)
      .flatMap((l) => (JSON.parse(l) as { turns: { user: string }[] }).turns.map((t) => t.user));
    const card = path.join(graphKb, "cards", "pt-BR", "pt-chaves-pix.md");
    await writeFile(card, `${await readFile(card, "utf8")}\n${questions.join(" ")}\n`);
    regressed = { KB_AGENT_KB: graphKb };
  });

  const run = (extra: string[]) =>
    runCli(["eval", "--graph", GRAPH, "--kb", kb, ...extra, "--json"], { env: regressed });
  const named = ["--baseline", () => path.join(kb, "eval", "baseline.json")] as const;

  it.each([
    [["--gate", "max-flips=0"], 0],
    [["--gate", "max-drop=auto", "--gate", "max-flips=0"], 1],
  ] as const)("%j: the same checks and exit code %i either way", async (gate, code) => {
    const byDefault = await run([...gate]);
    const byName = await run([named[0], named[1](), ...gate]);
    expect(byDefault.exitCode, byDefault.stderr).toBe(code);
    expect(byName.exitCode, byName.stderr).toBe(code);
    expect(checksOf(byName.stdout)).toEqual(checksOf(byDefault.stdout));
    const report = JSON.parse(byDefault.stdout) as Report;
    // A regression: no hit lost (no flip), the ranks fell beyond the default tolerance.
    expect(report.gate!.checks!.find((c) => c.kind === "flips")).toMatchObject({ verdict: "pass", observed: 0 });
    if (code === 1)
      expect(report.gate!.failures.map((f) => f.key)).toEqual(
        expect.arrayContaining(["retrieval_ndcg_at_k", "retrieval_mrr_at_k"]),
      );
    else expect(checksOf(byName.stdout).some((c) => c.startsWith("drop "))).toBe(false);
  });
});
