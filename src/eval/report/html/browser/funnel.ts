/**
 * The Stage funnel tab: the funnel drawn and tabled, the recall curves, the funnel's case-level intervals by split (report.funnel: src/eval/report/funnel-stats.ts). Part of the page script (./report.ts).
 */
import type { FunnelStage } from "../../types.js";
import { el, svg } from "./dom.js";
import { ciText, f3, groupLabel } from "./format.js";
import type { Run } from "./registry.js";
import { HIT, STAGE_COLOR, STAGE_LABEL } from "./registry.js";

// ------------------------------------------------------------ stage funnel and recall curves
export type Curves = NonNullable<Run["report"]["recallCurves"]>["all"];
// The report's funnel (report.funnel: src/eval/report/funnel-stats.ts) as bars and counts: present / n per stage, as the report counted them.
export function funnelSvg(rows: readonly FunnelStage[]): SVGElement {
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
export type Funnel = NonNullable<Run["report"]["funnel"]>;
export function funnelTable(f: Funnel): HTMLTableElement {
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
export function curvesSvg(c: Curves, runK: number): SVGElement {
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
export function legend(curves: Curves["curves"]): HTMLDivElement {
  return el(
    "div",
    { cls: "legend" },
    curves.map((cv) => el("span", null, [swatch(cv.stage), STAGE_LABEL[cv.stage] || cv.stage])),
  );
}
export function swatch(stage: string): SVGElement {
  const s = svg("svg", { width: 14, height: 8 });
  s.appendChild(svg("line", { x1: 0, x2: 14, y1: 4, y2: 4, stroke: STAGE_COLOR[stage] || "#333", "stroke-width": 3 }));
  return s;
}
export function funnelPanel(run: Run): HTMLDivElement {
  const v = run.view,
    curves = run.report.recallCurves,
    box = el("div");
  box.appendChild(
    el("h2", { text: "Stage funnel with 95% intervals: share of gold-bearing turns whose gold is still present" }),
  );
  box.appendChild(funnelStatsBlock(run, null));
  const f = run.report.funnel;
  if (!f || !curves || curves.all.curves.length === 0) {
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
  box.appendChild(el("h2", { text: "recall@k per stage, k = 1.." + curves.all.maxK }));
  const sel = el("select", { "aria-label": "locale of the curves" }, [
    el("option", { value: "all", text: "all locales" }),
    ...Object.keys(curves.locale).map((l) => el("option", { value: l, text: l })),
  ]);
  const holder = el("div", { cls: "chart" });
  const draw = (): void => {
    const c = sel.value === "all" ? curves.all : curves.locale[sel.value];
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
export function funnelStatCell(s: FunnelStage | undefined, id: string): HTMLTableCellElement {
  if (!s) return el("td", { cls: "num muted", "data-funnel-stat": id, text: "\u2014" });
  return el("td", { cls: "num", "data-funnel-stat": id }, [
    el("span", { cls: "mean", text: f3(s.share) }),
    el("span", { cls: "ci", text: ciText(s.ci95) }),
    el("span", { cls: "n", text: "n=" + s.n }),
    el("span", { cls: "extra", text: s.present + " present, " + s.nCases + " cases" }),
  ]);
}
// Overall, then every group of one split of report.funnel.splits (position, kind, locale, part).
export function funnelStatTable(f: Funnel, split: string): HTMLTableElement {
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
export function funnelStatsBlock(run: Run, fixed: string | null): HTMLDivElement {
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
