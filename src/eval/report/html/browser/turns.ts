/**
 * The Turns tab: every turn in a sortable, filterable table, each opening its turn view. Part of the page script (./report.ts).
 */
import { el } from "./dom.js";
import { f3, outcome, outcomeText, score, topKText, turnId } from "./format.js";
import type { Run, Turn } from "./registry.js";
import { NDCG, RECALL } from "./registry.js";
import { turnAt } from "./summary-parts.js";

// ------------------------------------------------------------ turns table
export interface Column {
  id: string;
  label: string;
  width: string;
  num?: boolean;
  value: (t: Turn, i: number) => number | string;
  text?: (t: Turn) => string;
}
export const OUTCOME_ORDER: Record<string, number> = { miss: 0, error: 0.5, hit: 1, "not measured": 2, "no gold": 3 };
export const COLS: Column[] = [
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
export function turnsPanel(run: Run, openTurn: (i: number) => void): HTMLDivElement {
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
