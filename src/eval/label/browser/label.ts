/**
 * The script of the labelling page (docs/labelling.md), bundled into its one
 * inline script by scripts/build-browser.ts (../client-bundle.generated.ts;
 * the CSP pins its SHA-256), under the report page's rules
 * (src/eval/report/html/browser/dom.ts): the data is unpacked from the page's
 * gzip+base64 element and read with JSON.parse; the DOM is built with
 * createElement/textContent only (no innerHTML, no inline handlers, no
 * network). The person's work is kept in localStorage under a key holding the
 * page's pool hash; Export downloads the labelled cases as a data: URL
 * (nothing leaves the browser).
 */
import { byId, el, startPage } from "../../report/html/browser/dom.js";
import type { LabelCase, LabelPageData, PooledCard } from "../pool.js";

/** A turn's entry: g (card id -> grade given by the person), c (citeable card ids), r (refuse), touched. */
interface TurnState {
  g: Record<string, number>;
  c: string[];
  r: boolean;
  touched: boolean;
}
interface Position {
  c: number;
  t: number;
  p: number;
}
/** A turn of the case's original line, as far as the page reads it. */
interface OriginalTurn {
  judged?: string[];
  relevant?: Record<string, number>;
  must_cite_one_of?: string[];
  expect?: string;
  [field: string]: unknown;
}

let DATA: LabelPageData;
let STORE_KEY: string;
let STATE: { v: 1; turns: Record<string, TurnState> };
let storageOk = true;
let pos: Position = { c: 0, t: 0, p: 0 };
const GRADE_TEXT = ["not relevant", "relevant", "highly relevant", "perfectly relevant"];

function own(o: object, k: string): boolean {
  return Object.prototype.hasOwnProperty.call(o, k);
}
function caseAt(ci: number): LabelCase {
  const c = DATA.cases[ci];
  if (c === undefined) throw new Error("no case " + ci);
  return c;
}
function turnAt(ci: number, ti: number): LabelCase["turns"][number] {
  const t = caseAt(ci).turns[ti];
  if (t === undefined) throw new Error("no turn " + ci + "#" + ti);
  return t;
}
function originalTurns(c: LabelCase): OriginalTurn[] {
  const turns = c.original.turns;
  return Array.isArray(turns) ? (turns as OriginalTurn[]) : [];
}
function turnKey(ci: number, ti: number): string {
  return caseAt(ci).id + "#" + ti;
}

// ------------------------------------------------------------ state: the person's work, kept in localStorage
function initialTurn(turn: OriginalTurn): TurnState {
  const s: TurnState = { g: {}, c: [], r: false, touched: false };
  if (turn.judged)
    turn.judged.forEach((id) => {
      s.g[id] = 0;
      s.touched = true;
    });
  const relevant = turn.relevant;
  if (relevant)
    Object.keys(relevant).forEach((id) => {
      s.g[id] = relevant[id] ?? 0;
      s.touched = true;
    });
  if (turn.must_cite_one_of) {
    s.c = turn.must_cite_one_of.slice();
    s.touched = true;
  }
  if (turn.expect === "refuse") s.r = true;
  return s;
}
interface Saved {
  v?: unknown;
  turns?: Record<string, TurnState>;
  pos?: Position;
}
function load(): void {
  let saved: Saved | null = null;
  try {
    const raw = window.localStorage.getItem(STORE_KEY);
    if (raw) saved = JSON.parse(raw) as Saved;
  } catch {
    storageOk = false;
  }
  STATE = { v: 1, turns: {} };
  DATA.cases.forEach((c, ci) => {
    const orig = originalTurns(c);
    c.turns.forEach((_t, ti) => {
      STATE.turns[turnKey(ci, ti)] = initialTurn(orig[ti] || {});
    });
  });
  if (saved && saved.v === 1 && saved.turns) {
    const turns = saved.turns;
    Object.keys(turns).forEach((k) => {
      const t = turns[k];
      if (own(STATE.turns, k) && t !== undefined) STATE.turns[k] = t;
    });
    const p = saved.pos;
    if (p && DATA.cases[p.c] && DATA.cases[p.c]?.turns[p.t]) pos = p;
  }
}
function save(): void {
  if (!storageOk) return;
  try {
    window.localStorage.setItem(STORE_KEY, JSON.stringify({ v: 1, turns: STATE.turns, pos }));
  } catch {
    storageOk = false;
  }
}
function ts(ci: number, ti: number): TurnState {
  const s = STATE.turns[turnKey(ci, ti)];
  if (s === undefined) throw new Error("no state for " + turnKey(ci, ti));
  return s;
}

// ------------------------------------------------------------ progress and agreement
function turnDone(ci: number, ti: number): boolean {
  const s = ts(ci, ti),
    pool = turnAt(ci, ti).pool;
  if (!s.touched) return false;
  for (const p of pool) if (!own(s.g, p.id)) return false;
  return true;
}
// Graded relevant, nothing citeable, not a refusal: the export carries relevance only, scored for nDCG only (docs/labelling.md).
function relevanceOnly(ci: number, ti: number): boolean {
  const s = ts(ci, ti);
  if (s.c.length > 0 || s.r) return false;
  return Object.keys(s.g).some((id) => (s.g[id] ?? 0) > 0);
}
function caseProgress(ci: number): { done: number; turns: number; judged: number; cards: number; ndcgOnly: number } {
  const c = caseAt(ci);
  let done = 0,
    cards = 0,
    judged = 0,
    ndcgOnly = 0;
  c.turns.forEach((t, ti) => {
    if (turnDone(ci, ti)) done++;
    if (relevanceOnly(ci, ti)) ndcgOnly++;
    cards += t.pool.length;
    t.pool.forEach((p) => {
      if (own(ts(ci, ti).g, p.id)) judged++;
    });
  });
  return { done, turns: c.turns.length, judged, cards, ndcgOnly };
}
// Cohen's kappa, unweighted (src/eval/stats/kappa.ts): the judge's suggestion against the person's grade, over cards carrying both.
function agreement(): { n: number; kappa: number | null; observed: number } {
  const a: number[] = [],
    b: number[] = [];
  DATA.cases.forEach((c, ci) => {
    c.turns.forEach((t, ti) => {
      const s = ts(ci, ti);
      t.pool.forEach((p) => {
        const given = s.g[p.id];
        if (p.suggested !== undefined && own(s.g, p.id) && given !== undefined) {
          a.push(p.suggested);
          b.push(given);
        }
      });
    });
  });
  const n = a.length;
  if (n === 0) return { n: 0, kappa: null, observed: 0 };
  const cats: Record<string, [number, number]> = {};
  let agree = 0;
  for (let i = 0; i < n; i++) {
    const x = String(a[i]),
      y = String(b[i]);
    const cx = (cats[x] = cats[x] || [0, 0]);
    const cy = (cats[y] = cats[y] || [0, 0]);
    cx[0]++;
    cy[1]++;
    if (a[i] === b[i]) agree++;
  }
  let pe = 0;
  Object.keys(cats).forEach((k) => {
    const ck = cats[k] ?? [0, 0];
    pe += (ck[0] / n) * (ck[1] / n);
  });
  const po = agree / n;
  return { n, observed: po, kappa: pe === 1 ? null : (po - pe) / (1 - pe) };
}

// ------------------------------------------------------------ export: the cases file with the labelled turns' fields
function exportedTurn(ci: number, ti: number): Record<string, unknown> {
  const orig = originalTurns(caseAt(ci))[ti] || {};
  const s = ts(ci, ti);
  if (!s.touched) return orig;
  const pool = turnAt(ci, ti).pool,
    order = pool.map((p) => p.id);
  Object.keys(s.g)
    .sort()
    .forEach((id) => {
      if (order.indexOf(id) < 0) order.push(id);
    });
  const out: Record<string, unknown> = {};
  Object.keys(orig).forEach((k) => {
    if (k !== "relevant" && k !== "judged" && k !== "suggested" && k !== "must_cite_one_of" && k !== "expect")
      out[k] = orig[k];
  });
  const rel: Record<string, number> = {},
    judged: string[] = [];
  let any = false;
  order.forEach((id) => {
    const grade = s.g[id];
    if (own(s.g, id) && grade !== undefined) {
      judged.push(id);
      if (grade > 0) {
        rel[id] = grade;
        any = true;
      }
    }
  });
  // Relevant cards but none citeable (and not a refusal): graded relevance only, scored for nDCG only (docs/labelling.md).
  if (s.c.length > 0 || s.r || !any) {
    const cite = order.filter((id) => s.c.indexOf(id) >= 0);
    s.c.forEach((id) => {
      if (cite.indexOf(id) < 0) cite.push(id);
    });
    out.must_cite_one_of = cite;
    out.expect = s.r ? "refuse" : "answer";
  }
  if (any) out.relevant = rel;
  if (judged.length > 0) out.judged = judged;
  if (DATA.judge !== null) {
    const sug: Record<string, number> = {};
    let has = false;
    pool.forEach((p) => {
      if (p.suggested !== undefined) {
        sug[p.id] = p.suggested;
        has = true;
      }
    });
    if (has) out.suggested = sug;
  }
  return out;
}
function exportText(): string {
  return (
    DATA.cases
      .map((c, ci) => {
        const line: Record<string, unknown> = {};
        Object.keys(c.original).forEach((k) => {
          line[k] = c.original[k];
        });
        line.turns = c.turns.map((_, ti) => exportedTurn(ci, ti));
        return JSON.stringify(line);
      })
      .join("\n") + "\n"
  );
}
function doExport(): void {
  const text = exportText();
  const a = byId("export-link");
  a.setAttribute("href", "data:application/x-ndjson;charset=utf-8," + encodeURIComponent(text));
  a.setAttribute("download", DATA.exportName);
  a.setAttribute("data-lines", String(DATA.cases.length));
  a.textContent = "download again";
  a.click();
}

// ------------------------------------------------------------ drawing
function rankBadges(p: PooledCard): HTMLSpanElement[] {
  return DATA.systems
    .filter((s) => p.ranks[s] !== undefined)
    .map((s) => el("span", { cls: "rank", "data-system": s, text: s + " #" + p.ranks[s] }));
}
function passage(p: PooledCard): HTMLParagraphElement {
  if (p.passage.length === 0) return el("p", { cls: "passage muted", text: "(no text known for this card)" });
  return el(
    "p",
    { cls: "passage" },
    p.passage.map((seg) => (seg[1] ? el("mark", { text: seg[0] }) : seg[0])),
  );
}
function drawCases(): void {
  const nav = byId("cases");
  nav.textContent = "";
  DATA.cases.forEach((c, ci) => {
    const pr = caseProgress(ci);
    const first = c.turns[0]?.user;
    // Listed by the first user message (what the person recognises), the id under it.
    const b = el(
      "button",
      {
        type: "button",
        "data-case": c.id,
        title: first,
        cls: (ci === pos.c ? "current" : "") + (pr.done === pr.turns ? " done" : ""),
      },
      [
        el("span", { cls: "first", text: first }),
        el("span", { cls: "cid", text: c.id }),
        el("span", { cls: "prog", "data-progress": c.id }, [
          pr.done + "/" + pr.turns + " turns labelled \u00b7 " + pr.judged + "/" + pr.cards + " cards",
          pr.ndcgOnly > 0 ? el("span", { cls: "ndcg-only", text: " \u00b7 " + pr.ndcgOnly + " nDCG only" }) : null,
        ]),
      ],
    );
    b.addEventListener("click", () => {
      go(ci, 0, 0);
    });
    nav.appendChild(b);
  });
  applySearch();
}
function drawSummary(): void {
  const total = { done: 0, turns: 0 };
  DATA.cases.forEach((_, ci) => {
    const p = caseProgress(ci);
    total.done += p.done;
    total.turns += p.turns;
  });
  byId("progress").textContent = total.done + " of " + total.turns + " turns labelled";
  const k = byId("kappa");
  if (DATA.judge === null) {
    k.textContent = "";
    return;
  }
  const ag = agreement();
  k.setAttribute("data-n", String(ag.n));
  k.textContent =
    "judge agreement: Cohen's \u03ba (unweighted) " +
    (ag.kappa === null ? "undefined" : ag.kappa.toFixed(3)) +
    ", n=" +
    ag.n +
    " confirmed cards" +
    (ag.n > 0 ? ", observed agreement " + ag.observed.toFixed(3) : "");
}
/** Earlier turns shown unfolded above the current one; the rest of a long conversation is folded. */
const SHOWN_EARLIER = 3;
function drawTurn(): void {
  const c = caseAt(pos.c),
    t = turnAt(pos.c, pos.t),
    s = ts(pos.c, pos.t);
  const main = byId("turn");
  main.textContent = "";
  main.setAttribute("data-case", c.id);
  main.setAttribute("data-turn", String(pos.t));
  // Turns are numbered from #0, as in every key (caseId#N), trace --turn and the report's position splits (docs/labelling.md).
  main.appendChild(
    el("h2", { text: c.id + " \u00b7 turn #" + pos.t + " (turns #0\u2013#" + (c.turns.length - 1) + ")" }, []),
  );
  main.appendChild(el("p", { cls: "note", text: c.locale + " \u00b7 " + c.kind }));
  const convo = el("div", { cls: "convo" });
  // A long conversation keeps the cards in view: the turns before the last SHOWN_EARLIER earlier ones are folded (docs/labelling.md).
  const first = Math.max(0, pos.t - SHOWN_EARLIER);
  const folded =
    first > 0
      ? el("details", { cls: "earlier", "data-turns": String(first) }, [
          el("summary", {
            text: "turns #0\u2013#" + (first - 1) + " (" + first + " earlier turn" + (first === 1 ? "" : "s") + ")",
          }),
        ])
      : null;
  if (folded !== null) convo.appendChild(folded);
  for (let i = 0; i <= pos.t; i++) {
    const ti = turnAt(pos.c, i);
    const into = i < first && folded !== null ? folded : convo;
    (ti.context || []).forEach((said) => {
      into.appendChild(
        el("div", { cls: "msg assistant", "data-role": "assistant" }, [
          el("span", { cls: "who", text: "assistant" }),
          said,
        ]),
      );
    });
    into.appendChild(
      el("div", { cls: "msg" + (i === pos.t ? " current" : ""), "data-role": "user" }, [
        el("span", { cls: "who", text: "user #" + i }),
        ti.user,
      ]),
    );
  }
  main.appendChild(convo);
  // The query each system searched with, systems with the same query on one line.
  const bySearch: { q: string; systems: string[] }[] = [],
    seen: Record<string, number> = {};
  DATA.systems.forEach((sys) => {
    const q = t.queries[sys];
    if (q === undefined) return;
    if (!own(seen, q)) {
      seen[q] = bySearch.length;
      bySearch.push({ q, systems: [] });
    }
    bySearch[seen[q] ?? 0]?.systems.push(sys);
  });
  bySearch.forEach((x) => {
    main.appendChild(
      el(
        "div",
        { cls: "query searched", "data-systems": x.systems.join(","), title: "the query these systems searched with" },
        [el("span", { cls: "sys", text: x.systems.join(", ") + " searched:" }), x.q],
      ),
    );
  });
  main.appendChild(
    el("p", {
      cls: "expect" + (s.r ? " refuse" : ""),
      "data-expect": s.r ? "refuse" : "answer",
      text: "expect: " + (s.r ? "refuse (the assistant should decline)" : "answer"),
    }),
  );
  const ro = relevanceOnly(pos.c, pos.t);
  main.appendChild(
    el("p", {
      cls: "gold" + (ro ? " relevance-only" : ""),
      "data-gold": ro ? "relevance-only" : s.c.length > 0 ? "citeable" : "none",
      text: ro
        ? "relevance only: cards graded relevant, none citeable \u2014 this turn is scored for nDCG only (no hit@k, recall@k); press c on a card that answers it"
        : s.c.length > 0
          ? "citeable: " + s.c.join(", ")
          : "no card citeable",
    }),
  );
  main.appendChild(
    el("p", { cls: "keys" }, [
      el("kbd", { text: "0" }),
      " not ",
      el("kbd", { text: "1" }),
      " relevant ",
      el("kbd", { text: "2" }),
      " highly relevant ",
      el("kbd", { text: "3" }),
      " perfectly \u00b7 ",
      el("kbd", { text: "x" }),
      " every ungraded card 0 \u00b7 ",
      el("kbd", { text: "c" }),
      " citeable \u00b7 ",
      el("kbd", { text: "a" }),
      " accept suggestion \u00b7 ",
      el("kbd", { text: "r" }),
      " expect refuse \u00b7 ",
      el("kbd", { text: "j" }),
      "/",
      el("kbd", { text: "k" }),
      " next/previous card \u00b7 ",
      el("kbd", { text: "n" }),
      "/",
      el("kbd", { text: "p" }),
      " next/previous turn \u00b7 ",
      el("kbd", { text: "/" }),
      " search",
    ]),
  );
  if (t.pool.length === 0)
    main.appendChild(
      el("p", {
        cls: "note",
        text: "No system retrieved a card for this turn: press r if the assistant should refuse, or 0 to mark the turn labelled with no citeable card.",
      }),
    );
  t.pool.forEach((p, pi) => {
    const graded = own(s.g, p.id),
      grade = graded ? s.g[p.id] : null,
      cite = s.c.indexOf(p.id) >= 0;
    const grades = el(
      "span",
      { cls: "grades" },
      [0, 1, 2, 3].map((g) => {
        const b = el("button", {
          type: "button",
          "data-grade-button": g,
          title: GRADE_TEXT[g],
          cls: grade === g ? "on" : "",
          text: String(g),
        });
        b.addEventListener("click", () => {
          pos.p = pi;
          gradeTurn(g);
        });
        return b;
      }),
    );
    const citeB = el("button", {
      type: "button",
      cls: "cite" + (cite ? " on" : ""),
      text: cite ? "citeable" : "not citeable",
    });
    citeB.addEventListener("click", () => {
      pos.p = pi;
      toggleCite();
    });
    const suggested = p.suggested;
    const card = el(
      "div",
      {
        cls: "card" + (pi === pos.p ? " focus" : ""),
        "data-card": p.id,
        "data-grade": graded ? grade : "",
        "data-citeable": cite ? "1" : "0",
      },
      [
        el("div", { cls: "head" }, [
          el("span", { cls: "title", text: p.title }),
          el("span", { cls: "cid", text: p.id }),
          ...rankBadges(p),
          grades,
          citeB,
        ]),
        suggested !== undefined
          ? el("div", {
              cls: "suggest" + (graded ? " confirmed" : ""),
              "data-suggested": suggested,
              text: graded
                ? "judge suggested " + suggested + " (" + GRADE_TEXT[suggested] + ")"
                : "suggestion: " +
                  suggested +
                  " (" +
                  GRADE_TEXT[suggested] +
                  ") \u2014 press a to accept, or grade it yourself",
            })
          : null,
        passage(p),
      ],
    );
    card.addEventListener("click", () => {
      if (pos.p !== pi) {
        pos.p = pi;
        redraw();
      }
    });
    main.appendChild(card);
  });
}
function redraw(): void {
  save();
  drawCases();
  drawSummary();
  drawTurn();
  const f = document.querySelector(".card.focus");
  if (f && f.scrollIntoView) f.scrollIntoView({ block: "nearest" });
}

// ------------------------------------------------------------ actions
function go(ci: number, ti: number, pi: number): void {
  pos = { c: ci, t: ti, p: pi };
  redraw();
}
function poolLen(): number {
  return turnAt(pos.c, pos.t).pool.length;
}
function gradeTurn(g: number): void {
  const s = ts(pos.c, pos.t),
    pool = turnAt(pos.c, pos.t).pool;
  s.touched = true;
  const p = pool[pos.p];
  if (p !== undefined) {
    s.g[p.id] = g;
    if (pos.p < pool.length - 1) pos.p++;
  }
  redraw();
}
// x: every card of the turn not graded yet gets 0 (not relevant); grades already given stay.
function restNotRelevant(): void {
  const s = ts(pos.c, pos.t),
    pool = turnAt(pos.c, pos.t).pool;
  s.touched = true;
  pool.forEach((p) => {
    if (!own(s.g, p.id)) s.g[p.id] = 0;
  });
  redraw();
}
function accept(): void {
  const p = turnAt(pos.c, pos.t).pool[pos.p];
  if (p && p.suggested !== undefined) gradeTurn(p.suggested);
}
function toggleCite(): void {
  const s = ts(pos.c, pos.t),
    p = turnAt(pos.c, pos.t).pool[pos.p];
  if (!p) return;
  s.touched = true;
  const i = s.c.indexOf(p.id);
  if (i >= 0) s.c.splice(i, 1);
  else s.c.push(p.id);
  redraw();
}
function toggleRefuse(): void {
  const s = ts(pos.c, pos.t);
  s.touched = true;
  s.r = !s.r;
  redraw();
}
function nextTurn(dir: number, last: boolean): void {
  let ci = pos.c,
    ti = pos.t + dir;
  if (ti >= caseAt(ci).turns.length) {
    ci++;
    ti = 0;
  }
  if (ti < 0) {
    ci--;
    if (ci >= 0) ti = caseAt(ci).turns.length - 1;
  }
  if (ci < 0 || ci >= DATA.cases.length) return;
  const len = turnAt(ci, ti).pool.length;
  go(ci, ti, last ? Math.max(0, len - 1) : 0);
}
function step(dir: number): void {
  const p = pos.p + dir;
  if (p >= 0 && p < poolLen()) {
    pos.p = p;
    redraw();
    return;
  }
  nextTurn(dir, dir < 0);
}
function matches(c: LabelCase, q: string): boolean {
  if (c.id.toLowerCase().indexOf(q) >= 0) return true;
  return c.turns.some(
    (t) =>
      t.user.toLowerCase().indexOf(q) >= 0 ||
      (t.context || []).some((m) => m.toLowerCase().indexOf(q) >= 0) ||
      t.pool.some((p) => p.title.toLowerCase().indexOf(q) >= 0 || p.id.toLowerCase().indexOf(q) >= 0),
  );
}
function searchBox(): HTMLInputElement {
  return byId("search") as HTMLInputElement;
}
function applySearch(): void {
  const q = searchBox().value.trim().toLowerCase();
  const buttons = document.querySelectorAll("nav.cases button");
  DATA.cases.forEach((c, ci) => {
    const b = buttons[ci];
    if (b) {
      if (q === "" || matches(c, q)) b.removeAttribute("hidden");
      else b.setAttribute("hidden", "");
    }
  });
}
function onKey(e: KeyboardEvent): void {
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  const search = searchBox();
  if (e.target === search) {
    if (e.key === "Escape") {
      search.blur();
    }
    if (e.key === "Enter") {
      const q = search.value.trim().toLowerCase();
      for (let i = 0; i < DATA.cases.length; i++)
        if (matches(caseAt(i), q)) {
          search.blur();
          go(i, 0, 0);
          break;
        }
    }
    return;
  }
  const k = e.key;
  if (k === "0" || k === "1" || k === "2" || k === "3") gradeTurn(Number(k));
  else if (k === "c") toggleCite();
  else if (k === "x") restNotRelevant();
  else if (k === "r") toggleRefuse();
  else if (k === "a") accept();
  else if (k === "j") step(1);
  else if (k === "k") step(-1);
  else if (k === "n") nextTurn(1, false);
  else if (k === "p") nextTurn(-1, false);
  else if (k === "/") search.focus();
  else return;
  e.preventDefault();
}

function page(): void {
  const app = byId("app");
  app.textContent = "";
  const exportB = el("button", { type: "button", id: "export", cls: "action", text: "Export labelled cases" });
  exportB.addEventListener("click", doExport);
  const search = el("input", {
    type: "search",
    id: "search",
    placeholder: "search cases (/)",
    "aria-label": "search cases",
  });
  search.addEventListener("input", applySearch);
  app.appendChild(
    el("header", { cls: "top" }, [
      el("h1", { text: DATA.title }),
      el("span", {
        cls: "muted",
        text:
          "pool: top " +
          DATA.depth +
          " of " +
          DATA.systems.join(", ") +
          (DATA.judge !== null ? " \u00b7 judge " + DATA.judge : ""),
      }),
      el("span", { id: "progress" }),
      el("span", { id: "kappa", cls: "muted" }),
      search,
      exportB,
      el("a", { id: "export-link", cls: "muted" }),
      storageOk
        ? null
        : el("span", { cls: "note", text: "This browser keeps no storage for this file: export before closing it." }),
    ]),
  );
  app.appendChild(
    el("div", { cls: "layout" }, [
      el("nav", { cls: "cases", id: "cases", "aria-label": "cases" }),
      el("main", { id: "turn" }),
    ]),
  );
  document.addEventListener("keydown", onKey);
  redraw();
}

// ------------------------------------------------------------ start: unpack the data, then draw (as the report page)
const TOO_OLD =
  "This browser is too old to open this page: its data is compressed, and this browser has no DecompressionStream to unpack it. Open the file in Chromium 80 or later, Firefox 113 or later, or Safari 16.4 or later.";

startPage(
  TOO_OLD,
  (data) => {
    DATA = data as LabelPageData;
    STORE_KEY = "retrace-label:" + DATA.poolHash;
    load();
    page();
  },
  (reason) =>
    "This page's embedded data could not be unpacked (" +
    reason +
    "): the file may be truncated or damaged. Write it again with retrace label.",
);
