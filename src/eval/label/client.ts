/**
 * The inline stylesheet and script of the labelling page (docs/labelling.md),
 * under the same rules as the report's (src/eval/report/html/client.ts): the
 * data is unpacked from the page's gzip+base64 element with the browser's
 * DecompressionStream and read with JSON.parse; the DOM is built with
 * createElement/textContent only (no innerHTML, no inline handlers, no
 * network); one string each, so the CSP pins their SHA-256. The person's work
 * is kept in localStorage under a key holding the page's pool hash; Export
 * downloads the labelled cases as a data: URL (nothing leaves the browser).
 */
import { EL_JS, UNPACK_JS } from "../report/html/page-js.js";

export const LABEL_CSS = String.raw`
:root { --fg:#1d2330; --muted:#5b6475; --line:#d9dde5; --bg:#ffffff; --soft:#f4f6f9; --accent:#2457c5; --ok:#1a7f37; --warn:#a15c00; }
* { box-sizing: border-box; }
body { margin:0; font: 13px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", sans-serif; color:var(--fg); background:var(--bg); }
header.top { padding:8px 18px; border-bottom:1px solid var(--line); background:var(--soft); display:flex; gap:14px; align-items:center; flex-wrap:wrap; }
header.top h1 { font-size:16px; margin:0; }
.muted { color:var(--muted); }
.note { color:var(--muted); font-size:12px; margin:2px 0; }
p.fatal { margin:24px 18px; font-size:15px; font-weight:600; color:#c62828; max-width:760px; }
#app[data-state=loading] > p { margin:24px 18px; }
.layout { display:grid; grid-template-columns: 260px 1fr; min-height: calc(100vh - 48px); }
nav.cases { border-right:1px solid var(--line); padding:8px; overflow:auto; }
nav.cases button { display:block; width:100%; text-align:left; border:1px solid transparent; background:none; padding:4px 6px; font:inherit; cursor:pointer; border-radius:4px; overflow-wrap:anywhere; }
nav.cases button.current { border-color:var(--accent); background:#eef3ff; }
nav.cases button[hidden] { display:none; }
nav.cases .first { display:block; overflow:hidden; text-overflow:ellipsis; white-space:nowrap; }
nav.cases .cid { display:block; font-size:11px; color:var(--muted); overflow-wrap:anywhere; }
nav.cases .prog { display:block; font-size:11px; color:var(--muted); }
nav.cases .prog .ndcg-only { color:var(--warn); }
nav.cases button.done .prog { color:var(--ok); }
main { padding:10px 18px 40px; min-width:0; }
h2 { font-size:15px; margin:4px 0 6px; }
.convo { border-left:3px solid var(--line); padding-left:10px; max-width:1100px; }
.msg { margin:4px 0; white-space:pre-wrap; overflow-wrap:anywhere; }
.msg .who { font-weight:600; color:var(--muted); margin-right:6px; }
.msg.current { background:#eef3ff; padding:3px 6px; border-radius:4px; }
.msg.assistant { color:var(--muted); }
.searched { margin:2px 0; }
.searched .sys { font-family:inherit; font-weight:600; color:var(--muted); margin-right:6px; }
.gold { font-size:12px; margin:4px 0; }
.gold.relevance-only { color:var(--warn); font-weight:600; }
.query { font-family: ui-monospace, "DejaVu Sans Mono", monospace; background:var(--soft); padding:3px 8px; border-radius:4px; white-space:pre-wrap; overflow-wrap:anywhere; max-width:1100px; }
.keys { font-size:12px; color:var(--muted); margin:6px 0; }
kbd { border:1px solid var(--line); border-bottom-width:2px; border-radius:3px; padding:0 4px; font-size:11px; background:#fff; }
.expect.refuse { color:#c62828; font-weight:600; }
.card { border:1px solid var(--line); border-radius:6px; padding:6px 10px; margin:8px 0; max-width:1100px; }
.card.focus { border-color:var(--accent); box-shadow:0 0 0 2px #c9d7f6; }
.card .head { display:flex; gap:8px; align-items:baseline; flex-wrap:wrap; }
.card .title { font-weight:600; overflow-wrap:anywhere; }
.card .cid { color:var(--muted); font-size:11px; overflow-wrap:anywhere; }
.rank { font-size:11px; border:1px solid var(--line); border-radius:8px; padding:0 6px; background:var(--soft); }
.grades button, .cite { font:inherit; border:1px solid var(--line); background:#fff; border-radius:4px; padding:0 7px; cursor:pointer; margin-right:2px; }
.grades button.on { background:var(--accent); color:#fff; border-color:var(--accent); }
.cite.on { background:var(--ok); color:#fff; border-color:var(--ok); }
.suggest { font-size:12px; color:var(--warn); }
.suggest.confirmed { color:var(--muted); }
.passage { white-space:pre-wrap; overflow-wrap:anywhere; font-size:12px; margin:4px 0 0; }
mark { background:#fff1a8; color:inherit; }
input[type=search] { font:inherit; padding:3px 6px; width:220px; }
button.action { font:inherit; padding:3px 10px; cursor:pointer; }
`;

export const LABEL_JS = String.raw`
(function () {
  "use strict";
  var DATA, STORE_KEY, STATE, storageOk = true;
  var pos = { c: 0, t: 0, p: 0 };
  var GRADE_TEXT = ["not relevant", "relevant", "highly relevant", "perfectly relevant"];

${EL_JS}  function turnKey(ci, ti) { return DATA.cases[ci].id + "#" + ti; }
  function own(o, k) { return Object.prototype.hasOwnProperty.call(o, k); }

  // ------------------------------------------------------------ state: the person's work, kept in localStorage
  // A turn's entry: g (card id -> grade given by the person), c (citeable card ids), r (refuse), touched.
  function initialTurn(turn) {
    var s = { g: {}, c: [], r: false, touched: false };
    if (turn.judged) turn.judged.forEach(function (id) { s.g[id] = 0; s.touched = true; });
    if (turn.relevant) Object.keys(turn.relevant).forEach(function (id) { s.g[id] = turn.relevant[id]; s.touched = true; });
    if (turn.must_cite_one_of) { s.c = turn.must_cite_one_of.slice(); s.touched = true; }
    if (turn.expect === "refuse") s.r = true;
    return s;
  }
  function load() {
    var saved = null;
    try { var raw = window.localStorage.getItem(STORE_KEY); if (raw) saved = JSON.parse(raw); } catch (e) { storageOk = false; }
    STATE = { v: 1, turns: {} };
    DATA.cases.forEach(function (c, ci) {
      c.turns.forEach(function (t, ti) { STATE.turns[turnKey(ci, ti)] = initialTurn(c.original.turns[ti] || {}); });
    });
    if (saved && saved.v === 1 && saved.turns) {
      Object.keys(saved.turns).forEach(function (k) { if (own(STATE.turns, k)) STATE.turns[k] = saved.turns[k]; });
      if (saved.pos && DATA.cases[saved.pos.c] && DATA.cases[saved.pos.c].turns[saved.pos.t]) pos = saved.pos;
    }
  }
  function save() {
    if (!storageOk) return;
    try { window.localStorage.setItem(STORE_KEY, JSON.stringify({ v: 1, turns: STATE.turns, pos: pos })); } catch (e) { storageOk = false; }
  }
  function ts(ci, ti) { return STATE.turns[turnKey(ci, ti)]; }

  // ------------------------------------------------------------ progress and agreement
  function turnDone(ci, ti) {
    var s = ts(ci, ti), pool = DATA.cases[ci].turns[ti].pool;
    if (!s.touched) return false;
    for (var i = 0; i < pool.length; i++) if (!own(s.g, pool[i].id)) return false;
    return true;
  }
  // Graded relevant, nothing citeable, not a refusal: the export carries relevance only, scored for nDCG only (docs/labelling.md).
  function relevanceOnly(ci, ti) {
    var s = ts(ci, ti);
    if (s.c.length > 0 || s.r) return false;
    return Object.keys(s.g).some(function (id) { return s.g[id] > 0; });
  }
  function caseProgress(ci) {
    var c = DATA.cases[ci], done = 0, cards = 0, judged = 0, ndcgOnly = 0;
    c.turns.forEach(function (t, ti) {
      if (turnDone(ci, ti)) done++;
      if (relevanceOnly(ci, ti)) ndcgOnly++;
      cards += t.pool.length;
      t.pool.forEach(function (p) { if (own(ts(ci, ti).g, p.id)) judged++; });
    });
    return { done: done, turns: c.turns.length, judged: judged, cards: cards, ndcgOnly: ndcgOnly };
  }
  // Cohen's kappa, unweighted (src/eval/stats/kappa.ts): the judge's suggestion against the person's grade, over cards carrying both.
  function agreement() {
    var a = [], b = [];
    DATA.cases.forEach(function (c, ci) {
      c.turns.forEach(function (t, ti) {
        var s = ts(ci, ti);
        t.pool.forEach(function (p) { if (p.suggested !== undefined && own(s.g, p.id)) { a.push(p.suggested); b.push(s.g[p.id]); } });
      });
    });
    var n = a.length;
    if (n === 0) return { n: 0, kappa: null, observed: 0 };
    var cats = {}, agree = 0;
    for (var i = 0; i < n; i++) { cats[a[i]] = cats[a[i]] || [0, 0]; cats[b[i]] = cats[b[i]] || [0, 0]; cats[a[i]][0]++; cats[b[i]][1]++; if (a[i] === b[i]) agree++; }
    var pe = 0;
    Object.keys(cats).forEach(function (k) { pe += (cats[k][0] / n) * (cats[k][1] / n); });
    var po = agree / n;
    return { n: n, observed: po, kappa: pe === 1 ? null : (po - pe) / (1 - pe) };
  }

  // ------------------------------------------------------------ export: the cases file with the labelled turns' fields
  function exportedTurn(ci, ti) {
    var orig = DATA.cases[ci].original.turns[ti] || {};
    var s = ts(ci, ti);
    if (!s.touched) return orig;
    var pool = DATA.cases[ci].turns[ti].pool, order = pool.map(function (p) { return p.id; });
    Object.keys(s.g).sort().forEach(function (id) { if (order.indexOf(id) < 0) order.push(id); });
    var out = {};
    Object.keys(orig).forEach(function (k) { if (k !== "relevant" && k !== "judged" && k !== "suggested" && k !== "must_cite_one_of" && k !== "expect") out[k] = orig[k]; });
    var rel = {}, any = false, judged = [];
    order.forEach(function (id) { if (own(s.g, id)) { judged.push(id); if (s.g[id] > 0) { rel[id] = s.g[id]; any = true; } } });
    // Relevant cards but none citeable (and not a refusal): graded relevance only, scored for nDCG only (docs/labelling.md).
    if (s.c.length > 0 || s.r || !any) {
      out.must_cite_one_of = order.filter(function (id) { return s.c.indexOf(id) >= 0; });
      s.c.forEach(function (id) { if (out.must_cite_one_of.indexOf(id) < 0) out.must_cite_one_of.push(id); });
      out.expect = s.r ? "refuse" : "answer";
    }
    if (any) out.relevant = rel;
    if (judged.length > 0) out.judged = judged;
    if (DATA.judge !== null) {
      var sug = {}, has = false;
      pool.forEach(function (p) { if (p.suggested !== undefined) { sug[p.id] = p.suggested; has = true; } });
      if (has) out.suggested = sug;
    }
    return out;
  }
  function exportText() {
    return DATA.cases.map(function (c, ci) {
      var line = {};
      Object.keys(c.original).forEach(function (k) { line[k] = c.original[k]; });
      line.turns = c.turns.map(function (_, ti) { return exportedTurn(ci, ti); });
      return JSON.stringify(line);
    }).join("\n") + "\n";
  }
  function doExport() {
    var text = exportText();
    var a = document.getElementById("export-link");
    a.setAttribute("href", "data:application/x-ndjson;charset=utf-8," + encodeURIComponent(text));
    a.setAttribute("download", DATA.exportName);
    a.setAttribute("data-lines", String(DATA.cases.length));
    a.textContent = "download again";
    a.click();
  }

  // ------------------------------------------------------------ drawing
  function rankBadges(p) {
    return DATA.systems.filter(function (s) { return p.ranks[s] !== undefined; }).map(function (s) {
      return el("span", { cls: "rank", "data-system": s, text: s + " #" + p.ranks[s] });
    });
  }
  function passage(p) {
    if (p.passage.length === 0) return el("p", { cls: "passage muted", text: "(no text known for this card)" });
    return el("p", { cls: "passage" }, p.passage.map(function (seg) { return seg[1] ? el("mark", { text: seg[0] }) : seg[0]; }));
  }
  function drawCases() {
    var nav = document.getElementById("cases");
    nav.textContent = "";
    DATA.cases.forEach(function (c, ci) {
      var pr = caseProgress(ci);
      // Listed by the first user message (what the person recognises), the id under it.
      var b = el("button", { type: "button", "data-case": c.id, title: c.turns[0].user, cls: (ci === pos.c ? "current" : "") + (pr.done === pr.turns ? " done" : "") }, [
        el("span", { cls: "first", text: c.turns[0].user }),
        el("span", { cls: "cid", text: c.id }),
        el("span", { cls: "prog", "data-progress": c.id }, [pr.done + "/" + pr.turns + " turns labelled \u00b7 " + pr.judged + "/" + pr.cards + " cards",
          pr.ndcgOnly > 0 ? el("span", { cls: "ndcg-only", text: " \u00b7 " + pr.ndcgOnly + " nDCG only" }) : null])
      ]);
      b.addEventListener("click", function () { go(ci, 0, 0); });
      nav.appendChild(b);
    });
    applySearch();
  }
  function drawSummary() {
    var total = { done: 0, turns: 0 };
    DATA.cases.forEach(function (_, ci) { var p = caseProgress(ci); total.done += p.done; total.turns += p.turns; });
    document.getElementById("progress").textContent = total.done + " of " + total.turns + " turns labelled";
    var k = document.getElementById("kappa");
    if (DATA.judge === null) { k.textContent = ""; return; }
    var ag = agreement();
    k.setAttribute("data-n", String(ag.n));
    k.textContent = "judge agreement: Cohen's \u03ba (unweighted) " + (ag.kappa === null ? "undefined" : ag.kappa.toFixed(3)) + ", n=" + ag.n + " confirmed cards" + (ag.n > 0 ? ", observed agreement " + ag.observed.toFixed(3) : "");
  }
  function drawTurn() {
    var c = DATA.cases[pos.c], t = c.turns[pos.t], s = ts(pos.c, pos.t);
    var main = document.getElementById("turn");
    main.textContent = "";
    main.setAttribute("data-case", c.id);
    main.setAttribute("data-turn", String(pos.t));
    // Turns are numbered from #0, as in every key (caseId#N), trace --turn and the report's position splits (docs/labelling.md).
    main.appendChild(el("h2", { text: c.id + " \u00b7 turn #" + pos.t + " (turns #0\u2013#" + (c.turns.length - 1) + ")" }, []));
    main.appendChild(el("p", { cls: "note", text: c.locale + " \u00b7 " + c.kind }));
    var convo = el("div", { cls: "convo" });
    for (var i = 0; i <= pos.t; i++) {
      (c.turns[i].context || []).forEach(function (said) { convo.appendChild(el("div", { cls: "msg assistant", "data-role": "assistant" }, [el("span", { cls: "who", text: "assistant" }), said])); });
      convo.appendChild(el("div", { cls: "msg" + (i === pos.t ? " current" : ""), "data-role": "user" }, [el("span", { cls: "who", text: "user #" + i }), c.turns[i].user]));
    }
    main.appendChild(convo);
    // The query each system searched with, systems with the same query on one line.
    var bySearch = [], seen = {};
    DATA.systems.forEach(function (sys) {
      var q = t.queries[sys];
      if (q === undefined) return;
      if (!own(seen, q)) { seen[q] = bySearch.length; bySearch.push({ q: q, systems: [] }); }
      bySearch[seen[q]].systems.push(sys);
    });
    bySearch.forEach(function (x) {
      main.appendChild(el("div", { cls: "query searched", "data-systems": x.systems.join(","), title: "the query these systems searched with" }, [el("span", { cls: "sys", text: x.systems.join(", ") + " searched:" }), x.q]));
    });
    main.appendChild(el("p", { cls: "expect" + (s.r ? " refuse" : ""), "data-expect": s.r ? "refuse" : "answer", text: "expect: " + (s.r ? "refuse (the assistant should decline)" : "answer") }));
    var ro = relevanceOnly(pos.c, pos.t);
    main.appendChild(el("p", { cls: "gold" + (ro ? " relevance-only" : ""), "data-gold": ro ? "relevance-only" : s.c.length > 0 ? "citeable" : "none",
      text: ro ? "relevance only: cards graded relevant, none citeable \u2014 this turn is scored for nDCG only (no hit@k, recall@k); press c on a card that answers it" : s.c.length > 0 ? "citeable: " + s.c.join(", ") : "no card citeable" }));
    main.appendChild(el("p", { cls: "keys" }, [
      el("kbd", { text: "0" }), " not ", el("kbd", { text: "1" }), " relevant ", el("kbd", { text: "2" }), " highly relevant ", el("kbd", { text: "3" }), " perfectly \u00b7 ",
      el("kbd", { text: "x" }), " every ungraded card 0 \u00b7 ",
      el("kbd", { text: "c" }), " citeable \u00b7 ", el("kbd", { text: "a" }), " accept suggestion \u00b7 ", el("kbd", { text: "r" }), " expect refuse \u00b7 ",
      el("kbd", { text: "j" }), "/", el("kbd", { text: "k" }), " next/previous card \u00b7 ", el("kbd", { text: "n" }), "/", el("kbd", { text: "p" }), " next/previous turn \u00b7 ", el("kbd", { text: "/" }), " search"
    ]));
    if (t.pool.length === 0) main.appendChild(el("p", { cls: "note", text: "No system retrieved a card for this turn: press r if the assistant should refuse, or 0 to mark the turn labelled with no citeable card." }));
    t.pool.forEach(function (p, pi) {
      var graded = own(s.g, p.id), grade = graded ? s.g[p.id] : null, cite = s.c.indexOf(p.id) >= 0;
      var grades = el("span", { cls: "grades" }, [0, 1, 2, 3].map(function (g) {
        var b = el("button", { type: "button", "data-grade-button": g, title: GRADE_TEXT[g], cls: grade === g ? "on" : "", text: String(g) });
        b.addEventListener("click", function () { pos.p = pi; grade_(g); });
        return b;
      }));
      var citeB = el("button", { type: "button", cls: "cite" + (cite ? " on" : ""), text: cite ? "citeable" : "not citeable" });
      citeB.addEventListener("click", function () { pos.p = pi; toggleCite(); });
      var card = el("div", { cls: "card" + (pi === pos.p ? " focus" : ""), "data-card": p.id, "data-grade": graded ? grade : "", "data-citeable": cite ? "1" : "0" }, [
        el("div", { cls: "head" }, [el("span", { cls: "title", text: p.title }), el("span", { cls: "cid", text: p.id })].concat(rankBadges(p)).concat([grades, citeB])),
        p.suggested !== undefined ? el("div", { cls: "suggest" + (graded ? " confirmed" : ""), "data-suggested": p.suggested, text: graded ? "judge suggested " + p.suggested + " (" + GRADE_TEXT[p.suggested] + ")" : "suggestion: " + p.suggested + " (" + GRADE_TEXT[p.suggested] + ") \u2014 press a to accept, or grade it yourself" }) : null,
        passage(p)
      ]);
      card.addEventListener("click", function () { if (pos.p !== pi) { pos.p = pi; redraw(); } });
      main.appendChild(card);
    });
  }
  function redraw() {
    save();
    drawCases();
    drawSummary();
    drawTurn();
    var f = document.querySelector(".card.focus");
    if (f && f.scrollIntoView) f.scrollIntoView({ block: "nearest" });
  }

  // ------------------------------------------------------------ actions
  function go(ci, ti, pi) { pos = { c: ci, t: ti, p: pi }; redraw(); }
  function poolLen() { return DATA.cases[pos.c].turns[pos.t].pool.length; }
  function grade_(g) {
    var s = ts(pos.c, pos.t), pool = DATA.cases[pos.c].turns[pos.t].pool;
    s.touched = true;
    if (pool.length > 0) { s.g[pool[pos.p].id] = g; if (pos.p < pool.length - 1) pos.p++; }
    redraw();
  }
  // x: every card of the turn not graded yet gets 0 (not relevant); grades already given stay.
  function restNotRelevant() {
    var s = ts(pos.c, pos.t), pool = DATA.cases[pos.c].turns[pos.t].pool;
    s.touched = true;
    pool.forEach(function (p) { if (!own(s.g, p.id)) s.g[p.id] = 0; });
    redraw();
  }
  function accept() {
    var p = DATA.cases[pos.c].turns[pos.t].pool[pos.p];
    if (p && p.suggested !== undefined) grade_(p.suggested);
  }
  function toggleCite() {
    var s = ts(pos.c, pos.t), p = DATA.cases[pos.c].turns[pos.t].pool[pos.p];
    if (!p) return;
    s.touched = true;
    var i = s.c.indexOf(p.id);
    if (i >= 0) s.c.splice(i, 1); else s.c.push(p.id);
    redraw();
  }
  function toggleRefuse() { var s = ts(pos.c, pos.t); s.touched = true; s.r = !s.r; redraw(); }
  function nextTurn(dir, last) {
    var ci = pos.c, ti = pos.t + dir;
    if (ti >= DATA.cases[ci].turns.length) { ci++; ti = 0; }
    if (ti < 0) { ci--; if (ci >= 0) ti = DATA.cases[ci].turns.length - 1; }
    if (ci < 0 || ci >= DATA.cases.length) return;
    var len = DATA.cases[ci].turns[ti].pool.length;
    go(ci, ti, last ? Math.max(0, len - 1) : 0);
  }
  function step(dir) {
    var p = pos.p + dir;
    if (p >= 0 && p < poolLen()) { pos.p = p; redraw(); return; }
    nextTurn(dir, dir < 0);
  }
  function matches(c, q) {
    if (c.id.toLowerCase().indexOf(q) >= 0) return true;
    return c.turns.some(function (t) { return t.user.toLowerCase().indexOf(q) >= 0 || (t.context || []).some(function (m) { return m.toLowerCase().indexOf(q) >= 0; }) || t.pool.some(function (p) { return p.title.toLowerCase().indexOf(q) >= 0 || p.id.toLowerCase().indexOf(q) >= 0; }); });
  }
  function applySearch() {
    var q = document.getElementById("search").value.trim().toLowerCase();
    var buttons = document.querySelectorAll("nav.cases button");
    DATA.cases.forEach(function (c, ci) { if (buttons[ci]) { if (q === "" || matches(c, q)) buttons[ci].removeAttribute("hidden"); else buttons[ci].setAttribute("hidden", ""); } });
  }
  function onKey(e) {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    var search = document.getElementById("search");
    if (e.target === search) {
      if (e.key === "Escape") { search.blur(); }
      if (e.key === "Enter") {
        var q = search.value.trim().toLowerCase();
        for (var i = 0; i < DATA.cases.length; i++) if (matches(DATA.cases[i], q)) { search.blur(); go(i, 0, 0); break; }
      }
      return;
    }
    var k = e.key;
    if (k === "0" || k === "1" || k === "2" || k === "3") grade_(Number(k));
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

  function page() {
    var app = document.getElementById("app");
    app.textContent = "";
    var exportB = el("button", { type: "button", id: "export", cls: "action", text: "Export labelled cases" });
    exportB.addEventListener("click", doExport);
    var search = el("input", { type: "search", id: "search", placeholder: "search cases (/)", "aria-label": "search cases" });
    search.addEventListener("input", applySearch);
    app.appendChild(el("header", { cls: "top" }, [
      el("h1", { text: DATA.title }),
      el("span", { cls: "muted", text: "pool: top " + DATA.depth + " of " + DATA.systems.join(", ") + (DATA.judge !== null ? " \u00b7 judge " + DATA.judge : "") }),
      el("span", { id: "progress" }),
      el("span", { id: "kappa", cls: "muted" }),
      search, exportB,
      el("a", { id: "export-link", cls: "muted" }),
      storageOk ? null : el("span", { cls: "note", text: "This browser keeps no storage for this file: export before closing it." })
    ]));
    app.appendChild(el("div", { cls: "layout" }, [el("nav", { cls: "cases", id: "cases", "aria-label": "cases" }), el("main", { id: "turn" })]));
    document.addEventListener("keydown", onKey);
    redraw();
  }

  // ------------------------------------------------------------ start: unpack the data, then draw (as the report page)
  var TOO_OLD = "This browser is too old to open this page: its data is compressed, and this browser has no DecompressionStream to unpack it. Open the file in Chromium 80 or later, Firefox 113 or later, or Safari 16.4 or later.";
  function setState(state, message) {
    var app = document.getElementById("app");
    if (message !== undefined) { app.textContent = ""; app.appendChild(el("p", { cls: "fatal", role: "alert", text: message })); }
    app.setAttribute("data-state", state);
  }
${UNPACK_JS}  function start() {
    if (typeof DecompressionStream !== "function" || typeof Blob !== "function" || typeof TextDecoder !== "function" || typeof Blob.prototype.stream !== "function") { setState("unsupported", TOO_OLD); return; }
    var unpacked;
    try { unpacked = unpack(); } catch (e) { unpacked = Promise.reject(e); }
    unpacked.then(function (data) {
      DATA = data;
      STORE_KEY = "retrace-label:" + DATA.poolHash;
      load();
      page();
      setState("ready");
    }, function (e) {
      setState("error", "This page's embedded data could not be unpacked (" + String(e && e.message ? e.message : e) + "): the file may be truncated or damaged. Write it again with retrace label.");
    });
  }
  start();
})();
`;
