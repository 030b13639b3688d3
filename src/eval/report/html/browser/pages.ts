/**
 * The page frame (title, tabs) and the report page. Part of the page script (./report.ts).
 */
import { byId, el } from "./dom.js";
import { conversationPanel } from "./conversation.js";
import { turnId } from "./format.js";
import { funnelPanel } from "./funnel.js";
import type { Run } from "./registry.js";
import { runLine, summaryPanel } from "./summary.js";
import { turnAt } from "./summary-parts.js";
import { turnView } from "./turn.js";
import { turnsPanel } from "./turns.js";

// ------------------------------------------------------------ page frame
export interface Tab {
  id: string;
  label: string;
  content: Node;
}
export interface Frame {
  show: (id: string) => void;
}
export function frame(title: string, sub: string, tabs: readonly Tab[], extra?: readonly string[]): Frame {
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

export function reportPage(run: Run): void {
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
