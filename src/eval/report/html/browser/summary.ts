/**
 * The Summary tab of the report (and each run's summary on the compare page) and the run line. Part of the page script (./report.ts).
 */
import { DELTA_COLUMNS } from "../../columns.js";
import type { Aggregate } from "../../types.js";
import { el } from "./dom.js";
import { fmtP, label, signed, ths } from "./format.js";
import type { Group, Run } from "./registry.js";
import { TRIAD } from "./registry.js";
import {
  KNOWN_TOP,
  chart,
  gateBlock,
  goldBearingCount,
  hiddenGroup,
  hiddenTable,
  missedBlock,
  repeats,
  splitTable,
} from "./summary-parts.js";

export function summaryPanel(run: Run, compact: boolean, openTurn?: (i: number) => void): HTMLDivElement {
  const r = run.report,
    box = el("div", { cls: "summary-block" });
  if (!compact) {
    if (openTurn) box.appendChild(missedBlock(run, openTurn));
    const triad = TRIAD.filter((k) => r.aggregates[k] && r.vacuous.indexOf(k) < 0);
    if (triad.length > 0) {
      box.appendChild(el("h3", { text: hiddenTable(run, "locale") ? "Triad (95% interval)" : "Triad by locale" }));
      box.appendChild(
        el(
          "div",
          { cls: "charts" },
          triad.map((k) => chart(run, k)),
        ),
      );
    }
  }
  const splitsOf = r.splits as Record<string, Record<string, Record<string, Aggregate | undefined>> | undefined>;
  // The report page shows the turn-position split in its Conversation tab; the compare page's compact summaries keep it here.
  const splits = Object.keys(splitsOf).filter((split) => (compact || split !== "position") && !hiddenTable(run, split));
  splits.forEach((split) => {
    const of = splitsOf[split] ?? {};
    const groups = Object.keys(of)
      .filter((g) => !hiddenGroup(run, split, g))
      .map((g): Group => [g, of[g], split]);
    if (split === "kind") groups.unshift(["all", r.aggregates, "all"]);
    if (groups.length === 0) return;
    box.appendChild(
      el("h3", {
        text:
          split === "position"
            ? "By turn position"
            : split === "kind" && groups.length === 1
              ? "All turns"
              : "By " + split,
      }),
    );
    box.appendChild(splitTable(run, split, groups));
  });
  if (repeats(run).length > 0)
    box.appendChild(
      el("p", {
        cls: "note",
        "data-field": "summary-repeats",
        text:
          "Not drawn, as they repeat the all column: " +
          repeats(run)
            .map((x) => x.why)
            .join("; ") +
          ".",
      }),
    );
  if (compact) return box;
  // Each delta as the report holds it: its unadjusted interval, raw and Holm-adjusted p, family size, and the verdict
  // the report gave it (run.stats, worded as the terminal words it; docs/statistics.md). The page tests nothing itself.
  const deltas = r.deltas || [];
  if (deltas.length > 0) {
    box.appendChild(el("h3", { "data-field": "delta-method", text: "Split deltas (" + run.stats.deltaMethod + ")" }));
    box.appendChild(
      el("table", { cls: "deltas" }, [
        el("thead", null, [el("tr", null, ths([...DELTA_COLUMNS]))]),
        el(
          "tbody",
          null,
          deltas.map((d, i) =>
            el("tr", { "data-delta": d.key + ":" + d.split + ":" + d.group }, [
              el("td", { text: label(run, d.key) }),
              el("td", { text: d.split }),
              el("td", { text: d.group }),
              el("td", { text: d.reference }),
              el("td", { cls: "num", "data-field": "diff", text: signed(d.diff) }),
              el("td", {
                cls: "num",
                "data-field": "ci",
                text: d.ci95 ? "[" + signed(d.ci95[0]) + ", " + signed(d.ci95[1]) + "]" : "(no CI)",
              }),
              el("td", { cls: "num", text: d.nGroup + " vs " + d.nReference }),
              el("td", {
                cls: "num",
                text:
                  d.nCasesGroup === undefined
                    ? ""
                    : d.nCasesGroup + " vs " + (d.nCasesReference === undefined ? "" : d.nCasesReference),
              }),
              el("td", { cls: "num", "data-field": "p", text: fmtP(d.pValue) }),
              el("td", {
                cls: "num",
                "data-field": "p-adjusted",
                text: d.pAdjusted === undefined ? "" : fmtP(d.pAdjusted),
              }),
              el("td", {
                cls: "num",
                "data-field": "family",
                text: d.familySize === undefined ? "" : String(d.familySize),
              }),
              el("td", { cls: d.significant ? "hit" : "", "data-field": "verdict", text: run.stats.deltaVerdicts[i] }),
            ]),
          ),
        ),
      ]),
    );
  } else if (Object.keys(r.splits.locale ?? {}).length > 1) {
    box.appendChild(
      el("p", {
        cls: "note",
        text: "Locale deltas are indicative only: this report has no significance test for them.",
      }),
    );
  }
  const chance = r.chance;
  if (chance) {
    // The chance level of each retrieval metric is in its cells (chance ...); this is what it was computed from.
    const cards = Object.keys(chance.cardsPerLocale)
      .map((l) => l + " " + chance.cardsPerLocale[l])
      .join(", ");
    box.appendChild(el("h3", { text: "Chance levels" }));
    box.appendChild(
      el("p", {
        cls: "note",
        "data-section": "chance",
        text:
          "chance = expected value of a uniformly random ranking of the locale's cards at k=" +
          r.run.k +
          "; cards per locale: " +
          (cards || "none") +
          ".",
      }),
    );
    if (run.notes.chanceWarnings.length > 0)
      box.appendChild(
        el(
          "ul",
          { "data-field": "chance-warnings" },
          run.notes.chanceWarnings.map((w) => el("li", { cls: "vac", text: "warning: " + w })),
        ),
      );
  }
  if (r.vacuous.length > 0) {
    box.appendChild(el("h3", { text: "Not measured" }));
    box.appendChild(
      el(
        "ul",
        null,
        r.vacuous.map((k) => el("li", { text: label(run, k) + ": " + (run.vacuousText[k] || "not measured") })),
      ),
    );
  }
  if (r.judge) {
    const j = r.judge,
      u = r.timings && r.timings.judge; // the cost of this run is run-dependent: in timings (docs/determinism.md)
    box.appendChild(el("h3", { text: "Groundedness judge" }));
    box.appendChild(
      el("p", {
        "data-section": "judge",
        text:
          "model " +
          j.model +
          ", prompt " +
          j.prompt +
          ": " +
          (u
            ? u.calls +
              " calls, " +
              u.cached +
              " cached, " +
              (u.inputTokens === null
                ? "tokens not reported"
                : u.inputTokens + " input + " + (u.outputTokens === null ? 0 : u.outputTokens) + " output tokens")
            : "cost not recorded") +
          (j.unparsable > 0 ? ", " + j.unparsable + " unparsable replies (no score)" : ""),
      }),
    );
  }
  if (run.judgments) {
    box.appendChild(el("h3", { text: "Judgments: graded nDCG and judged@k" }));
    box.appendChild(el("pre", { cls: "notes", "data-section": "judgments", text: run.judgments.join("\n") }));
  }
  if (run.graph) {
    box.appendChild(el("h3", { text: "Your graph's turns: errors, no retrieval, warnings" }));
    box.appendChild(el("pre", { cls: "notes", "data-section": "graph-notes", text: run.graph.notes.join("\n") }));
  }
  box.appendChild(el("h3", { text: "Gate" }));
  box.appendChild(gateBlock(r));
  // A section this page does not know (a newer report's) is shown by name, as JSON.
  const sections = r as unknown as Record<string, unknown>;
  Object.keys(sections).forEach((k) => {
    if (KNOWN_TOP.indexOf(k) >= 0) return;
    box.appendChild(
      el("details", { "data-section": k }, [
        el("summary", { text: "Report section: " + k }),
        el("pre", { text: JSON.stringify(sections[k], null, 2) }),
      ]),
    );
  });
  box.appendChild(
    el("p", {
      cls: "note",
      text: "recall@k is a conservative lower bound: gold is disjunctive (citing any one gold card meets the turn); hit@k is the primary signal.",
    }),
  );
  if (run.notes.answerSide !== null)
    box.appendChild(el("p", { cls: "note", "data-section": "answerSide", text: run.notes.answerSide }));
  if (run.notes.notComputed !== null)
    box.appendChild(el("p", { cls: "note", "data-section": "measuresNotComputed", text: run.notes.notComputed }));
  box.appendChild(
    el("p", {
      cls: "note",
      "data-field": "ci-method",
      text: run.stats.ciMethod + " Turns are caseId#turn, turn 0-based.",
    }),
  );
  const tm = r.timings;
  if (tm) {
    // Wall clock only, never compared (docs/determinism.md); the start and duration are in the header, each turn's in its turn view.
    const ph: Record<string, number | undefined> = tm.phases || {};
    const phases = Object.keys(ph)
      .map((p) => p + " " + ((ph[p] ?? 0) / 1000).toFixed(2) + " s")
      .join(", ");
    box.appendChild(
      el("p", {
        cls: "note",
        "data-section": "timings",
        text:
          "timings (wall clock, not compared between runs): " +
          (phases
            ? "phases " + phases + " (graph and evaluate are sums over turns: they overlap at concurrency > 1)"
            : "no phases recorded") +
          (run.notes.setup !== null ? "; setup: " + run.notes.setup : "") +
          ".",
      }),
    );
  }
  box.appendChild(
    el("p", { cls: "note", "data-field": "schema-version", text: "report schemaVersion " + r.schemaVersion }),
  );
  return box;
}
export function runLine(page: Run): string {
  const r = page.report,
    run = r.run;
  return (
    "k=" +
    run.k +
    "  store=" +
    run.store +
    (run.mode !== undefined ? "  mode=" + run.mode : "") +
    (run.rerank !== undefined ? "  rerank=" + (run.rerank === null ? "off" : run.rerank) : "") +
    (run.replay === "recorded" ? "  replay=recorded" : "") +
    // What retrieved: retrace's embedder, or (a graph or a recording; the header names it) the run's source.
    (run.embedder !== null
      ? "  embedder=" + run.embedder
      : run.source !== "own"
        ? "  source=" + (run.source === "graph" ? "graph" : "recorded traces")
        : "  embedder=none") +
    "  dataset=" +
    run.datasetHash.slice(0, 12) +
    "  kb=" +
    run.kbHash.slice(0, 12) +
    (r.timings ? "  started " + r.timings.started + "  " + (r.timings.durationMs / 1000).toFixed(1) + " s" : "") +
    "  turns=" +
    page.turnCount +
    " (gold-bearing " +
    goldBearingCount(page) +
    ")"
  );
}
