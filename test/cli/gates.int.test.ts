/**
 * Gates and baselines end to end (docs/gates-and-exit-codes.md): the real bin, a real local
 * Chroma started by the command, a copy of the mini KB. A baseline written with --kb COPY
 * lands under the copy (never kb/eval/baseline.json); the same configuration passes against
 * it with tolerance 0; a KB edit that pushes a gold card out of the top-1 exits 1 with the
 * flipped turns listed, and the JUnit file fails exactly the checks and turns that failed the gate.
 */
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromaPids, tempDir } from "../helpers/chroma.js";
import { ROOT, runCli } from "../helpers/cli.js";
import { copyKb, editFile } from "../helpers/fixtures.js";

let dir: string;
let kb: string;
const cleanups: (() => Promise<void>)[] = [];
const store = () => [
  "--kb",
  kb,
  "-k",
  "1",
  "--config",
  '{"retrieval":{"embedder":"builtin"}}',
  "--data-dir",
  path.join(dir, "chroma"),
];
const sha = async (file: string) =>
  createHash("sha256")
    .update(await readFile(file))
    .digest("hex");
const SHIPPED_BASELINE = path.join(ROOT, "kb", "eval", "baseline.json");

beforeAll(async () => {
  const t = await tempDir("gates-cli");
  dir = t.dir;
  cleanups.push(t.cleanup);
  const copy = await copyKb();
  kb = copy.dir;
  cleanups.push(copy.cleanup);
});
afterAll(async () => {
  expect(chromaPids(dir)).toEqual([]);
  for (const c of cleanups) await c();
});

describe("baselines and gates through the CLI", () => {
  it("--update-baseline with --kb COPY writes COPY/eval/baseline.json, never the shipped one", async () => {
    const before = await sha(SHIPPED_BASELINE);
    const r = await runCli(["eval", ...store(), "--update-baseline"]);
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toContain(`baseline written to ${path.join(kb, "eval", "baseline.json")}`);
    const baseline = JSON.parse(await readFile(path.join(kb, "eval", "baseline.json"), "utf8"));
    expect(baseline.storeKind).toBe("local");
    expect(baseline.k).toBe(1);
    expect(await sha(SHIPPED_BASELINE)).toBe(before);

    const floors = await runCli(["report", "--floors", "--kb", kb]);
    expect(floors.exitCode).toBe(0);
    expect(floors.stdout).toMatch(/^--gate min-hit=all=\d(\.\d+)?,golden=/m);
  }, 120_000);

  it("the same configuration passes against it with the default tolerance 0", async () => {
    // --gate max-drop=auto: drops at the default tolerance (a gate checks exactly the checks named: test/cli/flips-only.test.ts).
    const r = await runCli([
      "eval",
      ...store(),
      "--baseline",
      path.join(kb, "eval", "baseline.json"),
      "--gate",
      "max-drop=auto",
      "--gate",
      "max-flips=0",
    ]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain(
      "baseline tolerance: 0 (default 0: same dataset, KB, k, configuration and store kind (deterministic pipeline))",
    );
  }, 120_000);

  it("a KB edit that flips turns exits 1, lists them, and JUnit fails exactly what failed the gate", async () => {
    // card-freeze no longer talks about cards: the two turns whose only gold it is lose it at k=1.
    await editFile(path.join(kb, "cards", "en", "card-freeze.md"), (t) => {
      const front = t
        .slice(0, t.indexOf("\n---\n") + 5)
        .replace(/^title: .*$/m, "title: Branch opening hours")
        .replace(/^tags: .*$/m, "tags: [branches]");
      return `${front}## Opening hours\nOur branches open at nine and close at five on weekdays.\n\n## Parking\nVisitors may park behind the building.\n`;
    });
    const junit = path.join(dir, "junit.xml");
    const json = path.join(dir, "report.json");
    const r = await runCli([
      "eval",
      ...store(),
      "--baseline",
      path.join(kb, "eval", "baseline.json"),
      "--gate",
      "max-drop=auto",
      "--gate",
      "max-flips=0",
      "--out",
      `junit:${junit}`,
      "--out",
      `json:${json}`,
    ]);
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toMatch(
      /\[flips\] 2 turns went from hit 1 to 0 against the baseline \(at most 0 allowed\): en-freeze-001#0 \(en, golden\) gold=\[card-freeze\] top=\[refund-timelines\] now card-freeze: dense \d/,
    );
    expect(r.stdout).toContain("en-adv-001#0 (en, adversarial)");
    expect(r.stdout).toContain(
      "baseline tolerance: 0.02 (default 0.02: the baseline was made with another KB version)",
    );
    const report = JSON.parse(await readFile(json, "utf8"));
    const failedChecks = report.gate.checks.filter((c: { verdict: string }) => c.verdict !== "pass");
    expect(failedChecks.length).toBe(report.gate.failures.length);
    expect(report.gate.checks.find((c: { kind: string }) => c.kind === "flips")).toMatchObject({
      verdict: "fail",
      observed: 2,
      threshold: 0,
    });
    const xml = await readFile(junit, "utf8");
    const failing = [...xml.matchAll(/<testcase[^>]*name="([^"]*)"[^>]*>\s*<failure/g)].map((m) => m[1]);
    expect(failing.length).toBe(failedChecks.length + 2);
    expect(failing).toContain("en-freeze-001#0: how do I lock my card?");
    expect(failing).toContain("--gate max-flips=0: retrieval_hit_at_k");
  }, 120_000);
});
