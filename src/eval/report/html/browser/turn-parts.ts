/**
 * A turn view's parts: the gold table, the stage lists (retrace's own graph) or captured lists (`--graph`, recorded traces), the scored documents and the metrics. Part of the page script (./report.ts).
 */
import { el } from "./dom.js";
import { capturedOf, f3, label, rankText } from "./format.js";
import type { Captured, CapturedList, Run, Turn } from "./registry.js";
import { HIT, STAGE_LABEL, TRACE_STAGES } from "./registry.js";
import { turnAt } from "./summary-parts.js";

// ------------------------------------------------------------ turn view
export function goldTable(run: Run, i: number): HTMLElement {
  const t = turnAt(run, i),
    tr = t.trace,
    cuts = t.goldLostAt || {},
    cap = capturedOf(t);
  if (t.error !== undefined)
    return el("p", {
      cls: "miss",
      text: "Not scored: the graph run threw (see the error above); neither a hit nor a miss.",
    });
  if (t.gold.length === 0)
    return el("p", { cls: "muted", text: "No gold for this turn (a no-match turn): nothing to place." });
  if (!tr && !t.noRetrieval)
    return el("p", {
      cls: "vac",
      text: "No retrieval trace for this turn (" + (run.vacuousText[HIT] || "retrieval not measured") + ").",
    });
  // Columns: retrace's stages present, or each captured list of a --graph turn (child runs, then the call), then the final top-k.
  const first = tr && t.gold[0] !== undefined ? tr.goldPositions[t.gold[0]] : undefined;
  const stages = t.noRetrieval
    ? ["final"]
    : cap
      ? cap.stages.map((s) => s.key).concat(["final"])
      : TRACE_STAGES.filter((s) => first !== undefined && s in first).concat(["final"]);
  const roleOf: Record<string, CapturedList> = {};
  if (cap)
    cap.stages.forEach((s) => {
      roleOf[s.key] = s;
    });
  const head = el("tr", null, [
    el("th", { text: "gold card" }),
    ...stages.map((s) => {
      const c = roleOf[s];
      return el("th", {
        cls: "num",
        title: c && c.step !== undefined ? "step " + c.step : null,
        text: c ? s + (c.role === "child" ? " (child run)" : "") : STAGE_LABEL[s] || s,
      });
    }),
    el("th", { text: "lost at" }),
  ]);
  const k = tr ? tr.k : run.report.run.k;
  const body = el(
    "tbody",
    null,
    t.gold.map((g) => {
      const pos: Record<string, number | null | undefined> = tr ? tr.goldPositions[g] || {} : {},
        fi = tr ? tr.retrievedIds.indexOf(g) : -1;
      const cells = stages.map((s) => {
        const v = s === "final" ? (fi >= 0 ? fi + 1 : null) : pos[s];
        return el("td", { cls: "num", "data-stage": s, text: rankText(v) });
      });
      const cut = cuts[g];
      return el("tr", { "data-gold": g }, [
        el("td", { cls: "goldmark", text: "\u2605 " + g }),
        ...cells,
        el("td", { cls: cut ? "cut" : "hit", "data-cut": cut ? cut.at : "", text: cut ? cut.text : "in the top-" + k }),
      ]);
    }),
  );
  return el("table", { cls: "goldranks" }, [el("thead", null, [head]), body]);
}
/** A ranked list's entries: id and score (null when the list has no scores). */
export type Entry = readonly [string, number | null];
export type ListOf = (stage: string, entries: readonly Entry[], size: number) => HTMLTableElement;
export function stageLists(run: Run, i: number): HTMLDivElement {
  const t = turnAt(run, i),
    tr = t.trace,
    box = el("div", { cls: "stages" });
  if (!tr) return box;
  const gold: Record<string, boolean> = {};
  t.gold.forEach((g) => {
    gold[g] = true;
  });
  const isGold = (id: string): boolean => gold[id] === true || gold[id.split("#")[0] ?? id] === true;
  const list: ListOf = (stage, entries, size) => {
    const scored = entries.length > 0 && entries[0]?.[1] !== null;
    const rows = entries.map((e, j) =>
      el("tr", { cls: isGold(e[0]) ? "gold" : "" }, [
        el("td", { cls: "num", text: String(j + 1) }),
        el("td", { cls: isGold(e[0]) ? "goldmark" : "", text: (isGold(e[0]) ? "\u2605 " : "") + e[0] }),
        scored ? el("td", { cls: "num", text: String(e[1]) }) : null,
      ]),
    );
    const cap = el("caption", {
      text:
        (STAGE_LABEL[stage] || stage) +
        (size > entries.length ? " (top " + entries.length + " of " + size + ")" : " (" + entries.length + ")"),
    });
    return el("table", { "data-list": stage }, [
      cap,
      el("thead", null, [
        el("tr", null, [
          el("th", { text: "#" }),
          el("th", { text: "id" }),
          scored ? el("th", { text: "score" }) : null,
        ]),
      ]),
      el("tbody", null, rows),
    ]);
  };
  const cap = capturedOf(t);
  if (cap) return capturedLists(tr.retrievedIds, cap, isGold, list);
  const st = (tr.stages || {}) as Record<string, Entry[] | undefined>;
  const sizes = (tr.stageSizes || {}) as Record<string, number | undefined>;
  Object.keys(st).forEach((s) => {
    const entries = st[s] ?? [];
    box.appendChild(list(s, entries, sizes[s] || entries.length));
  });
  box.appendChild(
    list(
      "final",
      tr.retrievedIds.map((id): Entry => [id, null]),
      tr.retrievedIds.length,
    ),
  );
  if (Object.keys(st).length === 0)
    box.appendChild(
      el("p", {
        cls: "note",
        text: "This report has no per-stage lists (written before they were recorded); gold ranks above are exact.",
      }),
    );
  return box;
}
// A --graph turn's lists: every top-level retriever call grouped by retrieval step (calls overlapping in time are one step),
// each call's child runs before it, the steps --retrieval-call scored marked; then the final top-k.
export function capturedLists(
  retrievedIds: readonly string[],
  cap: Captured,
  isGold: (id: string) => boolean,
  list: ListOf,
): HTMLDivElement {
  const box = el("div", { cls: "calls" });
  const unknown: Record<string, boolean> = {};
  (cap.unknownIds || []).forEach((id) => {
    unknown[id] = true;
  });
  const all = cap.stages
    .map((s) => ({ s, scored: true }))
    .concat((cap.unscored || []).map((s) => ({ s, scored: false })));
  const stepOf = (x: { s: CapturedList }): number => (x.s.step === undefined ? 0 : x.s.step);
  const steps: number[] = [];
  all.forEach((x) => {
    if (steps.indexOf(stepOf(x)) < 0) steps.push(stepOf(x));
  });
  steps.sort((a, b) => a - b);
  steps.forEach((n) => {
    const inStep = all.filter((x) => stepOf(x) === n);
    const scored = inStep.some((x) => x.scored);
    const calls = inStep.filter((x) => x.s.role === "final").length;
    const head =
      (n === 0
        ? "Scored calls"
        : "Step " +
          n +
          " of " +
          (cap.steps === undefined ? steps.length : cap.steps) +
          (scored ? ": scored" : ": not scored")) +
      " (" +
      calls +
      " call" +
      (calls === 1 ? "" : "s") +
      (calls > 1 ? " overlapping in time" : "") +
      ")";
    const tables = inStep.map((x) => {
      const s = x.s;
      const rows = s.ids.map((id, j) => {
        const g = isGold(id),
          u = unknown[id] === true;
        return el("tr", { cls: g ? "gold" : "" }, [
          el("td", { cls: "num", text: String(j + 1) }),
          el("td", {
            cls: g ? "goldmark" : u ? "unknown" : "",
            title: u ? "names no card of the KB or catalog" : null,
            text: (g ? "\u2605 " : "") + id + (u ? " ?" : ""),
          }),
        ]);
      });
      const cap2 =
        s.key +
        (s.role === "child" ? " (child run)" : "") +
        " (" +
        s.ids.length +
        ")" +
        (s.error !== null ? " failed: " + s.error : "");
      return el("table", { "data-list": s.key, "data-role": s.role, "data-scored": x.scored ? "true" : "false" }, [
        el("caption", { text: cap2 }),
        el("thead", null, [el("tr", null, [el("th", { text: "#" }), el("th", { text: "id" })])]),
        el("tbody", null, rows),
      ]);
    });
    box.appendChild(
      el(
        "div",
        { cls: "step " + (scored ? "scored" : "unscored"), "data-step": n, "data-scored": scored ? "true" : "false" },
        [el("h4", { text: head }), el("div", { cls: "stages" }, tables)],
      ),
    );
  });
  box.appendChild(
    el("div", { cls: "stages" }, [
      list(
        "final",
        retrievedIds.map((id): Entry => [id, null]),
        retrievedIds.length,
      ),
    ]),
  );
  if (cap.noChildRuns.length > 0)
    box.appendChild(
      el("p", {
        cls: "note",
        text:
          "No child runs: " +
          cap.noChildRuns.join(", ") +
          " (their inner searches emit no retriever runs; no stages to show).",
      }),
    );
  if ((cap.unknownIds || []).length > 0)
    box.appendChild(
      el("p", {
        cls: "note",
        "data-field": "unknown-ids",
        text: "Unknown ids (no card of the KB or catalog; misses): " + (cap.unknownIds ?? []).join(", "),
      }),
    );
  return box;
}
// The scored top-k's documents a --graph turn captured (captured.documents: rank, id, page content cut at a bound, docs/schema-versions.md).
export function documentsBlock(t: Turn, cap: Captured): HTMLElement {
  const docs = cap.documents || [];
  if (docs.length === 0)
    return el("p", {
      cls: "muted",
      "data-field": "documents-off",
      text: "No document text recorded for this turn (its documents had no page content, or the report was written before it was recorded).",
    });
  const gold: Record<string, boolean> = {};
  t.gold.forEach((g) => {
    gold[g] = true;
  });
  return el("table", { cls: "documents" }, [
    el("thead", null, [
      el("tr", null, [el("th", { cls: "num", text: "#" }), el("th", { text: "id" }), el("th", { text: "text" })]),
    ]),
    el(
      "tbody",
      null,
      docs.map((d) =>
        el("tr", { cls: gold[d.id] ? "gold" : "", "data-rank": d.rank, "data-id": d.id }, [
          el("td", { cls: "num", "data-field": "rank", text: String(d.rank) }),
          el("td", {
            cls: gold[d.id] ? "goldmark" : "",
            "data-field": "id",
            text: (gold[d.id] ? "\u2605 " : "") + d.id,
          }),
          el("td", { cls: "doctext", "data-field": "text", text: d.text + (d.truncated ? " \u2026 (cut)" : "") }),
        ]),
      ),
    ),
  ]);
}
// The turn's metrics; a comment shared by consecutive rows (one evaluator's comment on its five keys) is shown once, across them.
export function metricsTable(run: Run, t: Turn): HTMLTableElement {
  const rows: HTMLTableRowElement[] = [],
    res = t.results;
  const commentAt = (j: number): string => res[j]?.comment || "";
  res.forEach((r, j) => {
    const c = commentAt(j),
      cells = [el("td", { text: label(run, r.key) }), el("td", { cls: "num", text: f3(r.score) })];
    if (j === 0 || commentAt(j - 1) !== c) {
      let span = 1;
      while (j + span < res.length && commentAt(j + span) === c) span++;
      cells.push(el("td", { cls: "comment", rowspan: span > 1 ? span : null, text: c }));
    }
    rows.push(el("tr", { "data-key": r.key }, cells));
  });
  return el("table", { cls: "metrics" }, [
    el("thead", null, [
      el("tr", null, [el("th", { text: "key" }), el("th", { text: "score" }), el("th", { text: "comment" })]),
    ]),
    el("tbody", null, rows),
  ]);
}
