/**
 * The turn view: one turn's conversation, queries, stage lists and scores, with steps to the previous and next turn. Part of the page script (./report.ts).
 */
import { el } from "./dom.js";
import { queriesBlock } from "./conversation.js";
import { capturedOf, outcome, outcomeText, turnId } from "./format.js";
import type { Run } from "./registry.js";
import { turnAt } from "./summary-parts.js";
import { documentsBlock, goldTable, metricsTable, stageLists } from "./turn-parts.js";

export function turnView(run: Run, i: number): HTMLDivElement {
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
