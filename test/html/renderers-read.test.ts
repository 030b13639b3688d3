/**
 * The HTML pages read their figures, they do not compute them (issue 55,
 * item 2), checked in Debian's Chromium: each page is given a report or a
 * comparison whose derived figure is planted (it differs from what the page
 * could work out from the other fields), and the page must show the planted
 * one.
 *
 * - The query attribution's "n" column is the report's (`turns`,
 *   `splitTurns`), not the sum of the attribution counts.
 * - A moved turn's "drop"/"gain" on the compare page is the comparison's
 *   `change`, not the larger of |Δ nDCG| and |Δ recall| picked by the page.
 * - The flipped turns' counts are the comparison's, not counted from the list.
 * - A missed gold card's "lost at" in the turn view is its turn's
 *   `goldLostAt`, not the stage the page could work out from the ranks.
 * - The Summary's missed turns and their count, the gold-bearing count and the
 *   tables not drawn are the report's `turnOutcomes` and `summaryRepeats`.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildComparison, runSideOf } from "../../src/eval/gate/compare.js";
import { renderHtmlComparison } from "../../src/eval/report/html/compare-page.js";
import { renderHtmlReport } from "../../src/eval/report/html/report-page.js";
import type { Report } from "../../src/eval/report/types.js";
import { BROWSERS, launchDriver, type BrowserDriver } from "../helpers/browser.js";
import { fixtureReport, ROWS } from "../eval/report-fixture.js";

const CHROMIUM = BROWSERS.find((b) => b.name === "chromium")!;
if (CHROMIUM.skipReason !== null) process.stderr.write(`${CHROMIUM.skipReason}\n`);

let dir: string;
let driver: BrowserDriver;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "retrace-renderers-read-"));
  if (CHROMIUM.skipReason === null) driver = await launchDriver(CHROMIUM);
}, 120_000);

afterAll(async () => {
  await driver?.close();
  await rm(dir, { recursive: true, force: true });
});

describe.skipIf(CHROMIUM.skipReason !== null)("the HTML pages print the report's and the comparison's figures", () => {
  it("query attribution: the n of 'all' and of each group are the report's turns and splitTurns", async () => {
    const base = await fixtureReport();
    const counts = { ok: 1, rewrite_rescued_it: 0, rewrite_not_needed: 0, rewrite_lost_it: 1, retriever_lost_it: 0 };
    const report: Report = {
      ...base,
      queryAttribution: {
        enabled: true,
        turns: 77, // planted: the counts add up to 2
        withStandalone: 0,
        counts,
        splits: { position: { "1": counts }, locale: { en: counts } },
        splitTurns: { position: { "1": 55 }, locale: { en: 33 } }, // planted: each group's counts add up to 2
        means: {},
      },
    };
    const file = path.join(dir, "report.html");
    await writeFile(file, renderHtmlReport(report, { name: "planted" }));
    const page = await driver.open(file);
    await page.click('button[data-tab="conversation"]');
    const n = await page.evalAll('table.attribution td[data-attr="n"]', (tds) =>
      tds.map((td) => {
        const tr = (td as unknown as { closest(s: string): { getAttribute(n: string): string | null } }).closest("tr");
        return [tr.getAttribute("data-split"), tr.getAttribute("data-group"), td.textContent];
      }),
    );
    expect(n).toEqual([
      ["all", "all", "77"],
      ["position", "1", "55"],
      ["locale", "en", "33"],
    ]);
    expect(page.events).toEqual([]);
    await page.close();
  });

  it("the turn view's 'lost at' is the turn's goldLostAt", async () => {
    // g2#1 (gold [c], top-3 [d, e, f]) missed c, in no list of its trace: the report says "not retrieved".
    const base = await fixtureReport();
    const i = base.turns.findIndex((t) => t.caseId === "g2" && t.turn === 1);
    expect(base.turns[i]!.goldLostAt).toEqual({ c: { at: "retrieval", text: "not retrieved (no branch listed it)" } });
    // Planted: fusion lost it, in words no rule writes; and g1#1 (which hit b) is planted as cut at k.
    const turns = base.turns.map((t, j) =>
      j === i
        ? { ...t, goldLostAt: { c: { at: "fused", text: "planted: lost at fusion" } } }
        : t.caseId === "g1" && t.turn === 1
          ? { ...t, goldLostAt: { b: { at: "final", text: "planted: cut at k" } } }
          : t,
    );
    const file = path.join(dir, "lost-at.html");
    await writeFile(file, renderHtmlReport({ ...base, turns }, { name: "planted" }));
    const page = await driver.open(file);
    const cut = async (turn: string) => {
      await page.click('button[data-tab="turns"]');
      await page.click(`table.turns tbody tr[data-turn="${turn}"]`);
      return page.evalAll("table.goldranks tbody tr td:last-child", (tds) =>
        tds.map((td) => [td.getAttribute("data-cut"), td.textContent]),
      );
    };
    expect(await cut("g2#1")).toEqual([["fused", "planted: lost at fusion"]]);
    expect(await cut("g1#1")).toEqual([["final", "planted: cut at k"]]);
    expect(page.events).toEqual([]);
    await page.close();
  });

  it("the missed turns, their count, the gold-bearing count and the summary's repeats are the report's", async () => {
    // The fixture: 5 gold-bearing turns, g2#1 the one missed, two kinds and two locales (nothing repeats the all column).
    const base = await fixtureReport();
    const report: Report = {
      ...base,
      // Planted: g1#0 and adv1#0 (both hit) listed, 9 of 42 counted, and a locale table said to repeat the all column.
      turnOutcomes: { goldBearing: 42, missed: 9, missedTurns: [0, 4] },
      summaryRepeats: [{ split: "locale", group: null, why: "planted: one locale" }],
    };
    const file = path.join(dir, "missed.html");
    await writeFile(file, renderHtmlReport(report, { name: "planted" }));
    const page = await driver.open(file);
    await page.click('button[data-tab="summary"]');
    expect(await page.text('[data-section="missed"] h2')).toBe("Missed turns (9 of 42 gold-bearing)");
    const rows = await page.evalAll('[data-section="missed"] tbody tr', (trs) =>
      trs.map((tr) => tr.getAttribute("data-turn")),
    );
    expect(rows).toEqual(["g1#0", "adv1#0"]);
    expect(await page.text("body")).toContain("(gold-bearing 42)");
    expect(await page.text('[data-field="summary-repeats"]')).toContain("planted: one locale");
    expect(page.events).toEqual([]);
    await page.close();
  });

  it("a moved turn's drop or gain is the comparison's `change`", async () => {
    // B moves g1#0 (gold [a,b]) from [c,a,d] to [a,b,c]: recall +0.5, nDCG +0.613, hit held: a gain.
    const a = await fixtureReport();
    const b = await fixtureReport(
      {},
      ROWS.map((r) => (r.caseId === "g1" && r.turn === 0 ? { ...r, retrievedIds: ["a", "b", "c"] } : r)),
    );
    const c = buildComparison(runSideOf("a.json", a), runSideOf("b.json", b));
    expect(c.moved.turns.map((m) => [m.id, m.change])).toEqual([["g1#0", "gain"]]);
    expect(c.moved.turns[0]!.largest).toBe(c.moved.turns[0]!.ndcg); // |+0.613| > |+0.5|
    // Planted: the comparison says "drop" (the page's own pick from the deltas would say "gain").
    const planted = { ...c, moved: { ...c.moved, turns: [{ ...c.moved.turns[0]!, change: "drop" as const }] } };
    const file = path.join(dir, "compare.html");
    await writeFile(file, renderHtmlComparison({ name: "A", report: a }, { name: "B", report: b }, planted));
    const page = await driver.open(file);
    await page.click('button[data-tab="flips"]');
    await page.click('table.shifts tbody tr[data-turn="g1#0"]');
    expect(await page.text('[data-panel="pair"] h2')).toMatch(/^g1#0 {2}drop \(recall \+0\.500, nDCG \+0\.613\)$/);
    expect(page.events).toEqual([]);
    await page.close();
  });

  it("the flipped turns' counts are the comparison's `flips.hitToMiss` and `flips.missToHit`", async () => {
    // B misses g1#0 (gold [a,b]) with [c,d,e]: one hit→miss flip, none the other way.
    const a = await fixtureReport();
    const b = await fixtureReport(
      {},
      ROWS.map((r) => (r.caseId === "g1" && r.turn === 0 ? { ...r, retrievedIds: ["c", "d", "e"] } : r)),
    );
    const c = buildComparison(runSideOf("a.json", a), runSideOf("b.json", b));
    expect([c.flips.hitToMiss, c.flips.missToHit]).toEqual([1, 0]);
    // Planted: counts the one listed turn cannot give.
    const planted = { ...c, flips: { ...c.flips, hitToMiss: 7, missToHit: 4 } };
    const file = path.join(dir, "compare-flips.html");
    await writeFile(file, renderHtmlComparison({ name: "A", report: a }, { name: "B", report: b }, planted));
    const page = await driver.open(file);
    await page.click('button[data-tab="flips"]');
    expect(await page.text('[data-panel="flips"]')).toContain("7 hit\u2192miss (listed first), 4 miss\u2192hit.");
    expect(page.events).toEqual([]);
    await page.close();
  });
});
