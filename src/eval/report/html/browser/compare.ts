/**
 * The compare page (`retrace compare --out html:`): both runs, the paired differences, the funnels and the flips, as src/eval/gate/compare.ts computed them. Part of the page script (./report.ts).
 */
import type { FunnelStage } from "../../types.js";
import type { FunnelStageDiff } from "../../funnel-stats.js";
import type { ComparePageData, PageFlip } from "../page-data.js";
import { el } from "./dom.js";
import { ciText, f3, fmtP, label, signed } from "./format.js";
import { frame } from "./pages.js";
import { STAGE_LABEL } from "./registry.js";
import { runLine, summaryPanel } from "./summary.js";
import { turnAt } from "./summary-parts.js";
import { turnView } from "./turn.js";

export function funnelCompare(data: ComparePageData): HTMLDivElement {
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
export function comparePage(data: ComparePageData): void {
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
          data.flipCounts.hitToMiss +
          " hit\u2192miss (listed first), " +
          data.flipCounts.missToHit +
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
          direction: f.change + " (recall " + signed(f.recall) + ", nDCG " + signed(f.ndcg) + ")",
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
