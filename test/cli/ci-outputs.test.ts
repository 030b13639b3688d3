/**
 * Issue 26 end to end with the real bin: `retrace compare` says what differs
 * and what flipped (text and JSON) with eval's held-out rule, and `eval
 * --graph` takes `--quarantine`, `--github` and `--pr-comment` as the
 * built-in graph does (test/cli/github-workflow.test.ts covers the built-in
 * path through the example workflow).
 */
import { lstat, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Report } from "../../src/eval/report/types.js";
import { ROOT, runCli } from "../helpers/cli.js";
import { MINI_KB } from "../helpers/fixtures.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "retrace-ci-outputs-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const hitOf = (t: Report["turns"][number]) => t.results.find((r) => r.key === "retrieval_hit_at_k")?.score;

describe("retrace compare of the default and --embedder builtin reports (shipped KB, --store memory)", () => {
  it("prints the embedder difference, the flipped turns (text and JSON) and refusal on eval's held-out turns", async () => {
    const [a, b] = [path.join(dir, "default.json"), path.join(dir, "builtin.json")];
    const runs = await Promise.all([
      runCli(["eval", "--store", "memory", "--out", `json:${a}`], { timeoutMs: 400_000 }),
      runCli(["eval", "--store", "memory", "--config", '{"retrieval":{"embedder":"builtin"}}', "--out", `json:${b}`], {
        timeoutMs: 400_000,
      }),
    ]);
    for (const r of runs) expect(r.exitCode, r.stderr).toBe(0);
    const [ra, rb] = await Promise.all([a, b].map(async (f) => JSON.parse(await readFile(f, "utf8")) as Report));
    // The flips, computed here from the two reports.
    const inB = new Map(rb!.turns.map((t) => [`${t.caseId}#${t.turn}`, t]));
    const lost = ra!.turns.filter((t) => hitOf(t) === 1 && hitOf(inB.get(`${t.caseId}#${t.turn}`)!) === 0);
    const gained = ra!.turns.filter((t) => hitOf(t) === 0 && hitOf(inB.get(`${t.caseId}#${t.turn}`)!) === 1);
    expect(lost.length + gained.length).toBeGreaterThan(0);

    const text = await runCli(["compare", a, b]);
    expect(text.exitCode, text.stderr).toBe(0);
    expect(text.stdout).toContain(`embedder: A ${ra!.run.embedder} → B ${rb!.run.embedder}`);
    expect(text.stdout).toContain(`hit@5 flips: ${lost.length} hit→miss, ${gained.length} miss→hit`);
    for (const t of [...lost, ...gained])
      expect(text.stdout).toMatch(new RegExp(`^ +${t.caseId}#${t.turn} +${t.locale}$`, "m")); // caseId#turn, as every key names a turn
    const refusalN = ra!.aggregates.refusal_correctness!.n; // eval's figure: held-out turns only
    expect(ra!.answerSide?.scope).toBe("holdout");
    expect(refusalN).toBeLessThan(ra!.turns.length);
    expect(text.stdout).toMatch(new RegExp(`^refusal_correctness \\(held-out\\) +${refusalN} `, "m"));

    const json = await runCli(["compare", a, b, "--json"]);
    const out = JSON.parse(json.stdout) as {
      differences: { path: string; name: string; a: unknown; b: unknown }[];
      flips: {
        hitToMiss: number;
        missToHit: number;
        turns: { caseId: string; turn: number; locale: string; direction: string }[];
      };
      comparisons: { key: string; n: number; turns: string }[];
    };
    expect(out.differences).toContainEqual(
      expect.objectContaining({ path: "run.embedder", name: "embedder", a: ra!.run.embedder, b: rb!.run.embedder }),
    );
    expect(out.flips.hitToMiss).toBe(lost.length);
    expect(out.flips.missToHit).toBe(gained.length);
    expect(out.flips.turns.map((f) => `${f.direction} ${f.caseId}#${f.turn} ${f.locale}`)).toEqual([
      ...lost.map((t) => `hit→miss ${t.caseId}#${t.turn} ${t.locale}`),
      ...gained.map((t) => `miss→hit ${t.caseId}#${t.turn} ${t.locale}`),
    ]);
    expect(out.comparisons.find((c) => c.key === "refusal_correctness")).toMatchObject({
      n: refusalN,
      turns: "holdout",
    });
    expect(out.comparisons.find((c) => c.key === "retrieval_hit_at_k")).toMatchObject({ turns: "all" });
  }, 600_000);
});

describe("eval --graph with --quarantine, --github and --pr-comment", () => {
  const FIXTURES = path.join(ROOT, "test", "fixtures", "graphs");
  const CASES = path.join(FIXTURES, "fanout-cases.jsonl");
  const base = [
    "eval",
    "--graph",
    path.join(FIXTURES, "fanout-agent.mjs"),
    "--kb",
    MINI_KB,
    "--cases",
    CASES,
    "-k",
    "3",
  ];
  // en-skipped-001#0 makes no retrieval (a miss); en-error-001#0 throws (a turn error).

  it("checks the comment and summary paths before the graph loads, and appends to a summary through its symlink", async () => {
    const same = path.join(dir, "same.md");
    const twice = await runCli([...base, "--out", same, "--out", `pr-comment:${same}`]);
    expect(twice.exitCode).toBe(2);
    expect(twice.stderr).toMatch(/--out pr-comment:.*--out writes .*same\.md too/s);
    expect(twice.stderr).not.toContain("case"); // refused before the sweep: no case ran
    await expect(readFile(same, "utf8")).rejects.toThrow(/ENOENT/);

    const folder = await runCli([...base, "--github"], {
      env: { GITHUB_ACTIONS: undefined, GITHUB_STEP_SUMMARY: dir },
    });
    expect(folder.exitCode).toBe(2);
    expect(folder.stderr).toContain("GITHUB_STEP_SUMMARY");
    expect(folder.stderr).toContain("is a directory");

    const real = path.join(dir, "summary-target.md");
    await writeFile(real, "earlier step\n");
    const link = path.join(dir, "summary-link.md");
    await symlink(real, link);
    const r = await runCli([...base, "--github"], {
      env: { GITHUB_ACTIONS: undefined, GITHUB_STEP_SUMMARY: link, GITHUB_WORKSPACE: ROOT },
    });
    expect(r.exitCode, r.stderr).toBe(1); // the fixture's erroring turn fails the default gate
    expect((await lstat(link)).isSymbolicLink()).toBe(true);
    expect(await readFile(real, "utf8")).toMatch(/^earlier step\n# retrace report/);
  }, 300_000);

  it("annotates the flip at its case's line, writes summary and comment; quarantining the two turns passes the gate", async () => {
    const baseline = path.join(dir, "graph-baseline.json");
    const made = await runCli([...base, "--update-baseline", "--baseline", baseline]);
    expect(made.exitCode, made.stderr).toBe(1); // the turn error fails the gate; the baseline is written anyway
    const b = JSON.parse(await readFile(baseline, "utf8")) as { perTurn: Record<string, Record<string, number>> };
    expect(b.perTurn["en-skipped-001#0"]!.retrieval_hit_at_k).toBe(0);
    b.perTurn["en-skipped-001#0"]!.retrieval_hit_at_k = 1; // a baseline in which that turn was a hit: now a flip
    await writeFile(baseline, JSON.stringify(b));
    const summary = path.join(dir, "graph-summary.md");
    const comment = path.join(dir, "graph-comment.md");
    const env = { GITHUB_ACTIONS: undefined, GITHUB_STEP_SUMMARY: summary, GITHUB_WORKSPACE: ROOT };
    const gated = [
      ...base,
      "--baseline",
      baseline,
      "--gate",
      "max-flips=0",
      "--github",
      "--out",
      `pr-comment:${comment}`,
    ];

    const r = await runCli(gated, { env });
    expect(r.exitCode, r.stderr).toBe(1);
    const line = (await readFile(CASES, "utf8")).split("\n").findIndex((l) => l.includes('"id": "en-skipped-001"')) + 1;
    expect(line).toBeGreaterThan(0);
    const annotations = r.stdout.split("\n").filter((l) => l.startsWith("::"));
    expect(annotations).toContainEqual(
      `::error file=test/fixtures/graphs/fanout-cases.jsonl,line=${line},title=retrace%3A hit@3 1 → 0 at en-skipped-001#0::${annotations.find((a) => a.includes("1 → 0"))!.split("::")[2]}`,
    );
    expect(
      annotations.some((a) =>
        a.startsWith("::error file=test/fixtures/graphs/fanout-cases.jsonl,title=retrace gate%3A turn_errors"),
      ),
    ).toBe(true);
    expect(await readFile(summary, "utf8")).toMatch(/^# retrace report/);
    const body = await readFile(comment, "utf8");
    expect(body).toContain("**Gate: ❌ FAIL**");
    expect(body).toContain("`en-skipped-001#0`");

    // --json: stdout stays one JSON document, the annotations go to stderr.
    const j = await runCli([...gated, "--json"], { env });
    expect(j.exitCode).toBe(1);
    expect(() => JSON.parse(j.stdout)).not.toThrow();
    expect(j.stderr).toContain(`::error file=test/fixtures/graphs/fanout-cases.jsonl,line=${line},`);

    // Quarantined: the flip and the turn error are out of the gate, the turns still in the report.
    const q = path.join(dir, "quarantine.txt");
    await writeFile(
      q,
      "# known\nen-skipped-001#0\tthe agent sometimes skips retrieval\nen-error-001#0 backend flaky\n",
    );
    const ok = await runCli([...gated, "--quarantine", q, "--json"], { env });
    expect(ok.exitCode, ok.stderr).toBe(0);
    const report = JSON.parse(ok.stdout) as Report;
    expect(report.gate?.quarantine).toMatchObject({ listed: 2, count: 2 });
    expect(report.gate?.flips).toEqual([]);
    expect(report.turns.some((t) => t.caseId === "en-skipped-001")).toBe(true);
    const table = await runCli([...base, "--baseline", baseline, "--gate", "max-flips=0", "--quarantine", q], { env });
    expect(table.stdout).toContain(`quarantined: 2 turns left out of the gate, from ${q}`);

    // A quarantine entry naming no case: exit 2 with file and line, before the graph runs.
    await writeFile(q, "en-skipped-001#0 ok\nnope-001#0 typo\n");
    const bad = await runCli([...base, "--quarantine", q], { env });
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain(`${q}:2: field \`caseId\` case "nope-001" is not in the cases file`);
  }, 300_000);
});
