/** Drawing the labelling page: the case list, the summary and the turn with its pool (docs/labelling.md). Part of the page script (./label.ts). */
import { byId, el } from "../../report/html/browser/dom.js";
import type { PooledCard } from "../pool.js";
import { gradeTurn, toggleCite } from "./actions.js";
import { agreement } from "./export.js";
import { applySearch } from "./search.js";
import {
  caseAt,
  caseProgress,
  DATA,
  go,
  GRADE_TEXT,
  own,
  pos,
  redraw,
  relevanceOnly,
  save,
  ts,
  turnAt,
} from "./state.js";

export function rankBadges(p: PooledCard): HTMLSpanElement[] {
  return DATA.systems
    .filter((s) => p.ranks[s] !== undefined)
    .map((s) => el("span", { cls: "rank", "data-system": s, text: s + " #" + p.ranks[s] }));
}
export function passage(p: PooledCard): HTMLParagraphElement {
  if (p.passage.length === 0) return el("p", { cls: "passage muted", text: "(no text known for this card)" });
  return el(
    "p",
    { cls: "passage" },
    p.passage.map((seg) => (seg[1] ? el("mark", { text: seg[0] }) : seg[0])),
  );
}
export function drawCases(): void {
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
export function drawSummary(): void {
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
export const SHOWN_EARLIER = 3;
export function drawTurn(): void {
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
/** The whole page drawn from the state (after saving it): what `redraw()` of ./state.ts calls. */
export function drawPage(): void {
  save();
  drawCases();
  drawSummary();
  drawTurn();
  const f = document.querySelector(".card.focus");
  if (f && f.scrollIntoView) f.scrollIntoView({ block: "nearest" });
}
