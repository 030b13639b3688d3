/**
 * Renderers compute nothing (issue 55, item 2): the pull-request comment's
 * stage-funnel change is the comparison's (`funnelChange`, built once by
 * buildComparison), and no renderer (src/eval/report/render/, the HTML pages
 * and their browser script) imports the modules that compute statistics or
 * metrics: they format what the report and the comparison carry.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { buildComparison, runSideOf } from "../../src/eval/gate/compare.js";
import { renderMarkdown, renderTable } from "../../src/eval/report/render.js";
import { renderComparisonText } from "../../src/eval/report/render/compare-text.js";
import { renderJUnit } from "../../src/eval/report/render/junit.js";
import { renderPrComment } from "../../src/eval/report/render/pr-comment.js";
import { queryAttributionOf } from "../../src/eval/report/query-attribution.js";
import type { FunnelStage, Report, TurnReport } from "../../src/eval/report/types.js";
import { ROOT } from "../helpers/cli.js";
import { fixtureReport } from "./report-fixture.js";

const stage = (id: string, present: number, n: number): FunnelStage => ({
  stage: id,
  label: id,
  n,
  present,
  nCases: n,
  share: present / n,
});
const withFunnel = (r: Report, stages: FunnelStage[]): Report => ({ ...r, funnel: { stages, splits: {} } });

describe("the stage funnel's change is computed once, in the comparison", () => {
  it("buildComparison carries each report's counts and B − A in turns; the PR comment prints them", async () => {
    const base = await fixtureReport();
    // A: dense 3/4, fused 3/4, final 2/4; B: dense 4/4, fused 2/4, final 2/4, reranked 1/4 (only B).
    const a = withFunnel(base, [stage("dense", 3, 4), stage("fused", 3, 4), stage("final", 2, 4)]);
    const b = withFunnel(base, [
      stage("dense", 4, 4),
      stage("fused", 2, 4),
      stage("reranked", 1, 4),
      stage("final", 2, 4),
    ]);
    const c = buildComparison(runSideOf("a.json", a), runSideOf("b.json", b));
    expect(c.funnelChange!.map((r) => [r.stage, r.turns])).toEqual([
      ["dense", 1], // 4 − 3
      ["fused", -1], // 2 − 3
      ["final", 0],
      ["reranked", null], // only B measured it: after A's stages
    ]);
    expect(c.funnelChange![0]!.a).toEqual({ present: 3, n: 4, share: 0.75 });
    const comment = renderPrComment(b, { comparison: c });
    expect(comment).toContain("| dense | 3 / 4 (75.0%) | 4 / 4 (100.0%) | +1 |");
    expect(comment).toContain("| fused | 3 / 4 (75.0%) | 2 / 4 (50.0%) | −1 |");
    expect(comment).toContain("| reranked | — | 1 / 4 (25.0%) | — |");
  });

  it("the PR comment formats the comparison's numbers and subtracts nothing itself", async () => {
    const base = await fixtureReport();
    const a = withFunnel(base, [stage("final", 2, 4)]);
    const b = withFunnel(base, [stage("final", 2, 4)]);
    const c = buildComparison(runSideOf("a.json", a), runSideOf("b.json", b));
    // A planted change (the counts say 0): the comment shows the comparison's figure.
    const planted = { ...c, funnelChange: [{ ...c.funnelChange![0]!, turns: 7 }] };
    expect(renderPrComment(b, { comparison: planted })).toContain("| final | 2 / 4 (50.0%) | 2 / 4 (50.0%) | +7 |");
  });

  it("a reference without a funnel: no change rows, the comment says a reference report is needed", async () => {
    const { funnel: _funnel, ...base } = await fixtureReport();
    const b = withFunnel(base, [stage("final", 2, 4)]);
    const c = buildComparison(runSideOf("a.json", base), runSideOf("b.json", b));
    expect(c.funnelChange).toBeUndefined();
    expect(renderPrComment(b, { comparison: c })).toContain("No reference report: the funnel's change needs one");
  });
});

describe("flip counts are the comparison's", () => {
  it("the terminal text and the PR comment print flips.hitToMiss / missToHit (planted ones differ from the list)", async () => {
    const r = await fixtureReport();
    const c = buildComparison(runSideOf("a.json", r), runSideOf("b.json", r));
    const planted = { ...c, flips: { ...c.flips, hitToMiss: 9, missToHit: 4 } }; // the list is empty
    expect(renderComparisonText(planted)).toContain("hit@3 flips: 9 hit→miss, 4 miss→hit");
    expect(renderPrComment(r, { comparison: planted })).toContain("flips: 9 hit→miss, 4 miss→hit");
  });
});

/** A gold-bearing turn attributed `attribution`, at turn position `turn` of case `caseId`. */
function attributed(base: TurnReport, caseId: string, turn: number, attribution: string): TurnReport {
  const o = { query: "q", rank: 1, scores: { retrieval_hit_at_k: 1 } };
  return { ...base, caseId, turn, gold: ["a"], queries: { attribution, graph: o, raw: o } } as TurnReport;
}

describe("query attribution: each group's total is the report's, the renderings add nothing up", () => {
  it("queryAttributionOf writes each split group's turns (splitTurns) beside its counts", async () => {
    const base = (await fixtureReport()).turns[0]!;
    // Case c1: #0 ok, #1 rewrite lost it; case c2: #0 retriever lost it. Position 1 (#0): 2 turns, position 2 (#1): 1.
    const turns = [
      attributed(base, "c1", 0, "ok"),
      attributed(base, "c1", 1, "rewrite_lost_it"),
      attributed(base, "c2", 0, "retriever_lost_it"),
    ];
    const qa = queryAttributionOf(turns, { enabled: true, samples: 50 });
    expect(qa.turns).toBe(3);
    expect(qa.splitTurns!.position).toEqual({ "1": 2, "2": 1 });
    expect(qa.splits.position!["1"]).toMatchObject({ ok: 1, retriever_lost_it: 1 });
  });

  it("the terminal table, its first screen and the markdown print the report's totals (planted ones differ from the counts' sum)", async () => {
    const base = await fixtureReport();
    const counts = { ok: 1, rewrite_rescued_it: 0, rewrite_not_needed: 0, rewrite_lost_it: 1, retriever_lost_it: 0 };
    const report: Report = {
      ...base,
      queryAttribution: {
        enabled: true,
        turns: 77, // planted: the counts add up to 2
        withStandalone: 0,
        counts,
        splits: { position: { "1": counts } },
        splitTurns: { position: { "1": 55 } }, // planted: the group's counts add up to 2
        means: {},
      },
    };
    const verbose = renderTable(report, { color: false, verbose: true });
    const rows = verbose.split("\n");
    const head = rows.findIndex((l) => l.startsWith("query attribution (gold-bearing turns"));
    expect(head).toBeGreaterThanOrEqual(0);
    const table = rows.slice(head + 1, head + 5).map((l) => l.trim().split(/ {2,}/));
    expect(table.find((r) => r[0] === "all")?.[1]).toBe("77");
    expect(table.find((r) => r[0] === "turn #0")?.[1]).toBe("55");
    expect(renderTable(report, { color: false, compact: true })).toContain("query attribution (77 gold-bearing turns)");
    const md = renderMarkdown(report);
    expect(md).toMatch(/\| all \| 77 \|/);
    expect(md).toMatch(/\| turn #0 \| 55 \|/);
  });
});

describe("gold-bearing and missed turns are the report's turnOutcomes", () => {
  it("the fixture's: 5 gold-bearing turns, one missed (g2#1, hit 0), listed by index", async () => {
    const r = await fixtureReport();
    expect(r.turnOutcomes).toEqual({ goldBearing: 5, missed: 1, missedTurns: [3] });
    expect(r.turns[3]!.caseId + "#" + r.turns[3]!.turn).toBe("g2#1");
  });

  it("the terminal table, its first screen, the markdown and JUnit print planted ones (the hit scores say g2#1 only)", async () => {
    const base = await fixtureReport();
    // Planted: g1#0 (a hit) and adv1#0 (a hit) listed as missed, 9 missed of 42 gold-bearing.
    const report: Report = { ...base, turnOutcomes: { goldBearing: 42, missed: 9, missedTurns: [0, 4] } };
    const verbose = renderTable(report, { color: false, verbose: true });
    expect(verbose).toContain("gold-bearing: 42");
    expect(verbose).toMatch(/missed turns \(no gold card in the top-\d+\): 9\n {2}g1#0 .*\n(?: {4}.*\n)+ {2}adv1#0 /);
    expect(verbose).not.toMatch(/^ {2}g2#1 /m);
    expect(renderTable(report, { color: false, compact: true })).toMatch(
      /missed turns \(no gold card in the top-\d+\): 9\n/,
    );
    const md = renderMarkdown(report);
    expect(md).toContain("gold-bearing 42");
    expect(md).toMatch(/9 gold-bearing turns with no gold card/);
    expect(md).toMatch(/\| `g1#0` \|.*\n\| `adv1#0` \|/);
    expect(md).not.toContain("`g2#1`");
    expect(renderJUnit(report)).toContain('<property name="missedTurns" value="9"/>');
  });
});

/**
 * Modules that compute (statistics, metrics, comparisons, aggregates, the
 * report's derived sections: recall curves, attribution counts, verdict
 * wording, what a read fills in): a renderer imports (or re-exports) none of them.
 */
const COMPUTING = [
  /^src\/eval\/stats\//,
  /^src\/eval\/measures\/(ranked|chance)\.ts$/,
  /^src\/eval\/gate\//,
  /^src\/eval\/report\/(aggregate|funnel-stats|recall-curves|query-attribution|verdict|derived-on-read|lost-at|turn-outcomes)\.ts$/,
  // The "lost at" rule (lostAt, capturedChains, pipelineChain): a turn's `goldLostAt` carries its result.
  /^src\/eval\/report\/attribution\.ts$/,
];
/** Names a renderer may take from a computing module: a key's spelling and a constant of the wording, no computation. */
const ALLOWED_NAMES: Readonly<Record<string, readonly string[]>> = {
  "src/eval/stats/bootstrap.ts": ["turnKey", "SIGNIFICANCE_LEVEL"],
  "src/eval/report/funnel-stats.ts": ["positionLabel"],
  "src/eval/report/verdict.ts": ["fmtP"],
  "src/eval/report/attribution.ts": ["ordinal", "CUT_AT_K", "NOT_RETRIEVED"],
  "src/eval/report/query-attribution.ts": [
    "ATTRIBUTIONS",
    "ATTRIBUTION_LABELS",
    "QUERY_VARIANTS",
    "QUERY_VARIANT_LABELS",
    "QUERY_SIDE_BY_SIDE",
    "UNATTRIBUTED_LABELS",
    "UNATTRIBUTED_REASONS",
  ],
};
/** The metric functions re-exported by the registry (src/eval/measures/metrics.ts): not for renderers either. */
const METRIC_FUNCTIONS =
  /^(hitAtK|recallAtK|ndcgAtK|precisionAtK|reciprocalRankAtK|judgedAtK|unjudgedAtK|unjudgedShareAtK|bpref|chanceLevel|turnChanceLevel)$/;

/** The violations of one renderer's source: `file: import {names} from module`. */
function violations(file: string, text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(
    /(?:import|export)\s+(type\s+)?(?:\{([^}]*)\}|[\w*\s]+as\s+\w+|\w+)\s+from\s+"([^"]+)"/g,
  )) {
    const typeOnly = m[1] !== undefined;
    const names = (m[2] ?? "*")
      .split(",")
      .map((s) => s.trim())
      .filter((s) => s !== "" && !s.startsWith("type "))
      .map((s) => s.split(/\s+as\s+/)[0]!);
    const spec = m[3]!;
    if (!spec.startsWith(".")) continue;
    const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), spec)).replace(/\.js$/, ".ts");
    if (typeOnly || names.length === 0) continue;
    if (target === "src/eval/measures/metrics.ts") {
      for (const n of names) if (METRIC_FUNCTIONS.test(n)) out.push(`${file}: ${n} from ${target}`);
      continue;
    }
    if (!COMPUTING.some((re) => re.test(target))) continue;
    const allowed = ALLOWED_NAMES[target] ?? [];
    for (const n of names) if (!allowed.includes(n)) out.push(`${file}: ${n} from ${target}`);
  }
  return out;
}

/** A renderer that adds up a list (`.reduce(`) computes a total the report should carry (the attribution counts' sum did). */
function sums(file: string, text: string): string[] {
  return /\.reduce\(/.test(text) ? [`${file}: adds up a list (.reduce) at render`] : [];
}

/**
 * The report's `turnOutcomes` and `summaryRepeats` (src/eval/report/turn-outcomes.ts) are its figures and verdicts: a
 * renderer that counts the gold-bearing turns, picks the missed turns by the hit rule, or decides by deep equality
 * which summary columns repeat the all column works out what the report carries.
 */
const RULES: readonly [RegExp, string][] = [
  [/\.filter\(\(?\w+\)? => \w+\.gold\.length/, "counts the gold-bearing turns (turnOutcomes.goldBearing)"],
  [/outcome\(\w+\) === "miss"|\bscore\([^)]*HIT\w*\) === 0/, "picks the missed turns by the hit rule (turnOutcomes)"],
  [/isDeepStrictEqual/, "decides by deep equality which summary parts repeat the all column (summaryRepeats)"],
];
function rules(file: string, text: string): string[] {
  return RULES.filter(([re]) => re.test(text)).map(([, what]) => `${file}: ${what} at render`);
}

/** The renderers: the terminal, markdown, JUnit, PR comment and compare text, the HTML pages and their browser script. */
function rendererFiles(): string[] {
  const files: string[] = ["src/eval/report/render.ts"];
  const walk = (dir: string) => {
    for (const e of readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
      const rel = `${dir}/${e.name}`;
      if (e.isDirectory()) walk(rel);
      else if (e.name.endsWith(".ts") && !e.name.includes(".generated.")) files.push(rel);
    }
  };
  walk("src/eval/report/render");
  walk("src/eval/report/html");
  return files;
}

describe("no renderer imports a computing module", () => {
  it("finds the renderers", () => {
    const files = rendererFiles();
    expect(files).toContain("src/eval/report/render/pr-comment.ts");
    expect(files).toContain("src/eval/report/html/compare-page.ts");
    expect(files).toContain("src/eval/report/html/browser/funnel.ts");
  });

  it("fires on a renderer that would run a bootstrap or a metric (the check is live)", () => {
    const f = "src/eval/report/render/pr-comment.ts";
    expect(violations(f, `import { pairedBootstrap, turnKey } from "../../stats/bootstrap.js";`)).toEqual([
      `${f}: pairedBootstrap from src/eval/stats/bootstrap.ts`,
    ]);
    expect(violations(f, `import { buildComparison } from "../../gate/compare.js";`)).toHaveLength(1);
    expect(violations(f, `import {\n  HIT_KEY,\n  ndcgAtK,\n} from "../../measures/metrics.js";`)).toEqual([
      `${f}: ndcgAtK from src/eval/measures/metrics.ts`,
    ]);
    expect(violations(f, `import type { Comparison } from "../../gate/compare.js";`)).toEqual([]);
    // The report's derived sections are computed at build (or filled on read), never by a renderer.
    const h = "src/eval/report/html/funnel.ts";
    expect(violations(h, `import { recallCurvesOf } from "../recall-curves.js";`)).toEqual([
      `${h}: recallCurvesOf from src/eval/report/recall-curves.ts`,
    ]);
    expect(violations(h, `export { MAX_CURVE_K, recallCurves } from "../recall-curves.js";`)).toHaveLength(2);
    const s = "src/eval/report/render/shared.ts";
    expect(violations(s, `import { wordDeltaVerdict } from "../verdict.js";`)).toEqual([
      `${s}: wordDeltaVerdict from src/eval/report/verdict.ts`,
    ]);
    expect(violations(s, `export { fmtP } from "../verdict.js";`)).toEqual([]);
    expect(violations(s, `import { attributionCounts, ATTRIBUTIONS } from "../query-attribution.js";`)).toEqual([
      `${s}: attributionCounts from src/eval/report/query-attribution.ts`,
    ]);
    // Where a missed gold card was lost is the turn's `goldLostAt`: no renderer applies the rule.
    expect(
      violations(h, `import { capturedChains, lostAt, lostAtText, pipelineChain } from "../attribution.js";`),
    ).toEqual([
      `${h}: capturedChains from src/eval/report/attribution.ts`,
      `${h}: lostAt from src/eval/report/attribution.ts`,
      `${h}: lostAtText from src/eval/report/attribution.ts`,
      `${h}: pipelineChain from src/eval/report/attribution.ts`,
    ]);
    expect(violations(h, `import { cutStage, goldLostAtOf } from "../lost-at.js";`)).toHaveLength(2);
    expect(violations(h, `import { ordinal, type LostAt } from "../attribution.js";`)).toEqual([]);
    expect(violations(h, `import { summaryRepeatsOf, turnOutcomesOf } from "../turn-outcomes.js";`)).toHaveLength(2);
    // The base's render-time rules (html/report-page.ts, render/shared.ts, html/browser/summary-parts.ts).
    const p = "src/eval/report/html/report-page.ts";
    expect(rules(p, "goldBearingCount: report.turns.filter((t) => t.gold.length > 0).length,")).toEqual([
      `${p}: counts the gold-bearing turns (turnOutcomes.goldBearing) at render`,
    ]);
    expect(rules(s, "return report.turns.filter((t) => t.gold.length > 0).length;")).toHaveLength(1);
    expect(rules(s, "return report.turns.filter((t) => score(t, HIT_KEY) === 0);")).toEqual([
      `${s}: picks the missed turns by the hit rule (turnOutcomes) at render`,
    ]);
    expect(rules("b.ts", `    if (outcome(t) === "miss") missed.push(i);`)).toHaveLength(1);
    expect(rules(p, `import { isDeepStrictEqual } from "node:util";`)).toHaveLength(1);
    expect(rules(p, "const n = report.turnOutcomes?.goldBearing ?? 0;")).toEqual([]);
    expect(sums(s, "const n = Object.values(qa.counts).reduce((s, x) => s + x, 0);")).toEqual([
      `${s}: adds up a list (.reduce) at render`,
    ]);
  });

  it("every renderer formats only", () => {
    const found = rendererFiles().flatMap((f) => {
      const text = readFileSync(path.join(ROOT, f), "utf8");
      return [...violations(f, text), ...sums(f, text), ...rules(f, text)];
    });
    expect(found).toEqual([]);
  });
});
