/**
 * The Summary tab's parts: a split's table with its intervals, the metric chart, the gate, the missed turns. Part of the page script (./report.ts).
 */
import type { Aggregate } from "../../types.js";
import { el, svg } from "./dom.js";
import { ciText, f3, groupLabel, label, outcomeText, ths, topKText, turnId } from "./format.js";
import type { Group, Run, Turn } from "./registry.js";

// ------------------------------------------------------------ summary
export function aggCell(
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
export function splitTable(run: Run, split: string, groups: readonly Group[]): HTMLTableElement {
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
export function chart(run: Run, key: string): HTMLDivElement {
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
export function gateBlock(r: Run["report"]): HTMLElement {
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
export const KNOWN_TOP = [
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
  "turnOutcomes",
  "summaryRepeats",
  "chance",
  "answerSide",
  "timings",
  "measuresNotComputed",
];
// The summary's columns and tables that repeat another (the report's summaryRepeats, src/eval/report/turn-outcomes.ts): not drawn.
export function repeats(run: Run): NonNullable<Run["report"]["summaryRepeats"]> {
  return run.report.summaryRepeats || [];
}
// The run's gold-bearing turns (the report's turnOutcomes).
export function goldBearingCount(run: Run): number {
  return run.report.turnOutcomes ? run.report.turnOutcomes.goldBearing : 0;
}
export function hiddenTable(run: Run, split: string): boolean {
  return repeats(run).some((x) => x.split === split && x.group === null);
}
export function hiddenGroup(run: Run, split: string, g: string): boolean {
  return repeats(run).some((x) => x.split === split && x.group === g);
}
// The missed turns, in dataset order, each opening its turn view (the Summary tab leads with them).
export function missedBlock(run: Run, openTurn: (i: number) => void): HTMLDivElement {
  const r = run.report,
    box = el("div", { "data-section": "missed" });
  // The report lists the missed turns (indices into its turns) and counts them (turnOutcomes, src/eval/report/turn-outcomes.ts).
  const to = r.turnOutcomes,
    missed = to ? to.missedTurns : [];
  box.appendChild(
    el("h2", { text: "Missed turns (" + (to ? to.missed : 0) + " of " + goldBearingCount(run) + " gold-bearing)" }),
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
export function turnAt(run: Run, i: number): Turn {
  const t = run.report.turns[i];
  if (t === undefined) throw new Error("no turn " + i);
  return t;
}
