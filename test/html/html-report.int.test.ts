/**
 * The HTML report and compare page in a real browser (Debian's Chromium via
 * playwright-core): two store-backed sweeps run by the real bin on a copy of
 * the shipped KB (es-419 cases only, plus one hostile card and case), each
 * page opened from disk, what it shows checked against the report JSON, and
 * screenshots written to the test's temp dir.
 */
import { existsSync } from "node:fs";
import { cp, readFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Report, TurnReport } from "../../src/eval/types.js";
import { browserSkipReason, launchBrowser } from "../helpers/browser.js";
import { chromaPids, tempDir } from "../helpers/chroma.js";
import { runCli } from "../helpers/cli.js";
import { SHIPPED_KB } from "../helpers/fixtures.js";

const skipReason = browserSkipReason();
if (skipReason !== null) process.stderr.write(`${skipReason}\n`);

const HOSTILE_CASE = "es-hostil-001";
// Every payload sets window.__pwned (or opens a dialog) if it ever runs.
const HOSTILE_USER = `<script>window.__pwned='case'</script> ¿cómo congelo la tarjeta hostil? "><img src=x onerror="window.__pwned='img'"> </script><script>alert(1)</script>`;
const HOSTILE_CARD = [
  "---",
  "id: es-tarjeta-hostil",
  "locale: es-419",
  `title: 'Tarjeta hostil </script><script>window.__pwned = "title"</script>'`,
  "---",
  "## Congelar la tarjeta hostil",
  `Para congelar la tarjeta hostil abre la app "><img src=x onerror="window.__pwned='card'"> y toca Congelar. </script><script>window.__pwned='card2'</script>`,
  "",
].join("\n");

let dir: string;
let cleanup: () => Promise<void>;
let browser: Browser | undefined;
let reportA: Report;
let reportB: Report;
const hit = (t: TurnReport) => t.results.find((r) => r.key === "retrieval_hit_at_k")?.score;

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir("html"));
  if (skipReason !== null) return;
  const kb = path.join(dir, "kb");
  await cp(SHIPPED_KB, kb, { recursive: true });
  await writeFile(path.join(kb, "cards", "es-419", "es-tarjeta-hostil.md"), HOSTILE_CARD);
  const casesFile = path.join(kb, "eval", "cases.jsonl");
  const cases = await readFile(casesFile, "utf8");
  const hostileCase = { id: HOSTILE_CASE, locale: "es-419", kind: "golden", turns: [{ user: HOSTILE_USER, must_cite_one_of: ["es-tarjeta-hostil"], expect: "answer" }] };
  await writeFile(casesFile, `${cases.trimEnd()}\n${JSON.stringify(hostileCase)}\n`);
  // Every case is in one part of the committed split (docs/holdout.md): the new one is held out.
  const splitFile = path.join(kb, "eval", "split.json");
  const split = JSON.parse(await readFile(splitFile, "utf8")) as { holdout: string[] };
  split.holdout.push(HOSTILE_CASE);
  await writeFile(splitFile, JSON.stringify(split));

  const common = ["eval", "--kb", kb, "--locale", "es-419", "--embedder", "builtin", "--data-dir", path.join(dir, "chroma")];
  const a = await runCli([...common, "--report-json", path.join(dir, "a.json"), "--html", path.join(dir, "a.html")], { env: { CHROMA_URL: "" } });
  expect(a.stderr).not.toMatch(/unexpected error/);
  expect(a.exitCode).toBe(0);
  const b = await runCli([...common, "--mode", "bm25", "--report-json", path.join(dir, "b.json")], { env: { CHROMA_URL: "" } });
  expect(b.exitCode).toBe(0);
  const c = await runCli(["compare", path.join(dir, "a.json"), path.join(dir, "b.json"), "--html", path.join(dir, "diff.html"), "--json"]);
  expect(c.exitCode).toBe(0);
  await writeFile(path.join(dir, "compare.json"), c.stdout);
  reportA = JSON.parse(await readFile(path.join(dir, "a.json"), "utf8")) as Report;
  reportB = JSON.parse(await readFile(path.join(dir, "b.json"), "utf8")) as Report;
  browser = await launchBrowser();
}, 300_000);

afterAll(async () => {
  await browser?.close();
  expect(chromaPids(dir)).toEqual([]);
  // To look at the screenshots: RETRACE_KEEP_SCREENSHOTS=/some/dir npx vitest run test/html/html-report.int.test.ts
  const keep = process.env.RETRACE_KEEP_SCREENSHOTS;
  if (keep !== undefined && keep !== "") await cp(dir, keep, { recursive: true, filter: (f) => !f.includes(`${path.sep}chroma`) && !f.includes(`${path.sep}kb`) });
  await cleanup();
});

interface Guarded {
  page: Page;
  /** Requests to anything but the file itself, dialogs opened, page errors. */
  events: string[];
  close: () => Promise<void>;
}

async function open(file: string, opts: { bypassCSP?: boolean } = {}): Promise<Guarded> {
  const context = await browser!.newContext({ viewport: { width: 1280, height: 800 }, offline: true, bypassCSP: opts.bypassCSP ?? false });
  const page = await context.newPage();
  const events: string[] = [];
  page.on("request", (r) => {
    if (r.url() !== `file://${file}`) events.push(`request ${r.url()}`);
  });
  page.on("dialog", (d) => {
    events.push(`dialog ${d.message()}`);
    void d.dismiss();
  });
  page.on("pageerror", (e) => events.push(`pageerror ${e.message}`));
  await page.goto(`file://${file}`);
  return { page, events, close: () => context.close() };
}

/** What the turn view shows in the gold table: `{ gold: { stage: "3" | "—" } }`. */
async function shownGoldRanks(page: Page, scope: string): Promise<Record<string, Record<string, string>>> {
  return page.$$eval(`${scope} table.goldranks tr[data-gold]`, (rows) =>
    Object.fromEntries(
      rows.map((tr) => [tr.getAttribute("data-gold"), Object.fromEntries([...tr.querySelectorAll("td[data-stage]")].map((td) => [td.getAttribute("data-stage"), td.textContent]))]),
    ),
  );
}

/** The same, from the report JSON (ranks of `goldPositions`, final = position in `retrievedIds`). */
function expectedGoldRanks(t: TurnReport): Record<string, Record<string, string>> {
  const show = (r: number | null | undefined) => (r === null || r === undefined ? "—" : String(r));
  return Object.fromEntries(
    t.gold.map((g) => {
      const idx = t.trace!.retrievedIds.indexOf(g);
      return [g, { ...Object.fromEntries(Object.entries(t.trace!.goldPositions[g]!).map(([s, r]) => [s, show(r)])), final: show(idx >= 0 ? idx + 1 : null) }];
    }),
  );
}

describe.skipIf(skipReason !== null)("retrace eval --html in Chromium", () => {
  it("is one self-contained file: no external reference, a hash-based CSP, exactly the page's own two scripts", async () => {
    const html = await readFile(path.join(dir, "a.html"), "utf8");
    expect(html).toMatch(/<meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;; script-src &#39;sha256-[A-Za-z0-9+/=]+&#39;; style-src &#39;sha256-/);
    expect(html.match(/<script/g)?.length).toBe(2);
    expect(html.match(/<\/script>/g)?.length).toBe(2);
    expect(html).not.toMatch(/(src|href)=["']?(https?:)?\/\//);
    expect(html).not.toMatch(/<img/);
    expect((await stat(path.join(dir, "a.html"))).size).toBeLessThan(2_000_000);
  });

  it("shows the summary numbers of the JSON report", async () => {
    const { page, events, close } = await open(path.join(dir, "a.html"));
    const cells = await page.$$eval("td[data-key][data-split][data-group]", (tds) =>
      tds.map((td) => ({ key: td.getAttribute("data-key"), split: td.getAttribute("data-split"), group: td.getAttribute("data-group"), mean: td.querySelector(".mean")?.textContent ?? null, n: td.querySelector(".n")?.textContent ?? null })),
    );
    let checked = 0;
    for (const c of cells) {
      const agg = c.split === "all" ? reportA.aggregates[c.key!] : (reportA.splits as Record<string, Record<string, Record<string, { mean: number; n: number }>>>)[c.split!]?.[c.group!]?.[c.key!];
      if (agg === undefined) continue;
      expect({ cell: c, mean: c.mean, n: c.n }).toEqual({ cell: c, mean: agg.mean.toFixed(3), n: `n=${agg.n}` });
      checked++;
    }
    // Every aggregate of the report: overall, then each group of every split (kind, locale, part).
    let expectedCells = Object.keys(reportA.aggregates).length;
    for (const groups of Object.values(reportA.splits)) for (const group of Object.values(groups ?? {})) expectedCells += Object.keys(group).length;
    expect(checked).toBe(expectedCells);
    // The funnel's last row is the hit@k numerator, counted here from the JSON.
    const goldBearing = reportA.turns.filter((t) => t.gold.length > 0);
    await page.click('button[data-tab="funnel"]');
    const finalCell = await page.textContent('td[data-funnel="all:final"] .mean');
    expect(finalCell).toBe(String(goldBearing.filter((t) => hit(t) === 1).length));
    await page.screenshot({ path: path.join(dir, "funnel.png") });
    await page.click('button[data-tab="summary"]');
    await page.screenshot({ path: path.join(dir, "summary.png") });
    expect(events).toEqual([]);
    await close();
  });

  it("filters to the missed turns; a missed turn's view shows each gold card's rank at every stage as in the trace", async () => {
    const { page, events, close } = await open(path.join(dir, "a.html"));
    await page.click('button[data-tab="turns"]');
    const missed = reportA.turns.filter((t) => hit(t) === 0);
    expect(missed.length).toBeGreaterThan(0);
    // Missed turns come first by default.
    const firstRows = await page.$$eval("table.turns tbody tr", (trs) => trs.slice(0, 3).map((tr) => tr.getAttribute("data-outcome")));
    expect(firstRows[0]).toBe("miss");
    await page.selectOption('select[name="outcome"]', "miss");
    const shown = await page.$$eval("table.turns tbody tr", (trs) => trs.map((tr) => tr.getAttribute("data-turn")));
    expect(shown).toEqual(missed.map((t) => `${t.caseId}#${t.turn}`));
    await page.screenshot({ path: path.join(dir, "turns-missed.png") });

    await page.click(`table.turns tbody tr[data-turn="${shown[0]}"]`);
    const t = missed[0]!;
    expect(await page.textContent(".turnview .query")).toBe(t.trace!.query);
    expect(await shownGoldRanks(page, ".turnview")).toEqual(expectedGoldRanks(t));
    expect(await page.getAttribute(".turnview table.goldranks td[data-cut]", "data-cut")).not.toBe("");
    await page.screenshot({ path: path.join(dir, "turn-missed.png") });
    expect(events).toEqual([]);
    await close();
  });

  for (const bypassCSP of [false, true]) {
    it(`runs no script from the data${bypassCSP ? " even with the CSP bypassed (escaping alone holds)" : ""}`, async () => {
      const { page, events, close } = await open(path.join(dir, "a.html"), { bypassCSP });
      await page.click('button[data-tab="turns"]');
      await page.fill('input[name="text"]', HOSTILE_CASE);
      await page.click(`table.turns tbody tr[data-turn="${HOSTILE_CASE}#0"]`);
      const t = reportA.turns.find((x) => x.caseId === HOSTILE_CASE)!;
      expect(await page.textContent(".turnview .msg.current")).toBe(`user 0${HOSTILE_USER}`);
      expect(await page.textContent(".turnview .answer")).toBe(t.answer === "" ? "(empty)" : t.answer);
      expect(t.answer).toContain("onerror"); // the hostile card's text reached the answer, so it is on the page
      expect(await page.evaluate(() => (globalThis as unknown as { __pwned?: unknown }).__pwned)).toBeUndefined();
      expect(await page.$$eval("img", (imgs) => imgs.length)).toBe(0);
      expect(await page.$$eval("script", (s) => s.length)).toBe(2);
      expect(events).toEqual([]);
      if (!bypassCSP) await page.screenshot({ path: path.join(dir, "turn-hostile.png") });
      await close();
    });
  }

  it("wrote readable screenshots", async () => {
    for (const f of ["summary.png", "funnel.png", "turns-missed.png", "turn-missed.png", "turn-hostile.png"]) {
      expect(existsSync(path.join(dir, f))).toBe(true);
      expect((await stat(path.join(dir, f))).size).toBeGreaterThan(10_000);
    }
  });
});

describe.skipIf(skipReason !== null)("retrace compare --html in Chromium", () => {
  it("shows both runs' paired differences as `compare --json` computed them", async () => {
    const cmp = JSON.parse(await readFile(path.join(dir, "compare.json"), "utf8")) as { comparisons: { key: string; meanA: number; meanB: number; diff: number }[] };
    const { page, events, close } = await open(path.join(dir, "diff.html"));
    const rows = await page.$$eval("table.comparison tbody tr", (trs) =>
      trs.map((tr) => ({ key: tr.getAttribute("data-key"), a: tr.querySelector('[data-side="a"]')?.textContent, b: tr.querySelector('[data-side="b"]')?.textContent, diff: tr.querySelector('[data-side="diff"]')?.textContent })),
    );
    expect(rows).toEqual(cmp.comparisons.map((c) => ({ key: c.key, a: c.meanA.toFixed(3), b: c.meanB.toFixed(3), diff: `${c.diff >= 0 ? "+" : "−"}${Math.abs(c.diff).toFixed(3)}` })));
    // Each side's summary shows its own report's hit@k.
    for (const [side, r] of [["a", reportA], ["b", reportB]] as const) {
      const shown = await page.textContent(`[data-run="${side}"] td[data-split="all"][data-key="retrieval_hit_at_k"] .mean`);
      expect(shown).toBe(r.aggregates.retrieval_hit_at_k!.mean.toFixed(3));
    }
    await page.screenshot({ path: path.join(dir, "compare-summary.png") });
    expect(events).toEqual([]);
    await close();
  });

  it("lists flipped turns hit→miss first, then miss→hit, and opens both runs' turn views side by side", async () => {
    const inB = new Map(reportB.turns.map((t) => [`${t.caseId}#${t.turn}`, t]));
    const lost: string[] = [];
    const gained: string[] = [];
    for (const t of reportA.turns) {
      const id = `${t.caseId}#${t.turn}`;
      const other = inB.get(id);
      if (other === undefined) continue;
      if (hit(t) === 1 && hit(other) === 0) lost.push(id);
      if (hit(t) === 0 && hit(other) === 1) gained.push(id);
    }
    expect(lost.length + gained.length).toBeGreaterThan(0);
    const { page, events, close } = await open(path.join(dir, "diff.html"));
    await page.click('button[data-tab="flips"]');
    const flips = await page.$$eval("table.flips tbody tr", (trs) => trs.map((tr) => `${tr.getAttribute("data-direction")} ${tr.getAttribute("data-turn")}`));
    expect(flips).toEqual([...lost.map((id) => `hit→miss ${id}`), ...gained.map((id) => `miss→hit ${id}`)]);
    await page.screenshot({ path: path.join(dir, "compare-flips.png") });

    const id = lost[0] ?? gained[0]!;
    await page.click(`table.flips tbody tr[data-turn="${id}"]`);
    const ta = reportA.turns.find((t) => `${t.caseId}#${t.turn}` === id)!;
    const tb = inB.get(id)!;
    expect(await shownGoldRanks(page, '[data-panel="pair"] [data-run="a"]')).toEqual(expectedGoldRanks(ta));
    expect(await shownGoldRanks(page, '[data-panel="pair"] [data-run="b"]')).toEqual(expectedGoldRanks(tb));
    await page.screenshot({ path: path.join(dir, "compare-turn.png") });
    expect((await stat(path.join(dir, "compare-turn.png"))).size).toBeGreaterThan(10_000);
    expect(events).toEqual([]);
    await close();
  });
});
