/**
 * Compute once, render many (docs/html-report.md, "Every figure comes from
 * the report"): one run of the shipped KB (memory store) is rendered by the
 * real bin as the terminal table, the report JSON and the HTML page; the page
 * is opened in Debian's Chromium and every interval, p-value, verdict and
 * test name it shows in the DOM is checked against both other renderings.
 * Then two such runs (hybrid and BM25-only) are compared: the compare page's
 * figures, test names and flips against `retrace compare`'s text and JSON.
 *
 * The expected strings are the terminal's own text and the JSON's numbers
 * formatted here (three decimals, U+2212 for minus, `<0.001`); none comes
 * from the code that draws the page.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Report } from "../../src/eval/report/types.js";
import { BROWSERS, launchDriver, type BrowserDriver, type BrowserPage } from "../helpers/browser.js";
import { tempDir } from "../helpers/chroma.js";
import { runCli } from "../helpers/cli.js";

/** The turn-position groups' labels, numbered from #0 as the caseId#N keys (written out here, not read from the code). */
const POSITION_LABEL: Record<string, string> = { "1": "turn #0", "2": "turn #1", "3": "turn #2", "4+": "turn #3+" };

const CHROMIUM = BROWSERS.find((b) => b.name === "chromium")!;
if (CHROMIUM.skipReason !== null) process.stderr.write(`${CHROMIUM.skipReason}\n`);

// The JSON's numbers as every rendering prints them.
const f3 = (x: number) => x.toFixed(3);
const signed = (x: number) => `${x >= 0 ? "+" : "\u2212"}${Math.abs(x).toFixed(3)}`;
const fmtP = (p: number) => (p < 0.001 ? "<0.001" : p.toFixed(3));
const ci = (c: readonly number[] | null | undefined) =>
  c === undefined || c === null ? null : `[${f3(c[0]!)}, ${f3(c[1]!)}]`;
const signedCi = (c: readonly number[] | null | undefined) =>
  c === undefined || c === null ? null : `[${signed(c[0]!)}, ${signed(c[1]!)}]`;

let dir: string;
let cleanup: () => Promise<void>;
let driver: BrowserDriver;
let report: Report;
let terminal: string;

/** `retrace eval` on the shipped KB, in memory; stdout unwrapped (runCli sets RETRACE_WIDTH=0). */
async function evalRun(name: string, extra: string[]): Promise<{ report: Report; stdout: string }> {
  const r = await runCli([
    "eval",
    "--store",
    "memory",
    "--out",
    `json:${path.join(dir, `${name}.json`)}`,
    "--out",
    `html:${path.join(dir, `${name}.html`)}`,
    "--verbose", // every table the page is compared with (the first screen folds them)
    ...extra,
  ]);
  expect(r.stderr).not.toMatch(/unexpected error/);
  expect(r.exitCode).toBe(0);
  return { report: JSON.parse(await readFile(path.join(dir, `${name}.json`), "utf8")) as Report, stdout: r.stdout };
}

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir("once"));
  if (CHROMIUM.skipReason !== null) return;
  // Seed 7: with it the shipped KB's demo run has split deltas whose unadjusted p is below 0.05 and which Holm does
  // not pass (recall@5 pt-BR p 0.014, adjusted 0.054), the case a page without the Holm step gets wrong; the default
  // seed's run lost them when the LSA default changed (issue 37). The last assertion of "split deltas" checks it.
  ({ report, stdout: terminal } = await evalRun("a", ["--config", '{"run":{"seed":7}}']));
  driver = await launchDriver(CHROMIUM);
}, 180_000);

afterAll(async () => {
  await driver?.close();
  await cleanup();
});

/** The terminal's grid under the header row starting with `metric` whose columns are headed `columns`: row label → key (`keys`, default the headers) → cell text. */
function terminalGrid(
  text: string,
  columns: readonly string[],
  keys: readonly string[] = columns,
): Map<string, Map<string, string>> {
  const lines = text.split("\n");
  const cols = (l: string) => l.split(/ {2,}/).map((c) => c.trim());
  const start = lines.findIndex((l) => {
    const c = cols(l);
    return (
      c[0]!.startsWith("metric") &&
      c
        .slice(1)
        .map((h) => h.replace(/ \(fitted on\)$/, ""))
        .join("|") === columns.join("|")
    );
  });
  expect(start, `a terminal grid with columns ${columns.join(", ")}`).toBeGreaterThanOrEqual(0);
  const out = new Map<string, Map<string, string>>();
  for (const l of lines.slice(start + 1)) {
    if (l.trim() === "") break;
    const c = cols(l);
    out.set(c[0]!.replace(/ \(held-out\)$/, ""), new Map(keys.map((h, i) => [h, c[i + 1]!])));
  }
  return out;
}

describe.skipIf(CHROMIUM.skipReason !== null)(
  "one report: the HTML page, the terminal and the JSON say the same",
  () => {
    let page: BrowserPage;
    beforeAll(async () => {
      page = await driver.open(path.join(dir, "a.html"));
    });
    afterAll(async () => page?.close());

    it("split deltas: the same test name, intervals, raw and Holm-adjusted p, family size and verdict", async () => {
      const deltas = report.deltas ?? [];
      expect(deltas.length).toBeGreaterThan(0);
      // The test and correction the report names, in the terminal's heading and the page's.
      const heading = /^split deltas \((.*)\):$/m.exec(terminal)?.[1];
      expect(heading).toContain(report.bootstrap!.test!);
      expect(heading).toContain(report.bootstrap!.correction!);
      expect(await page.text('[data-field="delta-method"]')).toBe(`Split deltas (${heading})`);

      const termLines = terminal.split("\n").filter((l) => /^ {2}\S.* CI \[.*\] p=\S+ adj=\S+ m=\d+ /.test(l));
      expect(termLines).toHaveLength(deltas.length);
      const rows = await page.evalAll("table.deltas tbody tr", (trs) =>
        trs.map((tr) => ({
          id: tr.getAttribute("data-delta"),
          ...Object.fromEntries(
            ["diff", "ci", "p", "p-adjusted", "family", "verdict"].map((f) => [
              f,
              tr.querySelector(`[data-field="${f}"]`)?.textContent ?? null,
            ]),
          ),
        })),
      );
      expect(rows).toHaveLength(deltas.length);
      deltas.forEach((d, i) => {
        const row = rows[i] as Record<string, string | null>;
        expect(row.id).toBe(`${d.key}:${d.split}:${d.group}`);
        // JSON → HTML
        expect(row.diff).toBe(signed(d.diff));
        expect(row.ci).toBe(signedCi(d.ci95) ?? "(no CI)");
        expect(row.p).toBe(fmtP(d.pValue));
        expect(row["p-adjusted"]).toBe(fmtP(d.pAdjusted!));
        expect(row.family).toBe(String(d.familySize));
        expect(row.verdict!.startsWith("significant")).toBe(d.significant);
        // Terminal → HTML: the same figures and the same verdict, word for word.
        const m = / ([+\u2212]\d\.\d{3}) vs .* CI (\[.*?\]) p=(\S+) adj=(\S+) m=(\d+) (.*)$/.exec(termLines[i]!);
        expect(m, termLines[i]).not.toBeNull();
        expect([m![1], m![2], m![3], m![4], m![5], m![6]]).toEqual([
          row.diff,
          row.ci,
          row.p,
          row["p-adjusted"],
          row.family,
          row.verdict,
        ]);
      });
      // The demo run has deltas whose unadjusted interval excludes 0 but which Holm does not pass: the page must not call them significant.
      expect(deltas.some((d) => d.pValue < 0.05 && d.significant === false)).toBe(true);
    });

    it("summary intervals: every cell of the overall, kind, locale, part and turn-position tables", async () => {
      const cells = await page.evalAll("table.summary td[data-key]", (tds) =>
        tds.map((td) => ({
          key: td.getAttribute("data-key")!,
          split: td.getAttribute("data-split")!,
          group: td.getAttribute("data-group")!,
          label: (td as unknown as { closest(s: string): { querySelector(s: string): { textContent: string } } })
            .closest("tr")
            .querySelector("th").textContent,
          mean: td.querySelector(".mean")?.textContent ?? null,
          ci: td.querySelector(".ci")?.textContent ?? null,
          n: td.querySelector(".n")?.textContent ?? null,
          extra: Array.from(td.querySelectorAll(".extra")).map((e) => e.textContent ?? ""),
        })),
      );
      expect(cells.length).toBeGreaterThan(0);
      const groupsOf = (split: string) =>
        split === "kind" ? ["all", ...Object.keys(report.splits.kind)] : Object.keys(report.splits[split] ?? {});
      // The terminal heads turn positions as the caseId#N keys number turns: group "1" is `turn #0`, "4+" is `turn #3+`.
      const headed = (split: string, g: string) =>
        split !== "position" ? g : g === "4+" ? "turn #3+" : `turn #${Number(g) - 1}`;
      const grids = new Map(
        ["kind", "locale", "part", "position"].map((s) => [
          s,
          terminalGrid(
            terminal,
            groupsOf(s).map((g) => headed(s, g)),
            groupsOf(s),
          ),
        ]),
      );
      let measured = 0;
      for (const c of cells) {
        const agg = c.split === "all" ? report.aggregates[c.key] : report.splits[c.split]?.[c.group]?.[c.key];
        if (agg === undefined) {
          expect(c.mean).toBeNull();
          continue;
        }
        measured++;
        expect([c.mean, c.ci, c.n]).toEqual([f3(agg.mean), ci(agg.ci95) ?? "(no CI)", `n=${agg.n}`]);
        const term = grids
          .get(c.split === "all" ? "kind" : c.split)!
          .get(c.label)
          ?.get(c.group);
        expect(term, `${c.label} ${c.split} ${c.group} in the terminal`).toBeDefined();
        expect(term!.startsWith(`${c.mean} ${c.ci} ${c.n}`)).toBe(true);
        // The case count and the chance level on the cell's line, worded as the terminal words them (no JSON field names).
        if (agg.nCases !== undefined) {
          expect(c.extra).toContain(`(${agg.nCases} cases)`);
          expect(term).toContain(`(${agg.nCases} cases)`);
        }
        if (agg.chance !== undefined) {
          expect(c.extra).toContain(`chance ${f3(agg.chance)}`);
          expect(term!.endsWith(`chance ${f3(agg.chance)}`)).toBe(true);
        }
        expect(c.extra.join(" ")).not.toMatch(/nCases/);
        expect(`${c.mean} ${c.ci} ${c.n}${c.extra.map((x) => ` ${x}`).join("")}`).toBe(term);
      }
      expect(measured).toBeGreaterThan(40);
      // How the intervals were resampled: the terminal's note, word for word.
      const note = /^note: (intervals: .*) turns are caseId#turn, turn 0-based\.$/m.exec(terminal)?.[1];
      expect(note).toContain(`seed ${report.bootstrap!.seed}`);
      expect(await page.text('[data-field="ci-method"]')).toBe(`${note} Turns are caseId#turn, turn 0-based.`);
    });

    it("each query's means over the attributed turns: the JSON's means, intervals and n; the terminal's row", async () => {
      const qa = report.queryAttribution!;
      const shown = await page.evalAll("table.querymeans tbody tr", (trs) =>
        trs.map((tr) => ({
          query: tr.getAttribute("data-query")!,
          label: tr.querySelector("th")?.textContent ?? "",
          cells: Array.from(tr.querySelectorAll("td[data-key]")).map((td) => ({
            key: td.getAttribute("data-key")!,
            mean: td.querySelector(".mean")?.textContent ?? null,
            ci: td.querySelector(".ci")?.textContent ?? null,
            n: td.querySelector(".n")?.textContent ?? null,
          })),
        })),
      );
      expect(shown.map((r) => r.query)).toEqual(Object.keys(qa.means));
      const lines = terminal.split("\n");
      const head = lines.findIndex((l) => l.startsWith("each query's means over the attributed turns:"));
      expect(head).toBeGreaterThanOrEqual(0);
      for (const r of shown) {
        for (const c of r.cells) {
          const m = qa.means[r.query]![c.key]!;
          expect([c.mean, c.ci, c.n]).toEqual([f3(m.mean), ci(m.ci95) ?? "(no CI)", `n=${m.n}`]);
        }
        const row = lines
          .slice(head + 2)
          .find((l) => l.startsWith(`${r.label}  `))!
          .split(/ {2,}/);
        const hit = r.cells.find((c) => c.key === "retrieval_hit_at_k")!;
        expect(row[1]).toBe(hit.n!.slice(2));
        expect(row.slice(2, -1)).toEqual(r.cells.map((c) => c.mean));
        expect(row.at(-1)).toBe(hit.ci);
      }
    });

    it("stage funnel intervals: every split the page offers, as the report computed them; turn positions as the terminal prints them", async () => {
      const f = report.funnel!;
      await page.click('button[data-tab="funnel"]');
      const offered = await page.evalAll('select[name="funnel-split"] option', (os) =>
        os.map((o) => o.getAttribute("value")!),
      );
      expect(offered).toEqual(Object.keys(f.splits));
      const term = terminalGrid(terminal.replace(/^stage( +)gold still present \(all\)/m, "metric$1all"), [
        "all",
        ...Object.keys(f.splits.position ?? {}).map((g) => POSITION_LABEL[g]!),
      ]);
      for (const split of offered) {
        await page.select('select[name="funnel-split"]', split);
        const shown = await page.evalAll('[data-panel="funnel"] table.funnelstats td[data-funnel-stat]', (tds) =>
          tds.map((td) => [
            td.getAttribute("data-funnel-stat")!,
            td.querySelector(".mean")?.textContent ?? null,
            td.querySelector(".ci")?.textContent ?? null,
            td.querySelector(".n")?.textContent ?? null,
          ]),
        );
        expect(shown.length).toBeGreaterThan(0);
        for (const [id, mean, interval, n] of shown) {
          const [group, stage] = id!.split(":") as [string, string];
          const row = (group === "all" ? f.stages : f.splits[split]![group])?.find((s) => s.stage === stage);
          if (row === undefined) {
            expect(mean).toBeNull();
            continue;
          }
          expect([mean, interval, n]).toEqual([f3(row.share), ci(row.ci95) ?? "(no CI)", `n=${row.n}`]);
          if (split === "position")
            expect(term.get(row.label)?.get(group === "all" ? "all" : POSITION_LABEL[group]!)).toBe(
              `${mean} ${interval} ${n}`,
            );
        }
      }
      // The counts table is the same funnel (present of n), overall and per locale: no second computation.
      const counts = await page.evalAll('[data-panel="funnel"] table.funnel td[data-funnel]', (tds) =>
        tds.map((td) => [
          td.getAttribute("data-funnel")!,
          td.querySelector(".mean")?.textContent ?? null,
          td.querySelector(".ci")?.textContent ?? null,
        ]),
      );
      expect(counts.length).toBe(f.stages.length * (1 + Object.keys(f.splits.locale ?? {}).length));
      for (const [id, present, of] of counts) {
        const [group, stage] = id!.split(":") as [string, string];
        const row = (group === "all" ? f.stages : f.splits.locale![group])!.find((s) => s.stage === stage)!;
        expect([present, of]).toEqual([String(row.present), `of ${row.n} (${(100 * row.share).toFixed(1)}%)`]);
      }
    });

    it("shows no raw-JSON box for a section the page knows; names the schema version", async () => {
      expect(
        await page.evalAll("details[data-section]", (ds) => ds.map((d) => d.getAttribute("data-section"))),
      ).toEqual([]);
      expect(await page.text('[data-field="schema-version"]')).toBe(`report schemaVersion ${report.schemaVersion}`);
      expect(await page.text('[data-section="chance"]')).toContain(
        Object.entries(report.chance!.cardsPerLocale)
          .map(([l, n]) => `${l} ${n}`)
          .join(", "),
      );
      for (const w of report.chance!.warnings) expect(terminal).toContain(`warning: ${w}`);
      expect(await page.evalAll('[data-field="chance-warnings"] li', (lis) => lis.map((li) => li.textContent))).toEqual(
        report.chance!.warnings.map((w) => `warning: ${w}`),
      );
      const side = /^note: (answer-side rows .*)$/m.exec(terminal)?.[1];
      expect(side).toContain(`${report.answerSide!.turns.holdout} of`);
      expect(await page.text('[data-section="answerSide"]')).toBe(side);
      expect(page.events).toEqual([]);
    });
  },
);

describe.skipIf(CHROMIUM.skipReason !== null)(
  "the compare page, retrace compare's text and its JSON say the same",
  () => {
    let page: BrowserPage;
    let text: string;
    let json: {
      method: { test: string; correction: string; unit: string; seed: number; samples: number };
      comparisons: {
        key: string;
        ci95: [number, number] | null;
        pValue: number;
        pAdjusted: number;
        familySize: number;
        significant: boolean;
        diff: number;
        unit: string;
      }[];
      funnels: {
        a: { stage: string; share: number; ci95?: [number, number]; n: number }[];
        b: { stage: string; share: number; ci95?: [number, number]; n: number }[];
        diff: {
          stage: string;
          label: string;
          diff: number;
          ci95: [number, number] | null;
          pValue: number;
          n: number;
        }[];
      };
      flips: { hitToMiss: number; missToHit: number; turns: { id: string; direction: string }[] };
      moved: {
        threshold: number;
        turns: { id: string; hit: number; recall: number; ndcg: number; largest: number; change: string }[];
      };
    };
    beforeAll(async () => {
      await evalRun("b", ["--config", '{"retrieval":{"mode":"bm25"},"run":{"seed":7}}']);
      const [a, b] = [path.join(dir, "a.json"), path.join(dir, "b.json")];
      const t = await runCli([
        "compare",
        a,
        b,
        "--out",
        `html:${path.join(dir, "c.html")}`,
        "--out",
        `pr-comment:${path.join(dir, "pr.md")}`,
      ]);
      expect(t.exitCode).toBe(0);
      text = t.stdout;
      const j = await runCli(["compare", a, b, "--json"]);
      expect(j.exitCode).toBe(0);
      json = JSON.parse(j.stdout) as typeof json;
      page = await driver.open(path.join(dir, "c.html"));
    }, 180_000);
    afterAll(async () => page?.close());

    it("per metric: the paired bootstrap's interval, p, adjusted p, verdict; the test named as the text names it", async () => {
      expect(json.method.test).toMatch(/paired/);
      const notes = await page.evalAll('[data-field="comparison-method"]', (ps) => ps.map((p) => p.textContent));
      expect(notes).toHaveLength(2);
      for (const n of notes) expect(text.split("\n")).toContain(n);
      expect(notes[0]).toContain(json.method.test);
      expect(notes[1]).toContain(json.method.correction);
      const rows = await page.evalAll("table.comparison tbody tr", (trs) =>
        trs.map((tr) => [
          tr.getAttribute("data-key"),
          ...["ci", "p", "p-adjusted", "verdict"].map(
            (f) => tr.querySelector(`[data-field="${f}"]`)?.textContent ?? null,
          ),
        ]),
      );
      expect(rows.map((r) => r[0])).toEqual(json.comparisons.map((c) => c.key));
      const textRows = text.split("\n").filter((l) => / \(\d+\) {2}( *significant| *not significant)$/.test(l));
      expect(textRows).toHaveLength(json.comparisons.length);
      json.comparisons.forEach((c, i) => {
        const [, interval, p, adj, verdict] = rows[i]!;
        expect([interval, p, adj, verdict]).toEqual([
          signedCi(c.ci95) ?? `(< 2 ${c.unit}s)`,
          fmtP(c.pValue),
          `${fmtP(c.pAdjusted)} (${c.familySize})`,
          c.significant ? "significant" : "not significant",
        ]);
        expect(textRows[i]).toMatch(
          new RegExp(`  ${escape(interval!)}  +${escape(p!)}  +${escape(adj!)}  +${verdict}$`),
        );
      });
    });

    it("the PR comment of the same comparison: the same intervals, p-values, verdicts and test name", async () => {
      const pr = await readFile(path.join(dir, "pr.md"), "utf8");
      const rows = pr
        .split("\n")
        .filter(
          (l) =>
            l.startsWith("| ") && !l.startsWith("| metric") && /\| [<\d.]+ \| (not )?significant \| \d+ \|$/.test(l),
        );
      expect(rows).toHaveLength(json.comparisons.length);
      json.comparisons.forEach((c, i) => {
        const cells = rows[i]!.split(" | ");
        const bold = c.significant ? "**" : "";
        expect(cells.slice(3, 7)).toEqual([
          `${bold}${signed(c.diff)}${bold}`,
          signedCi(c.ci95) ?? `(< 2 ${c.unit}s)`,
          fmtP(c.pValue),
          c.significant ? "significant" : "not significant",
        ]);
      });
      expect(pr).toContain(json.method.test);
      expect(pr).toContain(
        `resampling unit: ${json.method.unit}, ${json.method.samples} resamples, seed ${json.method.seed}`,
      );
    });

    it("stage funnels and their paired differences; the flipped turns", async () => {
      const note = await page.text('[data-field="funnel-compare-method"]');
      expect(note).toContain(json.method.test);
      expect(note).toContain(`seed ${json.method.seed}`);
      const rows = await page.evalAll("table.funnelcompare tbody tr", (trs) =>
        trs.map((tr) => [
          tr.getAttribute("data-stage"),
          ...["a", "b"].map((s) => tr.querySelector(`[data-side="${s}"]`)?.textContent ?? null),
          ...["n", "ci", "p"].map((f) => tr.querySelector(`[data-field="${f}"]`)?.textContent ?? null),
          tr.querySelector('[data-side="diff"]')?.textContent ?? null,
        ]),
      );
      expect(rows.map((r) => r[0])).toEqual(json.funnels.diff.map((d) => d.stage));
      const side = (rs: typeof json.funnels.a, stage: string) => {
        const r = rs.find((x) => x.stage === stage)!;
        return {
          html: `${f3(r.share)}${ci(r.ci95) ?? "(no CI)"}n=${r.n}`,
          text: `${f3(r.share)} ${ci(r.ci95) ?? "[—]"} n=${r.n}`,
        };
      };
      json.funnels.diff.forEach((d, i) => {
        const [, a, b, n, interval, p, diff] = rows[i]!;
        expect([a, b, n, interval, p, diff]).toEqual([
          side(json.funnels.a, d.stage).html,
          side(json.funnels.b, d.stage).html,
          String(d.n),
          signedCi(d.ci95) ?? "(n < 2)",
          fmtP(d.pValue),
          signed(d.diff),
        ]);
        const line = text.split("\n").find((l) => l.startsWith(`${d.label}  `));
        expect(line, d.label).toBeDefined();
        expect(line!.split(/ {2,}/).slice(1)).toEqual([
          side(json.funnels.a, d.stage).text,
          side(json.funnels.b, d.stage).text,
          n,
          diff,
          interval,
          p,
        ]);
      });
      const flips = await page.evalAll("table.flips tbody tr", (trs) =>
        trs.map((tr) => [tr.getAttribute("data-turn"), tr.getAttribute("data-direction")]),
      );
      expect(flips).toEqual(json.flips.turns.map((f) => [f.id, f.direction]));
      expect(flips.length).toBeGreaterThan(0);
      expect(page.events).toEqual([]);
    });

    it("the moved turns and flips: the same turns, changes and order on the page, in the terminal and in the PR comment", async () => {
      const moved = json.moved.turns;
      expect(moved.length).toBeGreaterThan(0);
      // Ordered by the larger change, biggest drop first (the JSON's own order, checked here from its numbers).
      const larger = moved.map((m) => (Math.abs(m.ndcg) > Math.abs(m.recall) ? m.ndcg : m.recall));
      expect(moved.map((m) => m.largest)).toEqual(larger);
      expect([...larger].sort((x, y) => x - y)).toEqual(larger);
      // The page: one row per moved turn, in order, with both changes as the JSON has them.
      const rows = await page.evalAll("table.shifts tbody tr", (trs) =>
        trs.map((tr) => [
          tr.getAttribute("data-turn"),
          tr.querySelector('[data-delta="recall"]')?.textContent ?? null,
          tr.querySelector('[data-delta="ndcg"]')?.textContent ?? null,
        ]),
      );
      expect(rows).toEqual(moved.map((m) => [m.id, signed(m.recall), signed(m.ndcg)]));
      // The terminal: the same turns in the same order (the first 50), each with the same two changes.
      const lines = text.split("\n");
      const at = lines.findIndex((l) => l.startsWith("turns that moved"));
      expect(lines[at]).toContain(`: ${moved.length}, biggest drop first`);
      const termRows = lines.slice(at + 1, at + 1 + Math.min(50, moved.length));
      expect(termRows.map((l) => l.trim().split(/\s+/)[0])).toEqual(moved.slice(0, 50).map((m) => m.id));
      termRows.forEach((l, i) =>
        expect(l).toContain(`Δ recall ${signed(moved[i]!.recall)}  Δ nDCG ${signed(moved[i]!.ndcg)}`),
      );
      // The PR comment: the same turns in the same order (its first 10), each row's changes.
      const pr = (await readFile(path.join(dir, "pr.md"), "utf8")).split("\n");
      const prAt = pr.findIndex((l) => l.startsWith("### Turns that moved"));
      expect(prAt).toBeGreaterThan(0);
      const prRows = pr.slice(prAt + 4).filter((l, i, all) => all.slice(0, i + 1).every((x) => x.startsWith("| `")));
      expect(prRows.length).toBe(Math.min(10, moved.length));
      prRows.forEach((l, i) => {
        const m = moved[i]!;
        expect(l).toMatch(
          new RegExp(
            `^\\| \`${escape(m.id)}\` \\| .* \\| ${m.hit} \\| ${escape(signed(m.recall))} \\| ${escape(signed(m.ndcg))} \\|$`,
          ),
        );
      });
      // Flips: the same counts both ways in the terminal and the PR comment, the same turns in the same order.
      const counts = `${json.flips.hitToMiss} hit→miss, ${json.flips.missToHit} miss→hit`;
      expect(text).toContain(`flips: ${counts}`);
      expect(pr.join("\n")).toContain(`flips: ${counts}`);
      const prFlips = pr.filter((l) => l.startsWith("- `")).map((l) => /^- `([^`]+)`/.exec(l)![1]);
      const way = (d: string) =>
        json.flips.turns
          .filter((f) => f.direction === d)
          .slice(0, 20)
          .map((f) => f.id);
      expect(prFlips).toEqual([...way("hit→miss"), ...way("miss→hit")]);
      // Each moved turn opens headed by the comparison's word for its change.
      const first = moved[0]!;
      await page.click('button[data-tab="flips"]');
      await page.click(`table.shifts tbody tr[data-turn="${first.id}"]`);
      expect(await page.text('[data-panel="pair"] h2')).toBe(
        `${first.id}  ${first.change} (recall ${signed(first.recall)}, nDCG ${signed(first.ndcg)})`,
      );
      expect(page.events).toEqual([]);
    });
  },
);

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
