/**
 * The script of the report and compare pages (docs/html-report.md), bundled
 * into their one inline script by scripts/build-browser.ts
 * (../client-bundle.generated.ts; the CSP pins its SHA-256). It unpacks the
 * page's data (../page-data.ts) and lays out what the report holds: every
 * number, interval, p and verdict comes from the data, worded by the server
 * side (../report-page.ts); the page tests and computes nothing itself.
 */
import { DELTA_COLUMNS } from "../../columns.js";
import { positionLabel, positionNote } from "../../positions.js";
import type { Aggregate, FunnelStage, TurnReport } from "../../types.js";
import type { FunnelStageDiff } from "../../funnel-stats.js";
import type { ComparePageData, PageData, PageFlip } from "../page-data.js";
import type { RunPageData } from "../report-page.js";
import { byId, el, startPage, svg } from "./dom.js";

type Run = RunPageData;
type Turn = TurnReport;
type Captured = NonNullable<TurnReport["captured"]>;
type CapturedList = Captured["stages"][number];
type Interval = readonly [number, number] | null | undefined;
/** A column of a summary table: group name, its aggregates (key → aggregate), and the split it belongs to. */
type Group = [string, Record<string, Aggregate | undefined> | undefined, string];

let DATA: PageData; // set by start() once the embedded data is unpacked
// The metric registry's keys (src/eval/measures/metrics.ts) and the stage registry (src/eval/report/stages.ts),
// from DATA.registry: set by start().
let HIT: string, RECALL: string, NDCG: string, TRIAD: string[];
let STAGE_LABEL: Record<string, string>, STAGE_COLOR: Record<string, string>, TRACE_STAGES: string[];
// The query attribution's labels and the three queries' names (src/eval/report/query-attribution.ts).
let ATTR_ORDER: string[], ATTR_LABEL: Record<string, string>, QUERY_ORDER: string[], QUERY_SIDE: string[];
let QUERY_LABEL: Record<string, string>, QUERY_UNATTRIBUTED: Record<string, string>;

// ------------------------------------------------------------ formatting
function f3(x: number): string {
  return x.toFixed(3);
}
function signed(x: number): string {
  return (x >= 0 ? "+" : "\u2212") + Math.abs(x).toFixed(3);
}
function fmtP(p: number): string {
  return p < 0.001 ? "<0.001" : p.toFixed(3);
}
function turnId(t: Turn): string {
  return t.caseId + "#" + t.turn;
}
function score(t: Turn, key: string): number | undefined {
  for (const r of t.results) if (r.key === key) return r.score;
  return undefined;
}
function outcome(t: Turn): string {
  if (t.error !== undefined) return "error";
  const h = score(t, HIT);
  if (h === 0) return "miss";
  if (h === 1) return "hit";
  return t.gold.length === 0 ? "no gold" : "not measured";
}
// A --graph turn that made no retriever run says so wherever its outcome shows (a gold-bearing one is a miss).
// Unknown ids (naming no card of the KB or catalog) are counted there too.
function outcomeText(t: Turn): string {
  const u = t.captured && t.captured.unknownIds ? t.captured.unknownIds.length : 0;
  return (
    outcome(t) +
    (t.noRetrieval ? " \u00b7 no retrieval" : "") +
    (u > 0 ? " \u00b7 " + u + " unknown id" + (u === 1 ? "" : "s") : "")
  );
}
// The lists of a turn captured from a user's graph's retriever runs (--graph), or null (retrace's own trace).
function capturedOf(t: Turn): Captured | null {
  return t.captured && t.captured.source === "callbacks" ? t.captured : null;
}
function label(run: Run, key: string): string {
  return run.labels[key] || key;
}
// The ids the turn's retrieval scored (its top-k, in rank order), or a dash when it has no trace.
function topKText(t: Turn): string {
  return t.trace ? (t.trace.retrievedIds.length === 0 ? "(none)" : t.trace.retrievedIds.join(", ")) : "\u2014";
}
function rankText(v: number | null | undefined): string {
  return v === null || v === undefined ? "\u2014" : String(v);
}
function ciText(c: Interval): string {
  return c ? "[" + f3(c[0]) + ", " + f3(c[1]) + "]" : "(no CI)";
}
function groupLabel(split: string, g: string): string {
  return split === "position" ? positionLabel(g) : g;
}
function ths(heads: readonly string[]): HTMLTableCellElement[] {
  return heads.map((h) => el("th", { text: h }));
}

// ------------------------------------------------------------ summary
function aggCell(
  run: Run,
  agg: Aggregate | undefined,
  key: string,
  split: string,
  group: string,
): HTMLTableCellElement {
  const td = el("td", { "data-key": key, "data-split": split, "data-group": group, cls: "num" });
  const r = run.report;
  if (r.vacuous.indexOf(key) >= 0) {
    td.appendChild(el("span", { cls: "vac", text: run.vacuousText[key] || "not measured" }));
    td.className = "";
    return td;
  }
  if (!agg) {
    td.appendChild(el("span", { cls: "muted", text: "\u2014 n=0" }));
    return td;
  }
  td.appendChild(el("span", { cls: "mean", text: f3(agg.mean) }));
  td.appendChild(el("span", { cls: "ci", text: ciText(agg.ci95) }));
  td.appendChild(el("span", { cls: "n", text: "n=" + agg.n }));
  // The case count and the chance level, worded as the terminal words them (docs/html-report.md): one line with the mean.
  if (agg.nCases !== undefined)
    td.appendChild(el("span", { cls: "extra", "data-field": "cases", text: "(" + agg.nCases + " cases)" }));
  if (agg.chance !== undefined)
    td.appendChild(el("span", { cls: "extra", "data-field": "chance", text: "chance " + f3(agg.chance) }));
  return td;
}
function splitTable(run: Run, split: string, groups: readonly Group[]): HTMLTableElement {
  const head = el("tr", null, [
    el("th", { text: "metric" }),
    ...groups.map((g) => el("th", { cls: "num", text: groupLabel(split, g[0]) })),
  ]);
  const body = el("tbody");
  run.keys.forEach((key) => {
    body.appendChild(
      el("tr", null, [
        el("th", { text: label(run, key) }),
        ...groups.map((g) => aggCell(run, g[1] ? g[1][key] : undefined, key, g[2], g[0])),
      ]),
    );
  });
  return el("table", { cls: "summary", "data-split": split }, [el("thead", null, [head]), body]);
}
function chart(run: Run, key: string): HTMLDivElement {
  const r = run.report;
  const byLocale = r.splits.locale ?? {};
  const locs = hiddenTable(run, "locale") ? [] : Object.keys(byLocale);
  const rows = ([["all", r.aggregates[key]]] as [string, Aggregate | undefined][])
    .concat(locs.map((l): [string, Aggregate | undefined] => [l, byLocale[l]?.[key]]))
    .filter((x): x is [string, Aggregate] => x[1] !== undefined);
  const W = 360,
    L = 70,
    R = 110,
    rowH = 24,
    top = 6,
    H = top + rows.length * rowH + 22;
  const s = svg("svg", { width: W, height: H, viewBox: "0 0 " + W + " " + H, role: "img", "data-chart": key });
  s.appendChild(svg("title", {}, label(run, key) + " by locale, mean with 95% interval"));
  const x = (v: number): number => L + v * (W - L - R);
  [0, 0.25, 0.5, 0.75, 1].forEach((t) => {
    s.appendChild(svg("line", { x1: x(t), x2: x(t), y1: top, y2: H - 18, class: "grid" }));
    s.appendChild(svg("text", { x: x(t), y: H - 5, "text-anchor": "middle" }, t.toFixed(2)));
  });
  rows.forEach((row, i) => {
    const y = top + i * rowH + rowH / 2,
      a = row[1];
    s.appendChild(svg("text", { x: 4, y: y + 4 }, row[0]));
    if (a.ci95) s.appendChild(svg("line", { x1: x(a.ci95[0]), x2: x(a.ci95[1]), y1: y, y2: y, class: "ci" }));
    s.appendChild(svg("circle", { cx: x(a.mean), cy: y, r: 4, class: "dot" }));
    s.appendChild(svg("text", { x: W - R + 8, y: y + 4 }, f3(a.mean) + "  n=" + a.n));
  });
  return el("div", { cls: "chart" }, [
    el("div", { cls: "title", text: label(run, key) + (locs.length > 0 ? " by locale" : "") + " (95% interval)" }),
    s,
  ]);
}
function gateBlock(r: Run["report"]): HTMLElement {
  const g = r.gate;
  if (!g)
    return el("p", {
      text: r.shard
        ? "gate: not evaluated (partial report of shard " +
          r.shard.index +
          "/" +
          r.shard.count +
          "; the merged report gates)"
        : "gate: not evaluated",
    });
  // With --repeat, how baseline drops were tested (a one-sided interval test, docs/statistics.md), as the table and markdown say it.
  const dropTest = g.dropTest
    ? el("p", { cls: "note", "data-field": "drop-test", text: "baseline drop test: " + g.dropTest.description })
    : null;
  if (g.passed) return el("div", null, [el("p", null, ["gate: ", el("span", { cls: "hit", text: "PASS" })]), dropTest]);
  return el("div", null, [
    el("p", null, ["gate: ", el("span", { cls: "miss", text: "FAIL" })]),
    el(
      "ul",
      null,
      g.failures.map((f) => el("li", { text: "[" + f.kind + "] " + f.reason })),
    ),
    dropTest,
  ]);
}
const KNOWN_TOP = [
  "schemaVersion",
  "version",
  "run",
  "aggregates",
  "splits",
  "vacuous",
  "vacuousReasons",
  "turns",
  "gate",
  "deltas",
  "bootstrap",
  "judge",
  "judgments",
  "queryAttribution",
  "funnel",
  "recallCurves",
  "chance",
  "answerSide",
  "timings",
  "measuresNotComputed",
];
// The summary's columns and tables that repeat another (run.summaryRepeats, src/eval/report/html/report-page.ts): not drawn.
function repeats(run: Run): Run["summaryRepeats"] {
  return run.summaryRepeats || [];
}
function hiddenTable(run: Run, split: string): boolean {
  return repeats(run).some((x) => x.split === split && x.group === null);
}
function hiddenGroup(run: Run, split: string, g: string): boolean {
  return repeats(run).some((x) => x.split === split && x.group === g);
}
// The missed turns, in dataset order, each opening its turn view (the Summary tab leads with them).
function missedBlock(run: Run, openTurn: (i: number) => void): HTMLDivElement {
  const r = run.report,
    box = el("div", { "data-section": "missed" });
  const missed: number[] = [];
  r.turns.forEach((t, i) => {
    if (outcome(t) === "miss") missed.push(i);
  });
  box.appendChild(
    el("h2", { text: "Missed turns (" + missed.length + " of " + run.goldBearingCount + " gold-bearing)" }),
  );
  if (missed.length === 0) {
    box.appendChild(el("p", { cls: "muted", text: "No turn missed its gold." }));
    return box;
  }
  const tb = el(
    "tbody",
    null,
    missed.map((i) => {
      const t = turnAt(run, i),
        b = el("button", { type: "button", cls: "link", text: turnId(t) });
      b.addEventListener("click", () => {
        openTurn(i);
      });
      return el("tr", { "data-turn": turnId(t), "data-i": i }, [
        el("td", null, [b]),
        el("td", { text: t.locale }),
        el("td", { text: t.kind }),
        el("td", { cls: "miss", text: outcomeText(t) }),
        el("td", { text: t.gold.join(", ") }),
        el("td", { "data-field": "topk", text: topKText(t) }),
        el("td", { text: t.user }),
      ]);
    }),
  );
  box.appendChild(
    el("table", { cls: "missed" }, [
      el("thead", null, [
        el("tr", null, ths(["turn", "locale", "kind", "outcome", "gold", "top-" + r.run.k, "user text"])),
      ]),
      tb,
    ]),
  );
  return box;
}
function turnAt(run: Run, i: number): Turn {
  const t = run.report.turns[i];
  if (t === undefined) throw new Error("no turn " + i);
  return t;
}
function summaryPanel(run: Run, compact: boolean, openTurn?: (i: number) => void): HTMLDivElement {
  const r = run.report,
    box = el("div", { cls: "summary-block" });
  if (!compact) {
    if (openTurn) box.appendChild(missedBlock(run, openTurn));
    const triad = TRIAD.filter((k) => r.aggregates[k] && r.vacuous.indexOf(k) < 0);
    if (triad.length > 0) {
      box.appendChild(el("h3", { text: hiddenTable(run, "locale") ? "Triad (95% interval)" : "Triad by locale" }));
      box.appendChild(
        el(
          "div",
          { cls: "charts" },
          triad.map((k) => chart(run, k)),
        ),
      );
    }
  }
  const splitsOf = r.splits as Record<string, Record<string, Record<string, Aggregate | undefined>> | undefined>;
  // The report page shows the turn-position split in its Conversation tab; the compare page's compact summaries keep it here.
  const splits = Object.keys(splitsOf).filter((split) => (compact || split !== "position") && !hiddenTable(run, split));
  splits.forEach((split) => {
    const of = splitsOf[split] ?? {};
    const groups = Object.keys(of)
      .filter((g) => !hiddenGroup(run, split, g))
      .map((g): Group => [g, of[g], split]);
    if (split === "kind") groups.unshift(["all", r.aggregates, "all"]);
    if (groups.length === 0) return;
    box.appendChild(
      el("h3", {
        text:
          split === "position"
            ? "By turn position"
            : split === "kind" && groups.length === 1
              ? "All turns"
              : "By " + split,
      }),
    );
    box.appendChild(splitTable(run, split, groups));
  });
  if (repeats(run).length > 0)
    box.appendChild(
      el("p", {
        cls: "note",
        "data-field": "summary-repeats",
        text:
          "Not drawn, as they repeat the all column: " +
          repeats(run)
            .map((x) => x.why)
            .join("; ") +
          ".",
      }),
    );
  if (compact) return box;
  // Each delta as the report holds it: its unadjusted interval, raw and Holm-adjusted p, family size, and the verdict
  // the report gave it (run.stats, worded as the terminal words it; docs/statistics.md). The page tests nothing itself.
  const deltas = r.deltas || [];
  if (deltas.length > 0) {
    box.appendChild(el("h3", { "data-field": "delta-method", text: "Split deltas (" + run.stats.deltaMethod + ")" }));
    box.appendChild(
      el("table", { cls: "deltas" }, [
        el("thead", null, [el("tr", null, ths([...DELTA_COLUMNS]))]),
        el(
          "tbody",
          null,
          deltas.map((d, i) =>
            el("tr", { "data-delta": d.key + ":" + d.split + ":" + d.group }, [
              el("td", { text: label(run, d.key) }),
              el("td", { text: d.split }),
              el("td", { text: d.group }),
              el("td", { text: d.reference }),
              el("td", { cls: "num", "data-field": "diff", text: signed(d.diff) }),
              el("td", {
                cls: "num",
                "data-field": "ci",
                text: d.ci95 ? "[" + signed(d.ci95[0]) + ", " + signed(d.ci95[1]) + "]" : "(no CI)",
              }),
              el("td", { cls: "num", text: d.nGroup + " vs " + d.nReference }),
              el("td", {
                cls: "num",
                text:
                  d.nCasesGroup === undefined
                    ? ""
                    : d.nCasesGroup + " vs " + (d.nCasesReference === undefined ? "" : d.nCasesReference),
              }),
              el("td", { cls: "num", "data-field": "p", text: fmtP(d.pValue) }),
              el("td", {
                cls: "num",
                "data-field": "p-adjusted",
                text: d.pAdjusted === undefined ? "" : fmtP(d.pAdjusted),
              }),
              el("td", {
                cls: "num",
                "data-field": "family",
                text: d.familySize === undefined ? "" : String(d.familySize),
              }),
              el("td", { cls: d.significant ? "hit" : "", "data-field": "verdict", text: run.stats.deltaVerdicts[i] }),
            ]),
          ),
        ),
      ]),
    );
  } else if (Object.keys(r.splits.locale ?? {}).length > 1) {
    box.appendChild(
      el("p", {
        cls: "note",
        text: "Locale deltas are indicative only: this report has no significance test for them.",
      }),
    );
  }
  const chance = r.chance;
  if (chance) {
    // The chance level of each retrieval metric is in its cells (chance ...); this is what it was computed from.
    const cards = Object.keys(chance.cardsPerLocale)
      .map((l) => l + " " + chance.cardsPerLocale[l])
      .join(", ");
    box.appendChild(el("h3", { text: "Chance levels" }));
    box.appendChild(
      el("p", {
        cls: "note",
        "data-section": "chance",
        text:
          "chance = expected value of a uniformly random ranking of the locale's cards at k=" +
          r.run.k +
          "; cards per locale: " +
          (cards || "none") +
          ".",
      }),
    );
    if (run.notes.chanceWarnings.length > 0)
      box.appendChild(
        el(
          "ul",
          { "data-field": "chance-warnings" },
          run.notes.chanceWarnings.map((w) => el("li", { cls: "vac", text: "warning: " + w })),
        ),
      );
  }
  if (r.vacuous.length > 0) {
    box.appendChild(el("h3", { text: "Not measured" }));
    box.appendChild(
      el(
        "ul",
        null,
        r.vacuous.map((k) => el("li", { text: label(run, k) + ": " + (run.vacuousText[k] || "not measured") })),
      ),
    );
  }
  if (r.judge) {
    const j = r.judge,
      u = r.timings && r.timings.judge; // the cost of this run is run-dependent: in timings (docs/determinism.md)
    box.appendChild(el("h3", { text: "Groundedness judge" }));
    box.appendChild(
      el("p", {
        "data-section": "judge",
        text:
          "model " +
          j.model +
          ", prompt " +
          j.prompt +
          ": " +
          (u
            ? u.calls +
              " calls, " +
              u.cached +
              " cached, " +
              (u.inputTokens === null
                ? "tokens not reported"
                : u.inputTokens + " input + " + (u.outputTokens === null ? 0 : u.outputTokens) + " output tokens")
            : "cost not recorded") +
          (j.unparsable > 0 ? ", " + j.unparsable + " unparsable replies (no score)" : ""),
      }),
    );
  }
  if (run.judgments) {
    box.appendChild(el("h3", { text: "Judgments: graded nDCG and judged@k" }));
    box.appendChild(el("pre", { cls: "notes", "data-section": "judgments", text: run.judgments.join("\n") }));
  }
  if (run.graph) {
    box.appendChild(el("h3", { text: "Your graph's turns: errors, no retrieval, warnings" }));
    box.appendChild(el("pre", { cls: "notes", "data-section": "graph-notes", text: run.graph.notes.join("\n") }));
  }
  box.appendChild(el("h3", { text: "Gate" }));
  box.appendChild(gateBlock(r));
  // A section this page does not know (a newer report's) is shown by name, as JSON.
  const sections = r as unknown as Record<string, unknown>;
  Object.keys(sections).forEach((k) => {
    if (KNOWN_TOP.indexOf(k) >= 0) return;
    box.appendChild(
      el("details", { "data-section": k }, [
        el("summary", { text: "Report section: " + k }),
        el("pre", { text: JSON.stringify(sections[k], null, 2) }),
      ]),
    );
  });
  box.appendChild(
    el("p", {
      cls: "note",
      text: "recall@k is a conservative lower bound: gold is disjunctive (citing any one gold card meets the turn); hit@k is the primary signal.",
    }),
  );
  if (run.notes.answerSide !== null)
    box.appendChild(el("p", { cls: "note", "data-section": "answerSide", text: run.notes.answerSide }));
  if (run.notes.notComputed !== null)
    box.appendChild(el("p", { cls: "note", "data-section": "measuresNotComputed", text: run.notes.notComputed }));
  box.appendChild(
    el("p", {
      cls: "note",
      "data-field": "ci-method",
      text: run.stats.ciMethod + " Turns are caseId#turn, turn 0-based.",
    }),
  );
  const tm = r.timings;
  if (tm) {
    // Wall clock only, never compared (docs/determinism.md); the start and duration are in the header, each turn's in its turn view.
    const ph: Record<string, number | undefined> = tm.phases || {};
    const phases = Object.keys(ph)
      .map((p) => p + " " + ((ph[p] ?? 0) / 1000).toFixed(2) + " s")
      .join(", ");
    box.appendChild(
      el("p", {
        cls: "note",
        "data-section": "timings",
        text:
          "timings (wall clock, not compared between runs): " +
          (phases
            ? "phases " + phases + " (graph and evaluate are sums over turns: they overlap at concurrency > 1)"
            : "no phases recorded") +
          (run.notes.setup !== null ? "; setup: " + run.notes.setup : "") +
          ".",
      }),
    );
  }
  box.appendChild(
    el("p", { cls: "note", "data-field": "schema-version", text: "report schemaVersion " + r.schemaVersion }),
  );
  return box;
}
function runLine(page: Run): string {
  const r = page.report,
    run = r.run;
  return (
    "k=" +
    run.k +
    "  store=" +
    run.store +
    (run.mode !== undefined ? "  mode=" + run.mode : "") +
    (run.rerank !== undefined ? "  rerank=" + (run.rerank === null ? "off" : run.rerank) : "") +
    (run.replay === "recorded" ? "  replay=recorded" : "") +
    "  embedder=" +
    (run.embedder === null ? "none" : run.embedder) +
    "  dataset=" +
    run.datasetHash.slice(0, 12) +
    "  kb=" +
    run.kbHash.slice(0, 12) +
    (r.timings ? "  started " + r.timings.started + "  " + (r.timings.durationMs / 1000).toFixed(1) + " s" : "") +
    "  turns=" +
    page.turnCount +
    " (gold-bearing " +
    page.goldBearingCount +
    ")"
  );
}

// ------------------------------------------------------------ stage funnel and recall curves
type Curves = Run["view"]["curves"]["all"];
// The report's funnel (report.funnel: src/eval/report/funnel-stats.ts) as bars and counts: present / n per stage, as the report counted them.
function funnelSvg(rows: readonly FunnelStage[]): SVGElement {
  const W = 520,
    L = 90,
    rowH = 22,
    H = rows.length * rowH + 8;
  const s = svg("svg", { width: W, height: H, viewBox: "0 0 " + W + " " + H, role: "img" });
  s.appendChild(svg("title", {}, "gold-bearing turns with a gold card at each stage"));
  rows.forEach((row, i) => {
    const y = 4 + i * rowH,
      w = row.share * (W - L - 120);
    s.appendChild(svg("text", { x: 4, y: y + 14 }, STAGE_LABEL[row.stage] || row.label));
    s.appendChild(svg("rect", { x: L, y: y + 3, width: Math.max(w, 1), height: rowH - 7, class: "bar" }));
    s.appendChild(
      svg(
        "text",
        { x: L + w + 6, y: y + 14, class: "barlabel" },
        row.present + " / " + row.n + " (" + (100 * row.share).toFixed(1) + "%)",
      ),
    );
  });
  return s;
}
type Funnel = NonNullable<Run["report"]["funnel"]>;
function funnelTable(f: Funnel): HTMLTableElement {
  const by = f.splits.locale || {};
  const groups = ([["all", f.stages]] as [string, FunnelStage[]][]).concat(
    Object.keys(by).map((l): [string, FunnelStage[]] => [l, by[l] ?? []]),
  );
  const head = el("tr", null, [
    el("th", { text: "stage" }),
    ...groups.map((g) => el("th", { cls: "num", text: g[0] })),
  ]);
  const body = el(
    "tbody",
    null,
    f.stages.map((s) =>
      el("tr", null, [
        el("th", { text: STAGE_LABEL[s.stage] || s.label }),
        ...groups.map((g) => {
          const row = g[1].filter((r) => r.stage === s.stage)[0];
          if (!row) return el("td", { cls: "num muted", text: "\u2014" });
          return el("td", { cls: "num", "data-funnel": g[0] + ":" + s.stage }, [
            el("span", { cls: "mean", text: String(row.present) }),
            el("span", { cls: "ci", text: "of " + row.n + " (" + (100 * row.share).toFixed(1) + "%)" }),
          ]);
        }),
      ]),
    ),
  );
  return el("table", { cls: "funnel" }, [el("thead", null, [head]), body]);
}
function curvesSvg(c: Curves, runK: number): SVGElement {
  const W = 620,
    H = 300,
    L = 44,
    R = 12,
    T = 10,
    B = 34;
  const s = svg("svg", { width: W, height: H, viewBox: "0 0 " + W + " " + H, role: "img" });
  s.appendChild(svg("title", {}, "recall@k per stage"));
  const x = (k: number): number => L + ((k - 1) / Math.max(1, c.maxK - 1)) * (W - L - R);
  const y = (v: number): number => T + (1 - v) * (H - T - B);
  [0, 0.25, 0.5, 0.75, 1].forEach((t) => {
    s.appendChild(svg("line", { x1: L, x2: W - R, y1: y(t), y2: y(t), class: "grid" }));
    s.appendChild(svg("text", { x: L - 6, y: y(t) + 4, "text-anchor": "end" }, t.toFixed(2)));
  });
  const step = c.maxK > 20 ? 5 : c.maxK > 10 ? 2 : 1;
  for (let k = 1; k <= c.maxK; k++)
    if (k === 1 || k % step === 0) s.appendChild(svg("text", { x: x(k), y: H - B + 16, "text-anchor": "middle" }, k));
  s.appendChild(
    svg("text", { x: (L + W - R) / 2, y: H - 4, "text-anchor": "middle" }, "k (list positions of the stage)"),
  );
  s.appendChild(svg("line", { x1: x(runK), x2: x(runK), y1: T, y2: H - B, class: "axis", "stroke-dasharray": "4 3" }));
  c.curves.forEach((cv) => {
    const pts = cv.values.map((v, i) => x(i + 1).toFixed(1) + "," + y(v).toFixed(1)).join(" ");
    s.appendChild(
      svg("polyline", { points: pts, fill: "none", stroke: STAGE_COLOR[cv.stage] || "#333", "stroke-width": 2 }),
    );
  });
  return s;
}
function legend(curves: Curves["curves"]): HTMLDivElement {
  return el(
    "div",
    { cls: "legend" },
    curves.map((cv) => el("span", null, [swatch(cv.stage), STAGE_LABEL[cv.stage] || cv.stage])),
  );
}
function swatch(stage: string): SVGElement {
  const s = svg("svg", { width: 14, height: 8 });
  s.appendChild(svg("line", { x1: 0, x2: 14, y1: 4, y2: 4, stroke: STAGE_COLOR[stage] || "#333", "stroke-width": 3 }));
  return s;
}
function funnelPanel(run: Run): HTMLDivElement {
  const v = run.view,
    box = el("div");
  box.appendChild(
    el("h2", { text: "Stage funnel with 95% intervals: share of gold-bearing turns whose gold is still present" }),
  );
  box.appendChild(funnelStatsBlock(run, null));
  const f = run.report.funnel;
  if (!f || v.curves.all.curves.length === 0) {
    box.appendChild(
      el("p", {
        cls: "vac",
        text:
          "No gold-bearing turn has a retrieval trace (retrieval " + (run.vacuousText[HIT] || "not measured") + ").",
      }),
    );
    return box;
  }
  box.appendChild(
    el("h2", {
      text: "Stage funnel (counts): gold-bearing turns with a gold card at each stage, of the turns that measured it",
    }),
  );
  box.appendChild(el("p", { cls: "note", "data-field": "funnel-note", text: v.text.funnel }));
  box.appendChild(
    el("div", { cls: "charts" }, [
      el("div", { cls: "chart" }, [el("div", { cls: "title", text: "all locales" }), funnelSvg(f.stages)]),
    ]),
  );
  box.appendChild(funnelTable(f));
  box.appendChild(el("h2", { text: "recall@k per stage, k = 1.." + v.curves.all.maxK }));
  const sel = el("select", { "aria-label": "locale of the curves" }, [
    el("option", { value: "all", text: "all locales" }),
    ...Object.keys(v.curves.locale).map((l) => el("option", { value: l, text: l })),
  ]);
  const holder = el("div", { cls: "chart" });
  const draw = (): void => {
    const c = sel.value === "all" ? v.curves.all : v.curves.locale[sel.value];
    holder.textContent = "";
    if (!c) return;
    holder.appendChild(legend(c.curves));
    holder.appendChild(curvesSvg(c, run.report.run.k));
  };
  sel.addEventListener("change", draw);
  draw();
  box.appendChild(el("div", { cls: "filters" }, [el("label", { text: "locale" }), sel]));
  box.appendChild(holder);
  box.appendChild(el("p", { cls: "note", "data-field": "curves-note", text: v.text.curves }));
  return box;
}

// ------------------------------------------------------------ the funnel as statistics (report.funnel: src/eval/report/funnel-stats.ts)
// One cell: the share of gold-bearing turns whose gold is still present at the stage, its 95% interval, present / n.
function funnelStatCell(s: FunnelStage | undefined, id: string): HTMLTableCellElement {
  if (!s) return el("td", { cls: "num muted", "data-funnel-stat": id, text: "\u2014" });
  return el("td", { cls: "num", "data-funnel-stat": id }, [
    el("span", { cls: "mean", text: f3(s.share) }),
    el("span", { cls: "ci", text: ciText(s.ci95) }),
    el("span", { cls: "n", text: "n=" + s.n }),
    el("span", { cls: "extra", text: s.present + " present, " + s.nCases + " cases" }),
  ]);
}
// Overall, then every group of one split of report.funnel.splits (position, kind, locale, part).
function funnelStatTable(f: Funnel, split: string): HTMLTableElement {
  const groups: [string, string, FunnelStage[]][] = [["all", "all", f.stages]];
  const by = f.splits[split] || {};
  Object.keys(by).forEach((g) => {
    groups.push([g, groupLabel(split, g), by[g] ?? []]);
  });
  const find = (rows: readonly FunnelStage[], stage: string): FunnelStage | undefined =>
    rows.filter((x) => x.stage === stage)[0];
  const head = el("tr", null, [
    el("th", { text: "stage" }),
    ...groups.map((g) => el("th", { cls: "num", text: g[1] })),
  ]);
  const body = el(
    "tbody",
    null,
    f.stages.map((s) =>
      el("tr", { "data-stage": s.stage }, [
        el("th", { text: STAGE_LABEL[s.stage] || s.label }),
        ...groups.map((g) => funnelStatCell(find(g[2], s.stage), g[0] + ":" + s.stage)),
      ]),
    ),
  );
  return el("table", { cls: "funnelstats", "data-split": split }, [el("thead", null, [head]), body]);
}
// The funnel with intervals and a choice of split; fixed draws one split with no choice (the Conversation tab's turn positions).
function funnelStatsBlock(run: Run, fixed: string | null): HTMLDivElement {
  const f = run.report.funnel,
    box = el("div", { "data-section": "funnel-stats" });
  if (!f) {
    box.appendChild(
      el("p", { cls: "vac", text: "No stage funnel statistics: no gold-bearing turn of this run measured a stage." }),
    );
    return box;
  }
  const holder = el("div");
  const splits = Object.keys(f.splits);
  if (fixed) holder.appendChild(funnelStatTable(f, fixed));
  else {
    const sel = el(
      "select",
      { name: "funnel-split", "aria-label": "split of the funnel" },
      splits.map((x) => el("option", { value: x, text: x === "position" ? "by turn position" : "by " + x })),
    );
    const draw = (): void => {
      holder.textContent = "";
      holder.appendChild(funnelStatTable(f, sel.value));
    };
    sel.addEventListener("change", draw);
    if (splits.length > 0) {
      box.appendChild(el("div", { cls: "filters" }, [el("label", { text: "split" }), sel]));
      draw();
    } else holder.appendChild(funnelStatTable(f, ""));
  }
  box.appendChild(holder);
  box.appendChild(
    el("p", {
      cls: "note",
      "data-field": "funnel-stats-note",
      text:
        run.conversation.note +
        " query = the turn's query did not lose the gold (its attribution is not \u201crewrite lost it\u201d; measured on attributed turns); final top-k = hit@" +
        run.report.run.k +
        ".",
    }),
  );
  return box;
}

// ------------------------------------------------------------ conversation: query attribution and turn positions
type QueryAttribution = NonNullable<Run["report"]["queryAttribution"]>;
/** A row of the attribution table: group, its label, attribution → count, and the split it belongs to when not the table's. */
type AttrRow = [string, string, Record<string, number | undefined>, string?];
function attributionTable(rows: readonly AttrRow[], split: string): HTMLTableElement {
  const head = el("tr", null, [
    el("th", { text: "turns" }),
    el("th", { cls: "num", text: "n" }),
    ...ATTR_ORDER.map((a) => el("th", { cls: "num", text: ATTR_LABEL[a] })),
  ]);
  const body = el(
    "tbody",
    null,
    rows.map((row) => {
      const c = row[2];
      let n = 0;
      ATTR_ORDER.forEach((a) => {
        n += c[a] || 0;
      });
      return el("tr", { "data-split": row[3] || split, "data-group": row[0] }, [
        el("th", { text: row[1] }),
        el("td", { cls: "num", "data-attr": "n", text: String(n) }),
        ...ATTR_ORDER.map((a) =>
          el("td", {
            cls: "num" + (a === "rewrite_lost_it" && (c[a] || 0) > 0 ? " miss" : ""),
            "data-attr": a,
            text: String(c[a] || 0),
          }),
        ),
      ]);
    }),
  );
  return el("table", { cls: "attribution", "data-split": split }, [el("thead", null, [head]), body]);
}
function queryMeansTable(run: Run, qa: QueryAttribution): HTMLTableElement {
  const means = qa.means as Record<string, Record<string, Aggregate | undefined> | undefined>;
  const keys = run.keys.filter((k) => means.graph && means.graph[k]);
  const head = el("tr", null, [
    el("th", { text: "query" }),
    ...keys.map((k) => el("th", { cls: "num", text: label(run, k) })),
  ]);
  const body = el(
    "tbody",
    null,
    QUERY_ORDER.filter((v) => means[v]).map((v) =>
      el("tr", { "data-query": v }, [
        el("th", { text: QUERY_LABEL[v] }),
        ...keys.map((k) => {
          const a = means[v]?.[k];
          if (!a) return el("td", { cls: "num muted", "data-key": k, text: "\u2014" });
          return el("td", { cls: "num", "data-key": k }, [
            el("span", { cls: "mean", text: f3(a.mean) }),
            el("span", { cls: "ci", text: ciText(a.ci95) }),
            el("span", { cls: "n", text: "n=" + a.n }),
          ]);
        }),
      ]),
    ),
  );
  return el("table", { cls: "querymeans" }, [el("thead", null, [head]), body]);
}
function conversationPanel(run: Run): HTMLDivElement {
  const r = run.report,
    qa = r.queryAttribution,
    box = el("div");
  box.appendChild(el("h2", { text: "Query attribution: did the rewrite or the retriever lose the gold?" }));
  if (run.conversation.attributionOff !== null)
    box.appendChild(
      el("p", {
        cls: "vac",
        "data-field": "attribution-off",
        text: "Query attribution " + run.conversation.attributionOff,
      }),
    );
  else if (!qa)
    box.appendChild(
      el("p", {
        cls: "muted",
        "data-field": "attribution-off",
        text: "This report has no query attribution (written before it was recorded).",
      }),
    );
  else {
    box.appendChild(
      el("p", {
        cls: "note",
        "data-field": "attribution-turns",
        text:
          qa.turns +
          " gold-bearing turns attributed, " +
          qa.withStandalone +
          " of them with a standalone (oracle) question. Each turn's gold was also retrieved with the raw user message and the oracle; those retrievals never change the turn's own scores.",
      }),
    );
    if (run.conversation.cost !== null)
      box.appendChild(el("p", { cls: "note", "data-field": "attribution-cost", text: run.conversation.cost }));
    const qaSplits = qa.splits as Record<string, Record<string, Record<string, number | undefined>> | undefined>;
    const pos = qaSplits.position || {};
    box.appendChild(
      attributionTable(
        ([["all", "all", qa.counts, "all"]] as AttrRow[]).concat(
          Object.keys(pos).map((g): AttrRow => [g, positionLabel(g), pos[g] ?? {}]),
        ),
        "position",
      ),
    );
    Object.keys(qaSplits).forEach((split) => {
      if (split === "position") return;
      const groups = qaSplits[split] ?? {};
      if (Object.keys(groups).length === 0) return;
      box.appendChild(el("h3", { text: "Attribution by " + split }));
      box.appendChild(
        attributionTable(
          Object.keys(groups).map((g): AttrRow => [g, g, groups[g] ?? {}]),
          split,
        ),
      );
    });
    box.appendChild(el("h3", { text: "Each query's means over the attributed turns" }));
    box.appendChild(queryMeansTable(run, qa));
    box.appendChild(
      el("p", {
        cls: "note",
        text: "ok: the graph's query was the raw message and hit; rewrite rescued it: the raw message misses, the graph's query hits; rewrite not needed: both hit; rewrite lost it: the graph's query misses and the oracle (or, without one, the raw message) hits; retriever lost it: every query misses (docs/query-attribution.md).",
      }),
    );
  }
  const posSplit = r.splits.position;
  box.appendChild(el("h2", { text: "Every metric by turn position" }));
  if (posSplit && Object.keys(posSplit).length > 0) {
    box.appendChild(
      splitTable(
        run,
        "position",
        Object.keys(posSplit).map((g): Group => [g, posSplit[g], "position"]),
      ),
    );
    box.appendChild(
      el("p", {
        cls: "note",
        text:
          positionNote(Object.keys(posSplit)).replace(/^t/, "T") +
          ". n counts turns; intervals: 95% percentile bootstrap resampling " +
          ((r.bootstrap && r.bootstrap.unit) || "case") +
          "s.",
      }),
    );
  } else
    box.appendChild(
      el("p", { cls: "muted", text: "This report has no turn-position split (written before it was recorded)." }),
    );
  box.appendChild(el("h2", { text: "Stage funnel by turn position (95% intervals)" }));
  box.appendChild(funnelStatsBlock(run, "position"));
  return box;
}

// The three queries of a turn side by side, each with its rank of the gold, and the turn's attribution.
function queriesBlock(run: Run, t: Turn): HTMLDivElement {
  const q = t.queries,
    box = el("div", { "data-section": "queries" });
  if (t.queriesOff) {
    // --graph --counterfactual: a gold-bearing turn the re-invocation could not attribute, and why.
    box.appendChild(
      el("p", {
        cls: "vac",
        "data-field": "queries-off",
        "data-reason": t.queriesOff.reason,
        text:
          "Not attributed (" +
          (QUERY_UNATTRIBUTED[t.queriesOff.reason] || t.queriesOff.reason) +
          "): " +
          t.queriesOff.detail,
      }),
    );
    return box;
  }
  if (!q) {
    const why =
      t.gold.length === 0
        ? "No gold for this turn: no query attribution."
        : run.conversation.attributionOff !== null
          ? "Query attribution " + run.conversation.attributionOff
          : !t.trace
            ? "No query attribution: the turn has no retrieval trace."
            : "No query attribution for this turn.";
    box.appendChild(el("p", { cls: "muted", "data-field": "queries-off", text: why }));
    return box;
  }
  const lost = q.attribution === "rewrite_lost_it" || q.attribution === "retriever_lost_it";
  box.appendChild(
    el("p", null, [
      "attribution: ",
      el("span", {
        cls: "badge " + (lost ? "miss" : "hit"),
        "data-field": "attribution",
        "data-attribution": q.attribution,
        text: ATTR_LABEL[q.attribution] || q.attribution,
      }),
    ]),
  );
  const sides = q as unknown as Record<
    string,
    { query: string; rank: number | null; scores: Record<string, number | undefined> } | undefined
  >;
  box.appendChild(
    el(
      "div",
      { cls: "queries3" },
      QUERY_SIDE.map((v) => {
        const o = sides[v];
        if (!o)
          return el("div", { "data-query": v }, [
            el("h4", { text: QUERY_LABEL[v] }),
            el("p", {
              cls: "muted",
              "data-field": "text",
              text: "(the case gives no standalone question for this turn; the raw message stands in for it)",
            }),
          ]);
        const h = o.scores[HIT];
        return el("div", { "data-query": v }, [
          el("h4", { text: QUERY_LABEL[v] }),
          el("div", { cls: "query", "data-field": "text", text: o.query }),
          el("p", { cls: "rank" }, [
            "rank of the gold: ",
            el("span", { cls: o.rank === null ? "miss" : "mean", "data-field": "rank", text: rankText(o.rank) }),
            "  \u00b7  hit@" + run.report.run.k + ": ",
            el("span", {
              cls: h !== undefined && h > 0 ? "hit" : "miss",
              "data-field": "hit",
              text: h === undefined ? "\u2014" : h > 0 ? "hit" : "miss",
            }),
          ]),
        ]);
      }),
    ),
  );
  box.appendChild(
    el("p", {
      cls: "note",
      text:
        "rank = the best-ranked gold card's 1-based rank in the card list retrieved for that query (\u2014 = not listed); hit when it is within the top " +
        run.report.run.k +
        ".",
    }),
  );
  return box;
}

// ------------------------------------------------------------ turn view
function goldTable(run: Run, i: number): HTMLElement {
  const t = turnAt(run, i),
    tr = t.trace,
    cuts = run.view.cuts[i] || {},
    cap = capturedOf(t);
  if (t.error !== undefined)
    return el("p", {
      cls: "miss",
      text: "Not scored: the graph run threw (see the error above); neither a hit nor a miss.",
    });
  if (t.gold.length === 0)
    return el("p", { cls: "muted", text: "No gold for this turn (a no-match turn): nothing to place." });
  if (!tr && !t.noRetrieval)
    return el("p", {
      cls: "vac",
      text: "No retrieval trace for this turn (" + (run.vacuousText[HIT] || "retrieval not measured") + ").",
    });
  // Columns: retrace's stages present, or each captured list of a --graph turn (child runs, then the call), then the final top-k.
  const first = tr && t.gold[0] !== undefined ? tr.goldPositions[t.gold[0]] : undefined;
  const stages = t.noRetrieval
    ? ["final"]
    : cap
      ? cap.stages.map((s) => s.key).concat(["final"])
      : TRACE_STAGES.filter((s) => first !== undefined && s in first).concat(["final"]);
  const roleOf: Record<string, CapturedList> = {};
  if (cap)
    cap.stages.forEach((s) => {
      roleOf[s.key] = s;
    });
  const head = el("tr", null, [
    el("th", { text: "gold card" }),
    ...stages.map((s) => {
      const c = roleOf[s];
      return el("th", {
        cls: "num",
        title: c && c.step !== undefined ? "step " + c.step : null,
        text: c ? s + (c.role === "child" ? " (child run)" : "") : STAGE_LABEL[s] || s,
      });
    }),
    el("th", { text: "lost at" }),
  ]);
  const k = tr ? tr.k : run.report.run.k;
  const body = el(
    "tbody",
    null,
    t.gold.map((g) => {
      const pos: Record<string, number | null | undefined> = tr ? tr.goldPositions[g] || {} : {},
        fi = tr ? tr.retrievedIds.indexOf(g) : -1;
      const cells = stages.map((s) => {
        const v = s === "final" ? (fi >= 0 ? fi + 1 : null) : pos[s];
        return el("td", { cls: "num", "data-stage": s, text: rankText(v) });
      });
      const cut = cuts[g];
      return el("tr", { "data-gold": g }, [
        el("td", { cls: "goldmark", text: "\u2605 " + g }),
        ...cells,
        el("td", { cls: cut ? "cut" : "hit", "data-cut": cut ? cut.at : "", text: cut ? cut.text : "in the top-" + k }),
      ]);
    }),
  );
  return el("table", { cls: "goldranks" }, [el("thead", null, [head]), body]);
}
/** A ranked list's entries: id and score (null when the list has no scores). */
type Entry = readonly [string, number | null];
type ListOf = (stage: string, entries: readonly Entry[], size: number) => HTMLTableElement;
function stageLists(run: Run, i: number): HTMLDivElement {
  const t = turnAt(run, i),
    tr = t.trace,
    box = el("div", { cls: "stages" });
  if (!tr) return box;
  const gold: Record<string, boolean> = {};
  t.gold.forEach((g) => {
    gold[g] = true;
  });
  const isGold = (id: string): boolean => gold[id] === true || gold[id.split("#")[0] ?? id] === true;
  const list: ListOf = (stage, entries, size) => {
    const scored = entries.length > 0 && entries[0]?.[1] !== null;
    const rows = entries.map((e, j) =>
      el("tr", { cls: isGold(e[0]) ? "gold" : "" }, [
        el("td", { cls: "num", text: String(j + 1) }),
        el("td", { cls: isGold(e[0]) ? "goldmark" : "", text: (isGold(e[0]) ? "\u2605 " : "") + e[0] }),
        scored ? el("td", { cls: "num", text: String(e[1]) }) : null,
      ]),
    );
    const cap = el("caption", {
      text:
        (STAGE_LABEL[stage] || stage) +
        (size > entries.length ? " (top " + entries.length + " of " + size + ")" : " (" + entries.length + ")"),
    });
    return el("table", { "data-list": stage }, [
      cap,
      el("thead", null, [
        el("tr", null, [
          el("th", { text: "#" }),
          el("th", { text: "id" }),
          scored ? el("th", { text: "score" }) : null,
        ]),
      ]),
      el("tbody", null, rows),
    ]);
  };
  const cap = capturedOf(t);
  if (cap) return capturedLists(tr.retrievedIds, cap, isGold, list);
  const st = (tr.stages || {}) as Record<string, Entry[] | undefined>;
  const sizes = (tr.stageSizes || {}) as Record<string, number | undefined>;
  Object.keys(st).forEach((s) => {
    const entries = st[s] ?? [];
    box.appendChild(list(s, entries, sizes[s] || entries.length));
  });
  box.appendChild(
    list(
      "final",
      tr.retrievedIds.map((id): Entry => [id, null]),
      tr.retrievedIds.length,
    ),
  );
  if (Object.keys(st).length === 0)
    box.appendChild(
      el("p", {
        cls: "note",
        text: "This report has no per-stage lists (written before they were recorded); gold ranks above are exact.",
      }),
    );
  return box;
}
// A --graph turn's lists: every top-level retriever call grouped by retrieval step (calls overlapping in time are one step),
// each call's child runs before it, the steps --retrieval-call scored marked; then the final top-k.
function capturedLists(
  retrievedIds: readonly string[],
  cap: Captured,
  isGold: (id: string) => boolean,
  list: ListOf,
): HTMLDivElement {
  const box = el("div", { cls: "calls" });
  const unknown: Record<string, boolean> = {};
  (cap.unknownIds || []).forEach((id) => {
    unknown[id] = true;
  });
  const all = cap.stages
    .map((s) => ({ s, scored: true }))
    .concat((cap.unscored || []).map((s) => ({ s, scored: false })));
  const stepOf = (x: { s: CapturedList }): number => (x.s.step === undefined ? 0 : x.s.step);
  const steps: number[] = [];
  all.forEach((x) => {
    if (steps.indexOf(stepOf(x)) < 0) steps.push(stepOf(x));
  });
  steps.sort((a, b) => a - b);
  steps.forEach((n) => {
    const inStep = all.filter((x) => stepOf(x) === n);
    const scored = inStep.some((x) => x.scored);
    const calls = inStep.filter((x) => x.s.role === "final").length;
    const head =
      (n === 0
        ? "Scored calls"
        : "Step " +
          n +
          " of " +
          (cap.steps === undefined ? steps.length : cap.steps) +
          (scored ? ": scored" : ": not scored")) +
      " (" +
      calls +
      " call" +
      (calls === 1 ? "" : "s") +
      (calls > 1 ? " overlapping in time" : "") +
      ")";
    const tables = inStep.map((x) => {
      const s = x.s;
      const rows = s.ids.map((id, j) => {
        const g = isGold(id),
          u = unknown[id] === true;
        return el("tr", { cls: g ? "gold" : "" }, [
          el("td", { cls: "num", text: String(j + 1) }),
          el("td", {
            cls: g ? "goldmark" : u ? "unknown" : "",
            title: u ? "names no card of the KB or catalog" : null,
            text: (g ? "\u2605 " : "") + id + (u ? " ?" : ""),
          }),
        ]);
      });
      const cap2 =
        s.key +
        (s.role === "child" ? " (child run)" : "") +
        " (" +
        s.ids.length +
        ")" +
        (s.error !== null ? " failed: " + s.error : "");
      return el("table", { "data-list": s.key, "data-role": s.role, "data-scored": x.scored ? "true" : "false" }, [
        el("caption", { text: cap2 }),
        el("thead", null, [el("tr", null, [el("th", { text: "#" }), el("th", { text: "id" })])]),
        el("tbody", null, rows),
      ]);
    });
    box.appendChild(
      el(
        "div",
        { cls: "step " + (scored ? "scored" : "unscored"), "data-step": n, "data-scored": scored ? "true" : "false" },
        [el("h4", { text: head }), el("div", { cls: "stages" }, tables)],
      ),
    );
  });
  box.appendChild(
    el("div", { cls: "stages" }, [
      list(
        "final",
        retrievedIds.map((id): Entry => [id, null]),
        retrievedIds.length,
      ),
    ]),
  );
  if (cap.noChildRuns.length > 0)
    box.appendChild(
      el("p", {
        cls: "note",
        text:
          "No child runs: " +
          cap.noChildRuns.join(", ") +
          " (their inner searches emit no retriever runs; no stages to show).",
      }),
    );
  if ((cap.unknownIds || []).length > 0)
    box.appendChild(
      el("p", {
        cls: "note",
        "data-field": "unknown-ids",
        text: "Unknown ids (no card of the KB or catalog; misses): " + (cap.unknownIds ?? []).join(", "),
      }),
    );
  return box;
}
// The scored top-k's documents a --graph turn captured (captured.documents: rank, id, page content cut at a bound, docs/schema-versions.md).
function documentsBlock(t: Turn, cap: Captured): HTMLElement {
  const docs = cap.documents || [];
  if (docs.length === 0)
    return el("p", {
      cls: "muted",
      "data-field": "documents-off",
      text: "No document text recorded for this turn (its documents had no page content, or the report was written before it was recorded).",
    });
  const gold: Record<string, boolean> = {};
  t.gold.forEach((g) => {
    gold[g] = true;
  });
  return el("table", { cls: "documents" }, [
    el("thead", null, [
      el("tr", null, [el("th", { cls: "num", text: "#" }), el("th", { text: "id" }), el("th", { text: "text" })]),
    ]),
    el(
      "tbody",
      null,
      docs.map((d) =>
        el("tr", { cls: gold[d.id] ? "gold" : "", "data-rank": d.rank, "data-id": d.id }, [
          el("td", { cls: "num", "data-field": "rank", text: String(d.rank) }),
          el("td", {
            cls: gold[d.id] ? "goldmark" : "",
            "data-field": "id",
            text: (gold[d.id] ? "\u2605 " : "") + d.id,
          }),
          el("td", { cls: "doctext", "data-field": "text", text: d.text + (d.truncated ? " \u2026 (cut)" : "") }),
        ]),
      ),
    ),
  ]);
}
// The turn's metrics; a comment shared by consecutive rows (one evaluator's comment on its five keys) is shown once, across them.
function metricsTable(run: Run, t: Turn): HTMLTableElement {
  const rows: HTMLTableRowElement[] = [],
    res = t.results;
  const commentAt = (j: number): string => res[j]?.comment || "";
  res.forEach((r, j) => {
    const c = commentAt(j),
      cells = [el("td", { text: label(run, r.key) }), el("td", { cls: "num", text: f3(r.score) })];
    if (j === 0 || commentAt(j - 1) !== c) {
      let span = 1;
      while (j + span < res.length && commentAt(j + span) === c) span++;
      cells.push(el("td", { cls: "comment", rowspan: span > 1 ? span : null, text: c }));
    }
    rows.push(el("tr", { "data-key": r.key }, cells));
  });
  return el("table", { cls: "metrics" }, [
    el("thead", null, [
      el("tr", null, [el("th", { text: "key" }), el("th", { text: "score" }), el("th", { text: "comment" })]),
    ]),
    el("tbody", null, rows),
  ]);
}
function turnView(run: Run, i: number): HTMLDivElement {
  const r = run.report,
    t = turnAt(run, i),
    box = el("div", { cls: "turnview", "data-turn": turnId(t) });
  const oc = outcome(t);
  box.appendChild(
    el("div", { cls: "turnhead" }, [
      el("h2", { text: turnId(t) }),
      el("span", {
        cls: "badge " + (oc === "miss" || oc === "error" ? "miss" : oc === "hit" ? "hit" : ""),
        text: outcomeText(t),
      }),
      el("span", { cls: "muted", text: t.locale + " \u00b7 " + t.kind + " \u00b7 expect " + t.expect }),
    ]),
  );
  const cap = capturedOf(t);
  if (t.error !== undefined)
    box.appendChild(el("p", { cls: "miss", "data-field": "error", text: "error: the graph run threw: " + t.error }));
  else if (t.noRetrieval)
    box.appendChild(
      el("p", {
        "data-field": "retrieval",
        text:
          "retrieval: no retrieval (the turn made no retriever run)" +
          (t.gold.length > 0 ? "; a gold-bearing turn: scored as a miss" : "; empty gold: none needed"),
      }),
    );
  else if (cap) {
    const steps = cap.steps === undefined ? cap.topLevelRuns : cap.steps;
    const unknownIds = cap.unknownIds || [];
    box.appendChild(
      el("p", {
        "data-field": "retrieval",
        text:
          "retrieval: captured from retriever callbacks: " +
          cap.topLevelRuns +
          " top-level call" +
          (cap.topLevelRuns === 1 ? "" : "s") +
          " in " +
          steps +
          " step" +
          (steps === 1 ? "" : "s") +
          " (calls overlapping in time are one step); scored: " +
          cap.retrievers.length +
          " (" +
          cap.retrievers.join(", ") +
          ")" +
          (unknownIds.length > 0 ? "; unknown ids in the top-k: " + unknownIds.length : ""),
      }),
    );
  }
  box.appendChild(el("h3", { text: "Conversation so far" }));
  const convo = el("div", { cls: "convo" });
  r.turns.forEach((p) => {
    if (p.caseId !== t.caseId || p.turn >= t.turn) return;
    convo.appendChild(el("div", { cls: "msg" }, [el("span", { cls: "who", text: turnId(p) + " user" }), p.user]));
    convo.appendChild(
      el("div", { cls: "msg" }, [
        el("span", { cls: "who", text: "agent" }),
        p.refused ? "(refused) " + p.answer : p.answer,
      ]),
    );
  });
  convo.appendChild(el("div", { cls: "msg current" }, [el("span", { cls: "who", text: turnId(t) + " user" }), t.user]));
  box.appendChild(convo);
  box.appendChild(el("h3", { text: "Contextualized query (what retrieval searched for)" }));
  box.appendChild(
    el("div", {
      cls: "query",
      "data-field": "query",
      text: t.trace
        ? t.trace.query
        : t.noRetrieval
          ? "\u2014 (no retrieval: the turn made no retriever run)"
          : t.error !== undefined
            ? "\u2014 (the graph run threw: its retrieval is not scored)"
            : "\u2014 (no retrieval ran)",
    }),
  );
  box.appendChild(el("h3", { text: "The three queries: raw message, standalone (oracle), the graph's query" }));
  box.appendChild(queriesBlock(run, t));
  box.appendChild(el("h3", { text: "Gold cards: rank at every stage" }));
  box.appendChild(goldTable(run, i));
  if (t.trace) {
    box.appendChild(
      el("h3", {
        text: cap
          ? "Retriever calls by step (\u2605 gold; ? an id naming no card)"
          : "Ranked lists per stage (\u2605 gold)",
      }),
    );
    box.appendChild(stageLists(run, i));
  }
  if (cap) {
    box.appendChild(el("h3", { text: "Retrieved documents (the scored top-" + (t.trace ? t.trace.k : r.run.k) + ")" }));
    box.appendChild(documentsBlock(t, cap));
  }
  box.appendChild(el("h3", { text: "Answer" + (t.refused ? " (refused)" : "") }));
  box.appendChild(el("div", { cls: "answer", "data-field": "answer", text: t.answer === "" ? "(empty)" : t.answer }));
  const gold: Record<string, boolean> = {};
  t.gold.forEach((g) => {
    gold[g] = true;
  });
  // A --graph run's citations and answer-side checks are not read (docs/evaluate-your-graph.md): the page says so instead of "none".
  if (run.graph) box.appendChild(el("p", { cls: "note", "data-field": "not-read", text: run.graph.notRead }));
  else
    box.appendChild(
      el("p", { "data-field": "citations" }, [
        "Citations: ",
        ...(t.citedIds.length === 0
          ? [el("span", { cls: "muted", text: "none" })]
          : t.citedIds.map((c, j) =>
              el("span", {
                cls: gold[c] ? "goldmark" : "",
                text: (j > 0 ? ", " : "") + (gold[c] ? "\u2605 " : "") + c,
              }),
            )),
      ]),
    );
  box.appendChild(el("h3", { text: "Metrics of this turn" }));
  box.appendChild(metricsTable(run, t));
  const tm = r.timings && r.timings.turns ? r.timings.turns[t.caseId + "#" + t.turn] : undefined;
  if (tm)
    box.appendChild(
      el("p", {
        cls: "note",
        text:
          "timings (ms): " +
          Object.keys(tm)
            .map((k) => k + " " + tm[k])
            .join(", "),
      }),
    );
  return box;
}

// ------------------------------------------------------------ turns table
interface Column {
  id: string;
  label: string;
  width: string;
  num?: boolean;
  value: (t: Turn, i: number) => number | string;
  text?: (t: Turn) => string;
}
const OUTCOME_ORDER: Record<string, number> = { miss: 0, error: 0.5, hit: 1, "not measured": 2, "no gold": 3 };
const COLS: Column[] = [
  { id: "turn", label: "turn", width: "15%", value: (_t, i) => i, text: (t) => turnId(t) },
  { id: "locale", label: "locale", width: "6%", value: (t) => t.locale },
  { id: "kind", label: "kind", width: "8%", value: (t) => t.kind },
  { id: "outcome", label: "hit/miss", width: "8%", value: (t) => OUTCOME_ORDER[outcome(t)] ?? 0, text: outcomeText },
  {
    id: "recall",
    label: "recall",
    width: "6%",
    num: true,
    value: (t) => score(t, RECALL) ?? -1,
    text: (t) => {
      const s = score(t, RECALL);
      return s === undefined ? "\u2014" : f3(s);
    },
  },
  {
    id: "ndcg",
    label: "nDCG",
    width: "6%",
    num: true,
    value: (t) => score(t, NDCG) ?? -1,
    text: (t) => {
      const s = score(t, NDCG);
      return s === undefined ? "\u2014" : f3(s);
    },
  },
  { id: "gold", label: "gold", width: "13%", value: (t) => t.gold.join(",") },
  { id: "topk", label: "top-k", width: "16%", value: (t) => topKText(t) },
  { id: "user", label: "user text", width: "22%", value: (t) => t.user },
];
function turnsPanel(run: Run, openTurn: (i: number) => void): HTMLDivElement {
  const r = run.report,
    box = el("div");
  const uniq = (f: (t: Turn) => string): string[] => {
    const seen: string[] = [];
    r.turns.forEach((t) => {
      const v = f(t);
      if (seen.indexOf(v) < 0) seen.push(v);
    });
    return seen;
  };
  const opt = (v: string, text?: string): HTMLOptionElement => el("option", { value: v, text: text || v });
  const fLocale = el("select", { name: "locale", "aria-label": "locale" }, [
    opt("", "all locales"),
    ...uniq((t) => t.locale).map((v) => opt(v)),
  ]);
  const fKind = el("select", { name: "kind", "aria-label": "kind" }, [
    opt("", "all kinds"),
    ...uniq((t) => t.kind).map((v) => opt(v)),
  ]);
  const fOut = el("select", { name: "outcome", "aria-label": "hit or miss" }, [
    opt("", "hit and miss"),
    opt("miss", "missed only"),
    opt("hit", "hit only"),
    opt("no gold", "no gold"),
    opt("not measured", "not measured"),
    opt("error", "error (graph threw)"),
  ]);
  const fText = el("input", {
    type: "search",
    name: "text",
    placeholder: "case id or text",
    "aria-label": "case id or text",
  });
  const count = el("span", { cls: "muted", "data-field": "count" });
  box.appendChild(el("div", { cls: "filters" }, [el("label", { text: "filter" }), fLocale, fKind, fOut, fText, count]));
  const sort = { col: "outcome", asc: true };
  const heads = COLS.map((c) => el("th", { "data-col": c.id, cls: c.num ? "num" : "", text: c.label, width: c.width }));
  const tbody = el("tbody");
  const table = el("table", { cls: "turns" }, [el("thead", null, [el("tr", null, heads)]), tbody]);
  box.appendChild(table);
  box.appendChild(
    el("p", {
      cls: "note",
      text: "Click a row to open the turn. Default order: missed turns first, then dataset order; click a header to sort.",
    }),
  );
  function draw(): void {
    const q = fText.value.trim().toLowerCase();
    const idx: number[] = [];
    r.turns.forEach((t, i) => {
      if (fLocale.value && t.locale !== fLocale.value) return;
      if (fKind.value && t.kind !== fKind.value) return;
      if (fOut.value && outcome(t) !== fOut.value) return;
      if (q && turnId(t).toLowerCase().indexOf(q) < 0 && t.user.toLowerCase().indexOf(q) < 0) return;
      idx.push(i);
    });
    const col = COLS.filter((c) => c.id === sort.col)[0] ?? COLS[0]!;
    idx.sort((a, b) => {
      const va = col.value(turnAt(run, a), a),
        vb = col.value(turnAt(run, b), b);
      let d = va < vb ? -1 : va > vb ? 1 : 0;
      if (!sort.asc) d = -d;
      return d !== 0 ? d : a - b;
    });
    tbody.textContent = "";
    idx.forEach((i) => {
      const t = turnAt(run, i);
      tbody.appendChild(
        el(
          "tr",
          { "data-i": i, "data-turn": turnId(t), "data-outcome": outcome(t) },
          COLS.map((c) => {
            const text = c.text ? c.text(t) : String(c.value(t, i));
            const oc = outcome(t),
              cls =
                (c.num ? "num " : "") +
                (c.id === "outcome" ? (oc === "miss" || oc === "error" ? "miss" : oc === "hit" ? "hit" : "muted") : "");
            return el("td", {
              cls,
              "data-col": c.id,
              text,
              title: c.id === "user" || c.id === "gold" || c.id === "topk" ? text : null,
            });
          }),
        ),
      );
    });
    count.textContent = idx.length + " of " + r.turns.length + " turns";
    heads.forEach((th) => {
      th.className = th.getAttribute("data-col") === sort.col ? "sorted" + (sort.asc ? " asc" : "") : "";
    });
  }
  [fLocale, fKind, fOut].forEach((s) => {
    s.addEventListener("change", draw);
  });
  fText.addEventListener("input", draw);
  heads.forEach((th) => {
    th.addEventListener("click", () => {
      const c = th.getAttribute("data-col") ?? "";
      if (sort.col === c) sort.asc = !sort.asc;
      else {
        sort.col = c;
        sort.asc = true;
      }
      draw();
    });
  });
  tbody.addEventListener("click", (ev) => {
    let n = ev.target as Node | null;
    while (n && n !== tbody && !(n instanceof Element && n.getAttribute("data-i") !== null)) n = n.parentNode;
    if (n && n !== tbody && n instanceof Element) openTurn(Number(n.getAttribute("data-i")));
  });
  draw();
  return box;
}

// ------------------------------------------------------------ page frame
interface Tab {
  id: string;
  label: string;
  content: Node;
}
interface Frame {
  show: (id: string) => void;
}
function frame(title: string, sub: string, tabs: readonly Tab[], extra?: readonly string[]): Frame {
  const app = byId("app");
  app.textContent = "";
  const nav = el("nav", { cls: "tabs" });
  const main = el("main");
  const panels: Record<string, { button: HTMLButtonElement; panel: HTMLElement }> = {};
  tabs.forEach((tb) => {
    const b = el("button", { type: "button", "data-tab": tb.id, text: tb.label });
    const p = el("section", { cls: "panel", id: "panel-" + tb.id, "data-panel": tb.id });
    p.appendChild(tb.content);
    b.addEventListener("click", () => {
      show(tb.id);
    });
    nav.appendChild(b);
    main.appendChild(p);
    panels[tb.id] = { button: b, panel: p };
  });
  function show(id: string): void {
    Object.keys(panels).forEach((k) => {
      const x = panels[k];
      if (!x) return;
      x.button.className = k === id ? "active" : "";
      x.panel.className = "panel" + (k === id ? " active" : "");
    });
    window.scrollTo(0, 0);
  }
  const lines = (extra || []).map((l) => el("div", { cls: "runline", "data-field": "graph", text: l }));
  app.appendChild(
    el("header", { cls: "top" }, [el("h1", { text: title }), el("div", { cls: "runline", text: sub }), ...lines, nav]),
  );
  app.appendChild(main);
  if (tabs[0]) show(tabs[0].id);
  return { show };
}

function reportPage(run: Run): void {
  const turnBox = el("div", null, [el("p", { cls: "muted", text: "Pick a turn in the Turns tab." })]);
  function openTurn(i: number): void {
    turnBox.textContent = "";
    const back = el("button", { type: "button", cls: "link", text: "\u2190 back to turns" });
    back.addEventListener("click", () => {
      ui.show("turns");
    });
    turnBox.appendChild(back);
    // A conversation turn by turn: the case's previous and next turns, when the report has them (docs/html-report.md).
    const t = turnAt(run, i);
    const near = (d: number): number => {
      const turns = run.report.turns;
      for (let j = 0; j < turns.length; j++) {
        const u = turns[j];
        if (u !== undefined && u.caseId === t.caseId && u.turn === t.turn + d) return j;
      }
      return -1;
    };
    (
      [
        [-1, "\u2190 "],
        [1, ""],
      ] as const
    ).forEach(([d, arrow]) => {
      const j = near(d);
      if (j < 0) return;
      const b = el("button", {
        type: "button",
        cls: "link",
        "data-nav": d < 0 ? "previous" : "next",
        text: (d < 0 ? arrow + "previous turn " : "next turn ") + turnId(turnAt(run, j)) + (d > 0 ? " \u2192" : ""),
      });
      b.addEventListener("click", () => {
        openTurn(j);
      });
      turnBox.appendChild(document.createTextNode(" \u00b7 "));
      turnBox.appendChild(b);
    });
    turnBox.appendChild(turnView(run, i));
    ui.show("turn");
  }
  const ui = frame(
    "retrace report \u2014 " + run.name,
    runLine(run),
    [
      { id: "summary", label: "Summary", content: summaryPanel(run, false, (i) => openTurn(i)) },
      { id: "conversation", label: "Conversation", content: conversationPanel(run) },
      { id: "funnel", label: "Stage funnel", content: funnelPanel(run) },
      { id: "turns", label: "Turns (" + run.report.turns.length + ")", content: turnsPanel(run, openTurn) },
      { id: "turn", label: "Turn view", content: turnBox },
    ],
    run.graph ? run.graph.header : [],
  );
}

// Both runs' stage funnels (share, 95% interval, n) and the paired difference per stage (src/eval/gate/compare.ts compareFunnels).
function funnelCompare(data: ComparePageData): HTMLDivElement {
  const fc = data.funnels;
  const box = el("div", { "data-section": "funnel-compare" });
  box.appendChild(el("h2", { text: "Stage funnel: A, B and the paired difference per stage (B \u2212 A)" }));
  if (!fc || fc.diff.length === 0) {
    box.appendChild(
      el("p", {
        cls: "muted",
        "data-field": "funnel-compare-off",
        text: "Stage funnel: not compared (no stage was measured in both runs).",
      }),
    );
    return box;
  }
  const side = (rows: readonly FunnelStage[], stage: string, s: string): HTMLTableCellElement => {
    const x = rows.filter((r) => r.stage === stage)[0];
    if (!x) return el("td", { cls: "num muted", "data-side": s, text: "\u2014" });
    return el("td", { cls: "num", "data-side": s }, [
      el("span", { cls: "mean", text: f3(x.share) }),
      el("span", { cls: "ci", text: ciText(x.ci95) }),
      el("span", { cls: "n", text: "n=" + x.n }),
    ]);
  };
  box.appendChild(
    el("table", { cls: "funnelcompare" }, [
      el("thead", null, [
        el(
          "tr",
          null,
          ["stage", "A", "B", "n paired", "B \u2212 A", "95% CI", "p"].map((h) =>
            el("th", { cls: h === "stage" ? "" : "num", text: h }),
          ),
        ),
      ]),
      el(
        "tbody",
        null,
        fc.diff.map((d: FunnelStageDiff) =>
          el("tr", { "data-stage": d.stage }, [
            el("th", { text: STAGE_LABEL[d.stage] || d.label }),
            side(fc.a, d.stage, "a"),
            side(fc.b, d.stage, "b"),
            el("td", { cls: "num", "data-field": "n", text: String(d.n) }),
            el("td", {
              cls: "num " + (d.diff < 0 ? "miss" : d.diff > 0 ? "hit" : ""),
              "data-side": "diff",
              text: signed(d.diff),
            }),
            el("td", {
              cls: "num",
              "data-field": "ci",
              text: d.ci95 ? "[" + signed(d.ci95[0]) + ", " + signed(d.ci95[1]) + "]" : "(n < 2)",
            }),
            el("td", { cls: "num", "data-field": "p", text: fmtP(d.pValue) }),
          ]),
        ),
      ),
    ]),
  );
  box.appendChild(
    el("p", {
      cls: "note",
      "data-field": "funnel-compare-method",
      text:
        "Share = gold-bearing turns whose gold is still present at the stage; A and B each over their own turns, with 95% intervals. B \u2212 A is paired over the turns both runs measured (caseId#turn): " +
        data.method.test +
        "; resampling unit: " +
        data.method.unit +
        ", " +
        data.method.samples +
        " resamples, seed " +
        data.method.seed +
        ".",
    }),
  );
  return box;
}
function comparePage(data: ComparePageData): void {
  const A = data.a,
    B = data.b;
  const cmp = el("div");
  cmp.appendChild(el("h2", { text: "Paired differences (B \u2212 A) over the turns both runs scored" }));
  cmp.appendChild(
    el("table", { cls: "comparison" }, [
      el("thead", null, [
        el(
          "tr",
          null,
          [
            "metric",
            "n turns",
            "n cases",
            "A",
            "B",
            "B \u2212 A",
            "95% CI (" + data.method.unit + "s)",
            "p",
            "p adj (m)",
            "",
          ].map((h) => el("th", { cls: h === "metric" || h === "" ? "" : "num", text: h })),
        ),
      ]),
      el(
        "tbody",
        null,
        data.comparisons.map((c) =>
          el("tr", { "data-key": c.key, "data-turns": c.turns }, [
            el("th", { text: label(A, c.key) + (c.turns === "holdout" ? " (held-out)" : "") }),
            el("td", { cls: "num", text: String(c.n) }),
            el("td", { cls: "num", text: String(c.nCases) }),
            el("td", { cls: "num", "data-side": "a", text: f3(c.meanA) }),
            el("td", { cls: "num", "data-side": "b", text: f3(c.meanB) }),
            el("td", {
              cls: "num " + (c.diff < 0 ? "miss" : c.diff > 0 ? "hit" : ""),
              "data-side": "diff",
              text: signed(c.diff),
            }),
            el("td", {
              cls: "num",
              "data-field": "ci",
              text: c.ci95 ? "[" + signed(c.ci95[0]) + ", " + signed(c.ci95[1]) + "]" : "(< 2 " + c.unit + "s)",
            }),
            el("td", { cls: "num", "data-field": "p", text: fmtP(c.pValue) }),
            el("td", { cls: "num", "data-field": "p-adjusted", text: fmtP(c.pAdjusted) + " (" + c.familySize + ")" }),
            el("td", { "data-field": "verdict", text: c.verdict }),
          ]),
        ),
      ),
    ]),
  );
  // The test, unit, seed and correction as retrace compare prints them (src/eval/gate/compare.ts comparisonNote).
  data.note.forEach((line) => {
    cmp.appendChild(el("p", { cls: "note", "data-field": "comparison-method", text: line }));
  });
  cmp.appendChild(funnelCompare(data));
  cmp.appendChild(
    el("div", { cls: "cols" }, [
      el("div", { "data-run": "a" }, [
        el("h2", { text: "A: " + A.name }),
        el("p", { cls: "note", text: runLine(A) }),
        summaryPanel(A, true),
      ]),
      el("div", { "data-run": "b" }, [
        el("h2", { text: "B: " + B.name }),
        el("p", { cls: "note", text: runLine(B) }),
        summaryPanel(B, true),
      ]),
    ]),
  );
  const flipBox = el("div");
  const view = el("div");
  function openFlip(f: PageFlip): void {
    view.textContent = "";
    const back = el("button", { type: "button", cls: "link", text: "\u2190 back to flipped turns" });
    back.addEventListener("click", () => {
      ui.show("flips");
    });
    view.appendChild(back);
    view.appendChild(el("h2", { text: f.id + "  " + f.direction }));
    view.appendChild(
      el("div", { cls: "cols" }, [
        el("div", { "data-run": "a" }, [el("h3", { text: "A: " + A.name }), turnView(A, f.a)]),
        el("div", { "data-run": "b" }, [el("h3", { text: "B: " + B.name }), turnView(B, f.b)]),
      ]),
    );
    ui.show("pair");
  }
  if (data.flips.length === 0) flipBox.appendChild(el("p", { text: "No turn flipped between hit and miss." }));
  else {
    const tb = el("tbody");
    data.flips.forEach((f, j) => {
      const t = turnAt(A, f.a);
      const row = el("tr", { "data-flip": j, "data-turn": f.id, "data-direction": f.direction }, [
        el("td", { cls: f.direction === "hit\u2192miss" ? "miss" : "hit", text: f.direction }),
        el("td", { text: f.id }),
        el("td", { text: t.locale }),
        el("td", { text: t.kind }),
        el("td", { text: t.gold.join(", ") }),
        el("td", { text: t.user }),
      ]);
      row.addEventListener("click", () => {
        openFlip(f);
      });
      tb.appendChild(row);
    });
    const flipHeads: [string, string][] = [
      ["flip", "9%"],
      ["turn", "17%"],
      ["locale", "7%"],
      ["kind", "9%"],
      ["gold", "20%"],
      ["user text", "38%"],
    ];
    flipBox.appendChild(
      el("table", { cls: "turns flips" }, [
        el("thead", null, [
          el(
            "tr",
            null,
            flipHeads.map((h) => el("th", { text: h[0], width: h[1] })),
          ),
        ]),
        tb,
      ]),
    );
    flipBox.appendChild(
      el("p", {
        cls: "note",
        text:
          data.flips.filter((f) => f.direction === "hit\u2192miss").length +
          " hit\u2192miss (listed first), " +
          data.flips.filter((f) => f.direction === "miss\u2192hit").length +
          " miss\u2192hit. Click a row to open both runs' turn views.",
      }),
    );
  }
  const shifts = data.shifts || [];
  flipBox.appendChild(
    el("h2", {
      text:
        "Turns whose hit@k held but recall@k or nDCG@k moved by \u2265 " +
        data.shiftThreshold +
        " (" +
        shifts.length +
        ")",
    }),
  );
  if (shifts.length === 0) flipBox.appendChild(el("p", { cls: "muted", text: "None." }));
  else {
    const sb = el("tbody");
    shifts.forEach((f, j) => {
      const t = turnAt(A, f.a);
      const big = Math.abs(f.ndcg) > Math.abs(f.recall) ? f.ndcg : f.recall;
      const row = el("tr", { "data-shift": j, "data-turn": f.id }, [
        el("td", { text: f.hit === 1 ? "hit" : "miss" }),
        el("td", { text: f.id }),
        el("td", { text: t.locale }),
        el("td", { text: t.kind }),
        el("td", {
          cls: "num " + (f.recall < 0 ? "miss" : f.recall > 0 ? "hit" : ""),
          "data-delta": "recall",
          text: signed(f.recall),
        }),
        el("td", {
          cls: "num " + (f.ndcg < 0 ? "miss" : f.ndcg > 0 ? "hit" : ""),
          "data-delta": "ndcg",
          text: signed(f.ndcg),
        }),
        el("td", { text: t.user }),
      ]);
      row.addEventListener("click", () => {
        openFlip({
          id: f.id,
          direction: (big < 0 ? "drop" : "gain") + " (recall " + signed(f.recall) + ", nDCG " + signed(f.ndcg) + ")",
          a: f.a,
          b: f.b,
        });
      });
      sb.appendChild(row);
    });
    const shiftHeads: [string, string][] = [
      ["hit@k", "7%"],
      ["turn", "17%"],
      ["locale", "7%"],
      ["kind", "9%"],
      ["\u0394 recall", "8%"],
      ["\u0394 nDCG", "8%"],
      ["user text", "44%"],
    ];
    flipBox.appendChild(
      el("table", { cls: "turns shifts" }, [
        el("thead", null, [
          el(
            "tr",
            null,
            shiftHeads.map((h) => el("th", { text: h[0], width: h[1] })),
          ),
        ]),
        sb,
      ]),
    );
    flipBox.appendChild(
      el("p", {
        cls: "note",
        text: "B \u2212 A per turn; biggest drop first, biggest gain last (by the larger of the two changes). Flipped turns are listed above, not here. Click a row to open both runs' turn views.",
      }),
    );
  }
  const ui = frame(
    "retrace compare \u2014 A: " + A.name + "  vs  B: " + B.name,
    "dataset " + A.report.run.datasetHash.slice(0, 12) + "  k=" + A.report.run.k,
    [
      { id: "summary", label: "Summaries", content: cmp },
      { id: "flips", label: "Flipped turns (" + data.flips.length + ")", content: flipBox },
      { id: "pair", label: "Turn A | B", content: view },
    ],
  );
}

// ------------------------------------------------------------ start: unpack the data, then draw
// The data element holds the page's JSON, gzip-compressed, in base64 (docs/html-report.md, "Size").
// It is decoded with the browser's own DecompressionStream and read with JSON.parse: never as HTML.
const TOO_OLD =
  "This browser is too old to open this report: the report's data is compressed, and this browser has no DecompressionStream to unpack it. Open the file in Chromium 80 or later, Firefox 113 or later, or Safari 16.4 or later.";

startPage(
  TOO_OLD,
  (data) => {
    DATA = data as PageData;
    const metrics = DATA.registry.metrics,
      stages = DATA.registry.stages;
    HIT = metrics.key.hit;
    RECALL = metrics.key.recall;
    NDCG = metrics.key.ndcg;
    TRIAD = metrics.triad;
    STAGE_LABEL = stages.label;
    STAGE_COLOR = stages.color;
    TRACE_STAGES = stages.trace;
    ATTR_ORDER = DATA.registry.attribution.order;
    ATTR_LABEL = DATA.registry.attribution.label;
    QUERY_ORDER = DATA.registry.queries.order;
    QUERY_SIDE = DATA.registry.queries.sideBySide;
    QUERY_LABEL = DATA.registry.queries.label;
    QUERY_UNATTRIBUTED = DATA.registry.queries.unattributed;
    if (DATA.kind === "compare") comparePage(DATA);
    else reportPage(DATA.run);
  },
  (reason) =>
    "This report's embedded data could not be unpacked (" +
    reason +
    "): the file may be truncated or damaged. Write it again with retrace.",
);
