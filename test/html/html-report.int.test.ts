/**
 * The HTML report and compare page in real browsers — Debian's Chromium via
 * playwright-core and Debian's firefox-esr via puppeteer-core over WebDriver
 * BiDi (test/helpers/browser.ts): two store-backed sweeps run by the real bin
 * on a copy of the shipped KB (es-419 cases only, plus one hostile card and
 * case), each page opened from disk in each browser, what it shows checked
 * against the report JSON, and screenshots written to the test's temp dir,
 * one folder per browser.
 */
import { existsSync } from "node:fs";
import { cp, mkdir, readFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { isDeepStrictEqual } from "node:util";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Report, TurnReport } from "../../src/eval/report/types.js";
import { BROWSERS, launchDriver, type BrowserDriver, type BrowserPage } from "../helpers/browser.js";
import { chromaPids, tempDir } from "../helpers/chroma.js";
import { ROOT, runCli } from "../helpers/cli.js";
import { SHIPPED_KB } from "../helpers/fixtures.js";

/** The turn-position groups' labels, numbered from #0 as the caseId#N keys (written out here, not read from the code). */
const POSITION_LABEL: Record<string, string> = { "1": "turn #0", "2": "turn #1", "3": "turn #2", "4+": "turn #3+" };

for (const b of BROWSERS) if (b.skipReason !== null) process.stderr.write(`${b.skipReason}\n`);
const noBrowser = BROWSERS.every((b) => b.skipReason !== null);

const HOSTILE_CASE = "es-hostil-001";
// Every payload sets window.__pwned (or opens a dialog) if it ever runs.
const HOSTILE_USER = `<script>window.__pwned='case'</script> ¿cómo congelo la tarjeta hostil? "><img src=x onerror="window.__pwned='img'"> </script><script>alert(1)</script>`;
// A hostile follow-up whose standalone (oracle) question is markup too: both reach the turn view's three queries.
const HOSTILE_FOLLOWUP = `¿y cómo la descongelo? <img src=x onerror="window.__pwned='followup'"><script>window.__pwned='followup2'</script>`;
const HOSTILE_STANDALONE = `¿Cómo descongelo la tarjeta hostil? </script><script>window.__pwned='standalone'</script><svg onload="window.__pwned='svg'">`;
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
let reportA: Report;
let reportB: Report;
/**
 * Whether the summary leaves a group out as a repeat of the all column, read
 * from the JSON: a kind whose every aggregate is the overall one (every case
 * of that kind), or the one group of a split that has one (one locale).
 */
const repeatsAll = (r: Report, split: string, group: string) =>
  split !== "position" &&
  isDeepStrictEqual(r.splits[split]?.[group], r.aggregates) &&
  (split === "kind" || Object.keys(r.splits[split] ?? {}).length === 1);
const hit = (t: TurnReport) => t.results.find((r) => r.key === "retrieval_hit_at_k")?.score;
const score = (t: TurnReport, key: string) => t.results.find((r) => r.key === key)?.score;
const CSP_META = /<meta http-equiv="Content-Security-Policy" content="[^"]*">\n/;
const DATA_ELEMENT =
  /(<script type="application\/octet-stream" id="retrace-data" data-encoding="gzip\+base64">)([^<]*)(<\/script>)/;

/** The page file's embedded data: the gzip bytes (after base64 decoding) and the JSON they hold, decoded here in Node. */
async function embedded(file: string): Promise<{ gz: Buffer; data: Record<string, unknown> }> {
  const m = DATA_ELEMENT.exec(await readFile(path.join(dir, file), "utf8"));
  expect(m).not.toBeNull();
  const gz = Buffer.from(m![2]!, "base64");
  return { gz, data: JSON.parse(gunzipSync(gz).toString("utf8")) as Record<string, unknown> };
}

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir("html"));
  if (noBrowser) return;
  const kb = path.join(dir, "kb");
  await cp(SHIPPED_KB, kb, { recursive: true });
  await writeFile(path.join(kb, "cards", "es-419", "es-tarjeta-hostil.md"), HOSTILE_CARD);
  const casesFile = path.join(kb, "eval", "cases.jsonl");
  const cases = await readFile(casesFile, "utf8");
  const hostileCase = {
    id: HOSTILE_CASE,
    locale: "es-419",
    kind: "golden",
    turns: [
      { user: HOSTILE_USER, must_cite_one_of: ["es-tarjeta-hostil"], expect: "answer" },
      {
        user: HOSTILE_FOLLOWUP,
        standalone: HOSTILE_STANDALONE,
        must_cite_one_of: ["es-tarjeta-hostil"],
        expect: "answer",
      },
    ],
  };
  await writeFile(casesFile, `${cases.trimEnd()}\n${JSON.stringify(hostileCase)}\n`);
  // Every case is in one part of the committed split (docs/holdout.md): the new one is held out.
  const splitFile = path.join(kb, "eval", "split.json");
  const split = JSON.parse(await readFile(splitFile, "utf8")) as { holdout: string[] };
  split.holdout.push(HOSTILE_CASE);
  await writeFile(splitFile, JSON.stringify(split));

  const common = [
    "eval",
    "--kb",
    kb,
    "--locale",
    "es-419",
    "--config",
    '{"retrieval":{"embedder":"builtin"}}',
    "--data-dir",
    path.join(dir, "chroma"),
  ];
  const a = await runCli(
    [...common, "--out", `json:${path.join(dir, "a.json")}`, "--out", `html:${path.join(dir, "a.html")}`],
    { env: { CHROMA_URL: "" } },
  );
  expect(a.stderr).not.toMatch(/unexpected error/);
  expect(a.exitCode).toBe(0);
  const b = await runCli(
    [...common, "--config", '{"retrieval":{"mode":"bm25"}}', "--out", `json:${path.join(dir, "b.json")}`],
    { env: { CHROMA_URL: "" } },
  );
  expect(b.exitCode).toBe(0);
  const c = await runCli([
    "compare",
    path.join(dir, "a.json"),
    path.join(dir, "b.json"),
    "--out",
    `html:${path.join(dir, "diff.html")}`,
    "--json",
  ]);
  expect(c.exitCode).toBe(0);
  await writeFile(path.join(dir, "compare.json"), c.stdout);
  // The same page without its CSP meta tag (no other source of CSP for a file), to check that escaping alone holds.
  const html = await readFile(path.join(dir, "a.html"), "utf8");
  expect(html).toMatch(CSP_META);
  await writeFile(path.join(dir, "a-nocsp.html"), html.replace(CSP_META, ""));
  // The same page with its embedded data cut short (a damaged file).
  await writeFile(
    path.join(dir, "a-damaged.html"),
    html.replace(DATA_ELEMENT, (_, open: string, b64: string, close: string) => `${open}${b64.slice(0, 4000)}${close}`),
  );
  // A report written with schemaVersion 2 by an eval with --judge (test/fixtures/schema/report-v2-judge.json), rendered again: migrated on read.
  const judged = await runCli([
    "report",
    path.join(ROOT, "test", "fixtures", "schema", "report-v2-judge.json"),
    "--out",
    `html:${path.join(dir, "judged.html")}`,
  ]);
  expect(judged.exitCode, judged.stderr).toBe(0);
  reportA = JSON.parse(await readFile(path.join(dir, "a.json"), "utf8")) as Report;
  reportB = JSON.parse(await readFile(path.join(dir, "b.json"), "utf8")) as Report;
}, 300_000);

afterAll(async () => {
  expect(chromaPids(dir)).toEqual([]);
  // To look at the screenshots: RETRACE_KEEP_SCREENSHOTS=/some/dir npx vitest run test/html/html-report.int.test.ts
  const keep = process.env.RETRACE_KEEP_SCREENSHOTS;
  if (keep !== undefined && keep !== "")
    await cp(dir, keep, {
      recursive: true,
      filter: (f) => !f.includes(`${path.sep}chroma`) && !f.includes(`${path.sep}kb`),
    });
  await cleanup();
});

/** What the turn view shows in the gold table: `{ gold: { stage: "3" | "—" } }`. */
async function shownGoldRanks(page: BrowserPage, scope: string): Promise<Record<string, Record<string, string>>> {
  return page.evalAll(`${scope} table.goldranks tr[data-gold]`, (rows) =>
    Object.fromEntries(
      rows.map((tr) => [
        tr.getAttribute("data-gold"),
        Object.fromEntries(
          [...tr.querySelectorAll("td[data-stage]")].map((td) => [td.getAttribute("data-stage"), td.textContent]),
        ),
      ]),
    ),
  );
}

/** The same, from the report JSON (ranks of `goldPositions`, final = position in `retrievedIds`). */
function expectedGoldRanks(t: TurnReport): Record<string, Record<string, string>> {
  const show = (r: number | null | undefined) => (r === null || r === undefined ? "—" : String(r));
  return Object.fromEntries(
    t.gold.map((g) => {
      const idx = t.trace!.retrievedIds.indexOf(g);
      return [
        g,
        {
          ...Object.fromEntries(Object.entries(t.trace!.goldPositions[g]!).map(([s, r]) => [s, show(r)])),
          final: show(idx >= 0 ? idx + 1 : null),
        },
      ];
    }),
  );
}

describe.skipIf(noBrowser)("retrace eval --html: the file", () => {
  it("is one self-contained file: no external reference, a hash-based CSP, exactly the page's own two scripts", async () => {
    const html = await readFile(path.join(dir, "a.html"), "utf8");
    expect(html).toMatch(
      /<meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;; script-src &#39;sha256-[A-Za-z0-9+/=]+&#39;; style-src &#39;sha256-/,
    );
    expect(html.match(/<script/g)?.length).toBe(2);
    expect(html.match(/<\/script>/g)?.length).toBe(2);
    expect(html).not.toMatch(/(src|href)=["']?(https?:)?\/\//);
    expect(html).not.toMatch(/<img/);
    expect((await stat(path.join(dir, "a.html"))).size).toBeLessThan(2_000_000);
  });

  it("embeds its data as gzip in base64 (fixed header), decoding to the report JSON; the same report gives the same bytes", async () => {
    for (const file of ["a.html", "diff.html"]) {
      const { gz } = await embedded(file);
      // RFC 1952 magic 1f 8b, CM 8 (deflate), no flags, MTIME 0, OS 255 (unknown): nothing of when or where it was written.
      expect([...gz.subarray(0, 10)]).toEqual([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 2, 255]);
    }
    const { data } = await embedded("a.html");
    expect(data.kind).toBe("report");
    expect((data.run as { report: Report }).report).toEqual(reportA);
    const { data: cmp } = await embedded("diff.html");
    expect(cmp.kind).toBe("compare");
    expect((cmp.a as { report: Report }).report.aggregates).toEqual(reportA.aggregates);
    // Same input, identical bytes: the saved report rendered twice.
    const pages = [path.join(dir, "r1.html"), path.join(dir, "r2.html")];
    for (const out of pages)
      expect((await runCli(["report", path.join(dir, "a.json"), "--out", `html:${out}`])).exitCode).toBe(0);
    const [r1, r2] = await Promise.all(pages.map((f) => readFile(f)));
    expect(r1!.length).toBeGreaterThan(10_000);
    expect(r1!.equals(r2!)).toBe(true);
  });
});

describe.each(BROWSERS)("in $label", (target) => {
  let driver: BrowserDriver | undefined;
  let shots: string;
  const shot = (name: string) => path.join(shots, name);
  const open = (file: string) => driver!.open(path.join(dir, file));

  beforeAll(async () => {
    if (target.skipReason !== null) return;
    shots = path.join(dir, target.name);
    await mkdir(shots, { recursive: true });
    driver = await launchDriver(target);
  }, 120_000);

  afterAll(async () => {
    await driver?.close();
  });

  describe.skipIf(target.skipReason !== null)("retrace eval --html", () => {
    it("lays the page out at 1280×800 (the window sized at launch, no viewport emulation)", async () => {
      const page = await open("a.html");
      const size = await page.evaluate(() => {
        const w = globalThis as unknown as { innerWidth: number; innerHeight: number };
        return [w.innerWidth, w.innerHeight];
      });
      expect(size).toEqual([1280, 800]);
      await page.close();
    });

    it("shows the judge's model and prompt, and this run's cost from timings.judge (a schemaVersion 2 report, migrated by retrace report)", async () => {
      const page = await open("judged.html");
      expect(await page.text('[data-section="judge"]')).toBe(
        "model FakeListChatModel, prompt groundedness-v1: 2 calls, 0 cached, tokens not reported",
      );
      expect(page.events).toEqual([]);
      await page.close();
    });

    it("shows the summary numbers of the JSON report", async () => {
      const page = await open("a.html");
      const cells = await page.evalAll("td[data-key][data-split][data-group]", (tds) =>
        tds.map((td) => ({
          key: td.getAttribute("data-key"),
          split: td.getAttribute("data-split"),
          group: td.getAttribute("data-group"),
          mean: td.querySelector(".mean")?.textContent ?? null,
          n: td.querySelector(".n")?.textContent ?? null,
        })),
      );
      let checked = 0;
      for (const c of cells) {
        const agg =
          c.split === "all"
            ? reportA.aggregates[c.key!]
            : (reportA.splits as Record<string, Record<string, Record<string, { mean: number; n: number }>>>)[
                c.split!
              ]?.[c.group!]?.[c.key!];
        if (agg === undefined) continue;
        expect({ cell: c, mean: c.mean, n: c.n }).toEqual({ cell: c, mean: agg.mean.toFixed(3), n: `n=${agg.n}` });
        checked++;
      }
      // Every aggregate of the report: overall, then each group of every split (kind, locale, part).
      let expectedCells = Object.keys(reportA.aggregates).length;
      for (const [split, groups] of Object.entries(reportA.splits))
        for (const [g, group] of Object.entries(groups ?? {}))
          if (!repeatsAll(reportA, split, g)) expectedCells += Object.keys(group).length;
      expect(checked).toBe(expectedCells);
      // The triad charts were drawn (inline SVG).
      expect(await page.evalAll("svg[data-chart] circle", (c) => c.length)).toBeGreaterThan(0);
      // The funnel's last row is the hit@k numerator, counted here from the JSON.
      const goldBearing = reportA.turns.filter((t) => t.gold.length > 0);
      await page.click('button[data-tab="funnel"]');
      expect(await page.text('td[data-funnel="all:final"] .mean')).toBe(
        String(goldBearing.filter((t) => hit(t) === 1).length),
      );
      await page.screenshot(shot("funnel.png"));
      await page.click('button[data-tab="summary"]');
      await page.screenshot(shot("summary.png"));
      expect(page.events).toEqual([]);
      await page.close();
    });

    it("reads well: one line per summary cell with no raw field names, the missed turns first on the Summary tab, a top-k column", async () => {
      const page = await open("a.html");
      // Each cell's parts (mean, interval, n, cases, chance) share one line: their boxes start at the same height.
      // The Summary tab's tables (the turn-position table is on the Conversation tab, hidden here: it has no boxes to measure).
      const cells = await page.evalAll('[data-panel="summary"] table.summary td[data-key]', (tds) =>
        tds.map((td) => {
          const spans = Array.from(td.querySelectorAll("span")) as unknown as {
            getBoundingClientRect(): { top: number; bottom: number };
          }[];
          const boxes = spans.map((x) => x.getBoundingClientRect());
          // One line: every part's box overlaps every other's vertically (stacked parts would not).
          return {
            parts: spans.length,
            oneLine:
              boxes.length === 0 || Math.max(...boxes.map((b) => b.top)) < Math.min(...boxes.map((b) => b.bottom)),
            text: td.textContent ?? "",
          };
        }),
      );
      expect(cells.filter((c) => c.parts >= 3).length).toBeGreaterThan(30);
      for (const c of cells) expect(c, c.text).toMatchObject({ oneLine: true });
      expect(cells.map((c) => c.text).join("\n")).not.toMatch(/nCases|ci95/);
      // The case count, where the JSON has one, worded as the terminal words it.
      const withCases = await page.evalAll('table.summary td[data-split="all"]', (tds) =>
        tds.map((td) => [td.getAttribute("data-key"), td.querySelector('[data-field="cases"]')?.textContent ?? null]),
      );
      for (const [key, cases] of withCases) {
        const agg = reportA.aggregates[key!];
        if (agg !== undefined) expect(cases).toBe(agg.nCases === undefined ? null : `(${agg.nCases} cases)`);
      }
      // One locale (--locale es-419): no by-locale table, no locale rows in the charts; the kinds differ from all, so each has its column.
      expect(Object.keys(reportA.splits.locale)).toEqual(["es-419"]);
      expect(await page.evalAll('table.summary[data-split="locale"]', (ts) => ts.length)).toBe(0);
      expect(await page.evalAll("svg[data-chart] text", (ts) => ts.map((t) => t.textContent))).not.toContain("es-419");
      expect(await page.text('[data-field="summary-repeats"]')).toContain("one locale (es-419)");
      const kinds = Object.keys(reportA.splits.kind).filter((g) => !repeatsAll(reportA, "kind", g));
      expect(kinds.length).toBeGreaterThan(1);
      expect(
        await page.evalAll('table.summary[data-split="kind"] thead th', (ths) => ths.map((th) => th.textContent)),
      ).toEqual(["metric", "all", ...kinds]);
      // The Summary tab leads with the missed turns, in dataset order, each with its top-k.
      const id = (t: TurnReport) => `${t.caseId}#${t.turn}`;
      const missed = reportA.turns.filter((t) => hit(t) === 0);
      expect(missed.length).toBeGreaterThan(0);
      expect(
        await page.evaluate(() =>
          (
            globalThis as unknown as {
              document: { querySelector(s: string): { firstElementChild: { getAttribute(n: string): string | null } } };
            }
          ).document
            .querySelector('[data-panel="summary"] .summary-block')
            .firstElementChild.getAttribute("data-section"),
        ),
      ).toBe("missed");
      const rows = await page.evalAll('[data-section="missed"] tbody tr', (trs) =>
        trs.map((tr) => [tr.getAttribute("data-turn"), tr.querySelector('[data-field="topk"]')?.textContent]),
      );
      expect(rows).toEqual(
        missed.map((t) => [id(t), t.trace ? t.trace.retrievedIds.join(", ") || "(none)" : "\u2014"]),
      );
      // A missed turn opens from there.
      await page.click(`[data-section="missed"] tbody tr[data-turn="${id(missed[0]!)}"] button`);
      expect(await page.attribute(".turnview", "data-turn")).toBe(id(missed[0]!));
      // retrace's own graph: its citations are read and shown; no comment repeated in the metrics table.
      expect(await page.evalAll('.turnview [data-field="citations"]', (ps) => ps.length)).toBe(1);
      const comments = await page.evalAll(".turnview table.metrics td.comment", (tds) =>
        tds.map((td) => td.textContent),
      );
      expect(new Set(comments).size).toBe(comments.length);
      expect(new Set(comments)).toEqual(new Set(missed[0]!.results.map((r) => r.comment ?? "")));
      // The Turns table's top-k column: each turn's scored ids, as the JSON has them.
      await page.click('button[data-tab="turns"]');
      const topk = await page.evalAll("table.turns tbody tr", (trs) =>
        trs.map((tr) => [tr.getAttribute("data-turn"), tr.querySelector('td[data-col="topk"]')?.textContent]),
      );
      expect(await page.text('table.turns th[data-col="topk"]')).toBe("top-k");
      expect(new Map(topk as [string, string][])).toEqual(
        new Map(reportA.turns.map((t) => [id(t), t.trace ? t.trace.retrievedIds.join(", ") || "(none)" : "\u2014"])),
      );
      expect(page.events).toEqual([]);
      await page.close();
    });

    it("filters to the missed turns, sorts by a clicked header; a missed turn's view shows each gold card's rank at every stage as in the trace", async () => {
      const page = await open("a.html");
      await page.click('button[data-tab="turns"]');
      const rowIds = () => page.evalAll("table.turns tbody tr", (trs) => trs.map((tr) => tr.getAttribute("data-turn")));
      const id = (t: TurnReport) => `${t.caseId}#${t.turn}`;
      const missed = reportA.turns.filter((t) => hit(t) === 0);
      expect(missed.length).toBeGreaterThan(0);
      // Default order: missed turns first, then dataset order.
      expect((await rowIds()).slice(0, missed.length)).toEqual(missed.map(id));
      // Sorting by recall: ascending, then descending; ties (and unscored turns, shown as —) in dataset order.
      const byRecall = (dir: 1 | -1) =>
        reportA.turns
          .map((t, i) => ({ t, i, r: score(t, "retrieval_recall_at_k") ?? -1 }))
          .sort((x, y) => dir * (x.r - y.r) || x.i - y.i)
          .map((x) => id(x.t));
      await page.click('table.turns th[data-col="recall"]');
      expect(await rowIds()).toEqual(byRecall(1));
      await page.click('table.turns th[data-col="recall"]');
      expect(await rowIds()).toEqual(byRecall(-1));
      await page.select('select[name="outcome"]', "miss");
      expect((await rowIds()).slice().sort()).toEqual(missed.map(id).sort());
      await page.click('table.turns th[data-col="turn"]');
      const shown = await rowIds();
      expect(shown).toEqual(missed.map(id));
      expect(await page.text('[data-field="count"]')).toBe(`${missed.length} of ${reportA.turns.length} turns`);
      await page.screenshot(shot("turns-missed.png"));

      await page.click(`table.turns tbody tr[data-turn="${shown[0]}"]`);
      const t = missed[0]!;
      expect(await page.text(".turnview .query")).toBe(t.trace!.query);
      expect(await shownGoldRanks(page, ".turnview")).toEqual(expectedGoldRanks(t));
      expect(await page.attribute(".turnview table.goldranks td[data-cut]", "data-cut")).not.toBe("");
      await page.screenshot(shot("turn-missed.png"));
      expect(page.events).toEqual([]);
      await page.close();
    });

    it("shows the numbers of its embedded data (decoded here from the file)", async () => {
      const { data } = await embedded("a.html");
      const hitAgg = (data.run as { report: Report }).report.aggregates.retrieval_hit_at_k!;
      const page = await open("a.html");
      expect(await page.attribute("#app", "data-state")).toBe("ready");
      expect(await page.text('td[data-split="all"][data-key="retrieval_hit_at_k"] .mean')).toBe(hitAgg.mean.toFixed(3));
      expect(await page.text('td[data-split="all"][data-key="retrieval_hit_at_k"] .n')).toBe(`n=${hitAgg.n}`);
      expect(page.events).toEqual([]);
      await page.close();
    });

    it("says plainly that the browser is too old when it has no DecompressionStream, and that a damaged file is damaged", async () => {
      const page = await driver!.open(path.join(dir, "a.html"), { initScript: "delete window.DecompressionStream;" });
      expect(await page.attribute("#app", "data-state")).toBe("unsupported");
      expect(await page.text("#app p.fatal")).toMatch(
        /^This browser is too old to open this report: .*DecompressionStream.*Chromium 80 or later, Firefox 113 or later/,
      );
      expect(await page.evalAll("nav.tabs button, table", (e) => e.length)).toBe(0);
      expect(page.events).toEqual([]);
      await page.screenshot(shot("too-old.png"));
      await page.close();
      const damaged = await open("a-damaged.html");
      expect(await damaged.attribute("#app", "data-state")).toBe("error");
      expect(await damaged.text("#app p.fatal")).toMatch(/could not be unpacked .*damaged/);
      expect(damaged.events).toEqual([]);
      await damaged.close();
    });

    for (const csp of [true, false]) {
      it(`runs no script from the data${csp ? "; the CSP blocks a script injected into the page" : " even without the CSP meta tag (escaping alone holds)"}`, async () => {
        const page = await open(csp ? "a.html" : "a-nocsp.html");
        await page.click('button[data-tab="turns"]');
        await page.fill('input[name="text"]', HOSTILE_CASE);
        await page.click(`table.turns tbody tr[data-turn="${HOSTILE_CASE}#0"]`);
        const t = reportA.turns.find((x) => x.caseId === HOSTILE_CASE)!;
        expect(await page.text(".turnview .msg.current")).toBe(`${HOSTILE_CASE}#0 user${HOSTILE_USER}`);
        expect(await page.text(".turnview .answer")).toBe(t.answer === "" ? "(empty)" : t.answer);
        expect(t.answer).toContain("onerror"); // the hostile card's text reached the answer, so it is on the page
        const pwned = () => page.evaluate(() => (globalThis as unknown as { __pwned?: unknown }).__pwned);
        expect(await pwned()).toBeUndefined();
        expect(await page.evalAll("img", (imgs) => imgs.length)).toBe(0);
        expect(await page.evalAll("script", (s) => s.length)).toBe(2);
        expect(page.events).toEqual([]);
        if (csp) await page.screenshot(shot("turn-hostile.png"));
        // Whether this browser enforces the page's CSP: a script element added to the DOM runs only without it.
        await page.evaluate(() => {
          const d = (
            globalThis as unknown as {
              document: { createElement(t: string): { textContent: string }; body: { appendChild(n: unknown): void } };
            }
          ).document;
          const s = d.createElement("script");
          s.textContent = "window.__pwned = 'injected'";
          d.body.appendChild(s);
        });
        expect(await pwned()).toBe(csp ? undefined : "injected");
        if (csp) {
          await expect.poll(() => page.events.length).toBeGreaterThan(0);
          expect(page.events.join("\n")).toMatch(/Content.Security.Policy/i);
        }
        await page.close();
      });
    }

    it("shows the query attribution counts overall and per turn position, and each query's means, as the JSON has them", async () => {
      const qa = reportA.queryAttribution!;
      expect(qa.enabled).toBe(true);
      expect(qa.turns).toBeGreaterThan(0);
      const page = await open("a.html");
      await page.click('button[data-tab="conversation"]');
      const rows = await page.evalAll('table.attribution[data-split="position"] tbody tr', (trs) =>
        trs.map((tr) => [
          tr.getAttribute("data-group"),
          tr.querySelector("th")?.textContent,
          Object.fromEntries(
            [...tr.querySelectorAll("td[data-attr]")].map((td) => [td.getAttribute("data-attr"), td.textContent]),
          ),
        ]),
      );
      const counts = (c: Record<string, number>) => ({
        n: String(Object.values(c).reduce((x, y) => x + y, 0)),
        ...Object.fromEntries(Object.entries(c).map(([a, v]) => [a, String(v)])),
      });
      const positions = Object.keys(qa.splits.position!);
      expect(positions).toEqual(
        ["1", "2", "3", "4+"].filter((g) =>
          reportA.turns.some((t) => t.queries !== undefined && (t.turn >= 3 ? "4+" : String(t.turn + 1)) === g),
        ),
      );
      expect(rows).toEqual([
        ["all", "all", counts(qa.counts)],
        ...positions.map((g) => [g, POSITION_LABEL[g]!, counts(qa.splits.position![g]!)]),
      ]);
      // The counts are the turns' own attributions, counted here from the JSON.
      for (const g of positions) {
        const ts = reportA.turns.filter(
          (t) => t.queries !== undefined && (t.turn >= 3 ? "4+" : String(t.turn + 1)) === g,
        );
        expect(rows.find((r) => r[0] === g)![2]).toMatchObject({
          n: String(ts.length),
          rewrite_lost_it: String(ts.filter((t) => t.queries!.attribution === "rewrite_lost_it").length),
        });
      }
      // Each query's hit@k mean, interval and n.
      const means = await page.evalAll("table.querymeans tbody tr", (trs) =>
        trs.map((tr) => [
          tr.getAttribute("data-query"),
          tr.querySelector('td[data-key="retrieval_hit_at_k"]')?.textContent,
        ]),
      );
      const ci = (c: [number, number] | undefined) =>
        c === undefined ? "(no CI)" : `[${c[0].toFixed(3)}, ${c[1].toFixed(3)}]`;
      expect(means).toEqual(
        ["graph", "raw", "standalone"]
          .filter((v) => qa.means[v] !== undefined)
          .map((v) => {
            const a = qa.means[v]!.retrieval_hit_at_k!;
            return [v, `${a.mean.toFixed(3)}${ci(a.ci95)}n=${a.n}`];
          }),
      );
      await page.screenshot(shot("conversation.png"));
      expect(page.events).toEqual([]);
      await page.close();
    });

    it("shows every metric by turn position (turn #0, #1, #2, #3+) with n and intervals, and the stage funnel with its intervals overall and per split", async () => {
      const page = await open("a.html");
      await page.click('button[data-tab="conversation"]');
      const position = reportA.splits.position!;
      const heads = await page.evalAll(
        '[data-panel="conversation"] table.summary[data-split="position"] thead th',
        (ths) => ths.map((th) => th.textContent),
      );
      expect(heads).toEqual(["metric", ...Object.keys(position).map((g) => POSITION_LABEL[g]!)]);
      const cells = await page.evalAll(
        '[data-panel="conversation"] td[data-split="position"][data-key="retrieval_hit_at_k"]',
        (tds) =>
          tds.map((td) => [
            td.getAttribute("data-group"),
            td.querySelector(".mean")?.textContent,
            td.querySelector(".ci")?.textContent,
            td.querySelector(".n")?.textContent,
          ]),
      );
      const ci = (c: [number, number] | undefined) =>
        c === undefined ? "(no CI)" : `[${c[0].toFixed(3)}, ${c[1].toFixed(3)}]`;
      expect(cells).toEqual(
        Object.entries(position).map(([g, keys]) => [
          g,
          keys.retrieval_hit_at_k!.mean.toFixed(3),
          ci(keys.retrieval_hit_at_k!.ci95),
          `n=${keys.retrieval_hit_at_k!.n}`,
        ]),
      );
      // The funnel with intervals, by turn position, in the Conversation tab and (the default split) in the funnel tab.
      const f = reportA.funnel!;
      const stat = (scope: string) =>
        page.evalAll(`${scope} table.funnelstats td[data-funnel-stat]`, (tds) =>
          tds.map((td) => [
            td.getAttribute("data-funnel-stat"),
            td.querySelector(".mean")?.textContent ?? td.textContent,
            td.querySelector(".ci")?.textContent ?? null,
            td.querySelector(".n")?.textContent ?? null,
          ]),
        );
      const expected = (split: string) => {
        const groups: [string, typeof f.stages][] = [["all", f.stages], ...Object.entries(f.splits[split] ?? {})];
        return f.stages.flatMap((s) =>
          groups.map(([g, rows]) => {
            const r = rows.find((x) => x.stage === s.stage);
            return r === undefined
              ? [`${g}:${s.stage}`, "—", null, null]
              : [`${g}:${s.stage}`, r.share.toFixed(3), ci(r.ci95), `n=${r.n}`];
          }),
        );
      };
      expect(f.stages.map((s) => s.stage)).toEqual(["query", "dense", "bm25", "fused", "parents", "final"]);
      expect(Object.keys(f.splits.position!).length).toBeGreaterThan(1);
      expect(await stat('[data-panel="conversation"]')).toEqual(expected("position"));
      await page.click('button[data-tab="funnel"]');
      expect(await stat('[data-panel="funnel"]')).toEqual(expected("position"));
      await page.select('select[name="funnel-split"]', "kind");
      expect(await stat('[data-panel="funnel"]')).toEqual(expected("kind"));
      // final top-k is hit@k: its share is the hit@k mean, its interval the same bootstrap's.
      const final = f.stages.find((s) => s.stage === "final")!;
      expect(final.share).toBeCloseTo(reportA.aggregates.retrieval_hit_at_k!.mean, 12);
      await page.screenshot(shot("funnel-stats.png"));
      expect(page.events).toEqual([]);
      await page.close();
    });

    it("shows a follow-up's three queries side by side (raw message, standalone oracle, the graph's query), each with its rank of the gold, and the attribution", async () => {
      // A follow-up with an oracle whose rewrite changed the query, preferring one where the three ranks differ.
      const candidates = reportA.turns.filter(
        (t) =>
          t.turn > 0 &&
          t.queries?.standalone !== undefined &&
          t.queries.graph.query !== t.user &&
          t.caseId !== HOSTILE_CASE,
      );
      expect(candidates.length).toBeGreaterThan(0);
      const t =
        candidates.find(
          (x) => new Set([x.queries!.graph.rank, x.queries!.raw.rank, x.queries!.standalone!.rank]).size > 1,
        ) ?? candidates[0]!;
      const page = await open("a.html");
      await page.click('button[data-tab="turns"]');
      await page.fill('input[name="text"]', t.caseId);
      await page.click(`table.turns tbody tr[data-turn="${t.caseId}#${t.turn}"]`);
      const shown = await page.evalAll(".turnview [data-section=queries] [data-query]", (ds) =>
        ds.map((d) => [
          d.getAttribute("data-query"),
          d.querySelector('[data-field="text"]')?.textContent,
          d.querySelector('[data-field="rank"]')?.textContent,
          d.querySelector('[data-field="hit"]')?.textContent,
        ]),
      );
      const q = t.queries!;
      const rank = (r: number | null) => (r === null ? "—" : String(r));
      expect(shown).toEqual(
        (["raw", "standalone", "graph"] as const).map((v) => [
          v,
          q[v]!.query,
          rank(q[v]!.rank),
          q[v]!.scores.retrieval_hit_at_k! > 0 ? "hit" : "miss",
        ]),
      );
      expect(q.standalone!.query).toBe(
        JSON.parse(
          (await readFile(path.join(dir, "kb", "eval", "cases.jsonl"), "utf8"))
            .split("\n")
            .find((l) => l.includes(`"${t.caseId}"`))!,
        ).turns[t.turn].standalone,
      );
      const labels: Record<string, string> = {
        ok: "ok",
        rewrite_rescued_it: "rewrite rescued it",
        rewrite_not_needed: "rewrite not needed",
        rewrite_lost_it: "rewrite lost it",
        retriever_lost_it: "retriever lost it",
      };
      expect(await page.text('.turnview [data-field="attribution"]')).toBe(labels[q.attribution]);
      await page.screenshot(shot("turn-queries.png"));
      expect(page.events).toEqual([]);
      await page.close();
    });

    it("keeps a hostile follow-up's raw message and standalone question inert text in the three queries", async () => {
      const t = reportA.turns.find((x) => x.caseId === HOSTILE_CASE && x.turn === 1)!;
      expect(t.queries?.standalone?.query).toBe(HOSTILE_STANDALONE);
      const page = await open("a-nocsp.html"); // escaping alone, without the CSP
      await page.click('button[data-tab="turns"]');
      await page.fill('input[name="text"]', HOSTILE_CASE);
      await page.click(`table.turns tbody tr[data-turn="${HOSTILE_CASE}#1"]`);
      expect(await page.text('.turnview [data-query="raw"] [data-field="text"]')).toBe(HOSTILE_FOLLOWUP);
      expect(await page.text('.turnview [data-query="standalone"] [data-field="text"]')).toBe(HOSTILE_STANDALONE);
      expect(await page.text('.turnview [data-query="graph"] [data-field="text"]')).toBe(t.queries!.graph.query);
      expect(await page.evaluate(() => (globalThis as unknown as { __pwned?: unknown }).__pwned)).toBeUndefined();
      expect(await page.evalAll("img, svg[onload], script", (e) => e.length)).toBe(2); // the page's own two scripts
      expect(page.events).toEqual([]);
      await page.close();
    });

    it("wrote readable screenshots", async () => {
      for (const f of [
        "summary.png",
        "funnel.png",
        "turns-missed.png",
        "turn-missed.png",
        "turn-hostile.png",
        "conversation.png",
        "funnel-stats.png",
        "turn-queries.png",
      ]) {
        expect(existsSync(shot(f))).toBe(true);
        expect((await stat(shot(f))).size).toBeGreaterThan(10_000);
      }
    });
  });

  describe.skipIf(target.skipReason !== null)("retrace compare --html", () => {
    it("shows both runs' paired differences as `compare --json` computed them", async () => {
      const cmp = JSON.parse(await readFile(path.join(dir, "compare.json"), "utf8")) as {
        comparisons: { key: string; meanA: number; meanB: number; diff: number }[];
      };
      const page = await open("diff.html");
      const rows = await page.evalAll("table.comparison tbody tr", (trs) =>
        trs.map((tr) => ({
          key: tr.getAttribute("data-key"),
          a: tr.querySelector('[data-side="a"]')?.textContent,
          b: tr.querySelector('[data-side="b"]')?.textContent,
          diff: tr.querySelector('[data-side="diff"]')?.textContent,
        })),
      );
      expect(rows).toEqual(
        cmp.comparisons.map((c) => ({
          key: c.key,
          a: c.meanA.toFixed(3),
          b: c.meanB.toFixed(3),
          diff: `${c.diff >= 0 ? "+" : "−"}${Math.abs(c.diff).toFixed(3)}`,
        })),
      );
      // Each side's summary shows its own report's hit@k.
      for (const [side, r] of [
        ["a", reportA],
        ["b", reportB],
      ] as const) {
        const shown = await page.text(`[data-run="${side}"] td[data-split="all"][data-key="retrieval_hit_at_k"] .mean`);
        expect(shown).toBe(r.aggregates.retrieval_hit_at_k!.mean.toFixed(3));
        // The run line counts the whole run's turns (the page embeds only the turns it can open).
        expect(await page.text(`[data-run="${side}"] .note`)).toContain(
          `turns=${r.turns.length} (gold-bearing ${r.turns.filter((t) => t.gold.length > 0).length})`,
        );
      }
      await page.screenshot(shot("compare-summary.png"));
      expect(page.events).toEqual([]);
      await page.close();
    });

    it("shows both runs' stage funnels with intervals and the paired difference per stage, as `compare --json` computed them", async () => {
      type Row = { stage: string; share: number; n: number; ci95?: [number, number] };
      const cmp = JSON.parse(await readFile(path.join(dir, "compare.json"), "utf8")) as {
        funnels: {
          a: Row[];
          b: Row[];
          diff: { stage: string; n: number; diff: number; ci95: [number, number] | null; pValue: number }[];
        };
        method: { unit: string };
      };
      expect(cmp.funnels.diff.length).toBeGreaterThan(0);
      const page = await open("diff.html");
      const rows = await page.evalAll("table.funnelcompare tbody tr", (trs) =>
        trs.map((tr) => [
          tr.getAttribute("data-stage"),
          tr.querySelector('[data-side="a"]')?.textContent,
          tr.querySelector('[data-side="b"]')?.textContent,
          tr.querySelector('[data-field="n"]')?.textContent,
          tr.querySelector('[data-side="diff"]')?.textContent,
          tr.querySelector('[data-field="ci"]')?.textContent,
        ]),
      );
      const signed = (d: number) => `${d >= 0 ? "+" : "−"}${Math.abs(d).toFixed(3)}`;
      const side = (rows: Row[], stage: string) => {
        const r = rows.find((x) => x.stage === stage);
        return r === undefined
          ? "—"
          : `${r.share.toFixed(3)}${r.ci95 === undefined ? "(no CI)" : `[${r.ci95[0].toFixed(3)}, ${r.ci95[1].toFixed(3)}]`}n=${r.n}`;
      };
      expect(rows).toEqual(
        cmp.funnels.diff.map((d) => [
          d.stage,
          side(cmp.funnels.a, d.stage),
          side(cmp.funnels.b, d.stage),
          String(d.n),
          signed(d.diff),
          d.ci95 === null ? "(n < 2)" : `[${signed(d.ci95[0])}, ${signed(d.ci95[1])}]`,
        ]),
      );
      // B runs BM25 only: it has no dense stage, and its funnel differs from A's somewhere.
      expect(cmp.funnels.diff.map((d) => d.stage)).not.toContain("dense");
      expect(cmp.funnels.diff.some((d) => d.diff !== 0)).toBe(true);
      expect(await page.text('[data-section="funnel-compare"] p.note')).toContain(
        `resampling unit: ${cmp.method.unit},`,
      );
      await page.screenshot(shot("compare-funnel.png"));
      expect(page.events).toEqual([]);
      await page.close();
    });

    it("lists flipped turns hit→miss first, then miss→hit, and opens both runs' turn views side by side, each with its conversation so far", async () => {
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
      const page = await open("diff.html");
      await page.click('button[data-tab="flips"]');
      const flips = await page.evalAll("table.flips tbody tr", (trs) =>
        trs.map((tr) => `${tr.getAttribute("data-direction")} ${tr.getAttribute("data-turn")}`),
      );
      expect(flips).toEqual([...lost.map((id) => `hit→miss ${id}`), ...gained.map((id) => `miss→hit ${id}`)]);
      await page.screenshot(shot("compare-flips.png"));

      // A later turn of a conversation when one flipped, to see the earlier turns shown.
      const id = [...lost, ...gained].find((x) => !x.endsWith("#0")) ?? lost[0] ?? gained[0]!;
      await page.click(`table.flips tbody tr[data-turn="${id}"]`);
      const ta = reportA.turns.find((t) => `${t.caseId}#${t.turn}` === id)!;
      const tb = inB.get(id)!;
      expect(await shownGoldRanks(page, '[data-panel="pair"] [data-run="a"]')).toEqual(expectedGoldRanks(ta));
      expect(await shownGoldRanks(page, '[data-panel="pair"] [data-run="b"]')).toEqual(expectedGoldRanks(tb));
      for (const [side, r, t] of [
        ["a", reportA, ta],
        ["b", reportB, tb],
      ] as const) {
        const earlier = r.turns.filter((p) => p.caseId === t.caseId && p.turn < t.turn);
        const msgs = await page.evalAll(`[data-panel="pair"] [data-run="${side}"] .convo .msg`, (ms) =>
          ms.map((m) => m.textContent),
        );
        expect(msgs).toEqual([
          ...earlier.flatMap((p) => [
            `${p.caseId}#${p.turn} user${p.user}`,
            `agent${p.refused ? `(refused) ${p.answer}` : p.answer}`,
          ]),
          `${t.caseId}#${t.turn} user${t.user}`,
        ]);
      }
      await page.screenshot(shot("compare-turn.png"));
      expect((await stat(shot("compare-turn.png"))).size).toBeGreaterThan(10_000);
      expect(page.events).toEqual([]);
      await page.close();
    });

    it("lists the turns whose hit@k held but recall@k or nDCG@k moved by ≥ 0.2, biggest drop first, each opening both turn views", async () => {
      // The rule of docs/html-report.md, restated on the JSON.
      const inB = new Map(reportB.turns.map((t) => [`${t.caseId}#${t.turn}`, t]));
      const expected = reportA.turns
        .map((t, i) => {
          const u = inB.get(`${t.caseId}#${t.turn}`);
          const sc = (x: TurnReport, k: string) => score(x, `retrieval_${k}_at_k`);
          if (u === undefined || sc(t, "hit") === undefined || sc(t, "hit") !== sc(u, "hit")) return null;
          const [ra, rb, na, nb] = [sc(t, "recall"), sc(u, "recall"), sc(t, "ndcg"), sc(u, "ndcg")];
          if (ra === undefined || rb === undefined || na === undefined || nb === undefined) return null;
          const [dr, dn] = [rb - ra, nb - na];
          if (Math.abs(dr) < 0.2 - 1e-9 && Math.abs(dn) < 0.2 - 1e-9) return null;
          return {
            id: `${t.caseId}#${t.turn}`,
            i,
            u,
            big: Math.abs(dn) > Math.abs(dr) ? dn : dr,
            recall: dr,
            ndcg: dn,
          };
        })
        .filter((x) => x !== null)
        .sort((x, y) => x.big - y.big || x.i - y.i);
      expect(expected.length).toBeGreaterThan(0);
      const signed = (d: number) => `${d >= 0 ? "+" : "−"}${Math.abs(d).toFixed(3)}`;
      const page = await open("diff.html");
      await page.click('button[data-tab="flips"]');
      const rows = await page.evalAll("table.shifts tbody tr", (trs) =>
        trs.map((tr) => [
          tr.getAttribute("data-turn"),
          tr.querySelector('[data-delta="recall"]')?.textContent,
          tr.querySelector('[data-delta="ndcg"]')?.textContent,
        ]),
      );
      expect(rows).toEqual(expected.map((x) => [x.id, signed(x.recall), signed(x.ndcg)]));
      const first = expected[0]!;
      await page.click(`table.shifts tbody tr[data-turn="${first.id}"]`);
      expect(await shownGoldRanks(page, '[data-panel="pair"] [data-run="a"]')).toEqual(
        expectedGoldRanks(reportA.turns[first.i]!),
      );
      expect(await shownGoldRanks(page, '[data-panel="pair"] [data-run="b"]')).toEqual(expectedGoldRanks(first.u));
      expect(page.events).toEqual([]);
      await page.close();
    });
  });
});
