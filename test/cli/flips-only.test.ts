/**
 * `--max-flips N` alone checks flips only; `--baseline` or `--max-drop`
 * checks drops too, at the default tolerance or the one set
 * (docs/gates-and-exit-codes.md, "Drops"); a one-locale dataset is checked
 * once, overall, not again as its locale. Through the real bin, on a
 * user-style graph (test/fixtures/graphs/kb-agent.mjs) over a copy of the mini
 * KB whose cases are all `en`.
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

  it("--baseline FILE --max-flips 0: drops at the default tolerance too, each key once on a one-locale dataset", async () => {
    const r = await runCli(
      [
        "eval",
        "--graph",
        GRAPH,
        "--kb",
        kb,
        "--baseline",
        path.join(kb, "eval", "baseline.json"),
        "--gate",
        "max-flips=0",
        "--json",
      ],
      { env },
    );
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
