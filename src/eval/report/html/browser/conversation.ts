/**
 * The Conversation tab: query attribution, each query's means, metrics by turn position; and a turn's three queries side by side. Part of the page script (./report.ts).
 */
import { positionLabel, positionNote } from "../../positions.js";
import type { Aggregate } from "../../types.js";
import { el } from "./dom.js";
import { ciText, f3, label, rankText } from "./format.js";
import { funnelStatsBlock } from "./funnel.js";
import type { Group, Run, Turn } from "./registry.js";
import { ATTR_LABEL, ATTR_ORDER, HIT, QUERY_LABEL, QUERY_ORDER, QUERY_SIDE, QUERY_UNATTRIBUTED } from "./registry.js";
import { splitTable } from "./summary-parts.js";

// ------------------------------------------------------------ conversation: query attribution and turn positions
export type QueryAttribution = NonNullable<Run["report"]["queryAttribution"]>;
/** A row of the attribution table: group, its label, its turns (the report's `turns` or `splitTurns`), attribution → count, and the split it belongs to when not the table's. */
export type AttrRow = [string, string, number | undefined, Record<string, number | undefined>, string?];
export function attributionTable(rows: readonly AttrRow[], split: string): HTMLTableElement {
  const head = el("tr", null, [
    el("th", { text: "turns" }),
    el("th", { cls: "num", text: "n" }),
    ...ATTR_ORDER.map((a) => el("th", { cls: "num", text: ATTR_LABEL[a] })),
  ]);
  const body = el(
    "tbody",
    null,
    rows.map((row) => {
      const c = row[3];
      return el("tr", { "data-split": row[4] || split, "data-group": row[0] }, [
        el("th", { text: row[1] }),
        el("td", { cls: "num", "data-attr": "n", text: row[2] === undefined ? "\u2014" : String(row[2]) }),
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
export function queryMeansTable(run: Run, qa: QueryAttribution): HTMLTableElement {
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
export function conversationPanel(run: Run): HTMLDivElement {
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
    const totals = (qa.splitTurns || {}) as Record<string, Record<string, number | undefined> | undefined>;
    const pos = qaSplits.position || {};
    const posTotals = totals.position || {};
    box.appendChild(
      attributionTable(
        ([["all", "all", qa.turns, qa.counts, "all"]] as AttrRow[]).concat(
          Object.keys(pos).map((g): AttrRow => [g, positionLabel(g), posTotals[g], pos[g] ?? {}]),
        ),
        "position",
      ),
    );
    Object.keys(qaSplits).forEach((split) => {
      if (split === "position") return;
      const groups = qaSplits[split] ?? {};
      const groupTotals = totals[split] || {};
      if (Object.keys(groups).length === 0) return;
      box.appendChild(el("h3", { text: "Attribution by " + split }));
      box.appendChild(
        attributionTable(
          Object.keys(groups).map((g): AttrRow => [g, g, groupTotals[g], groups[g] ?? {}]),
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
export function queriesBlock(run: Run, t: Turn): HTMLDivElement {
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
