/** The JUnit XML rendering of a Report (docs/architecture.md §7, docs/gates-and-exit-codes.md). */
import { graphWarnings, turnErrorText } from "../graph-report.js";
import type { GateFailure, Report } from "../types.js";
import { goldPositionsText, HIT_KEY, ids, missedCount, turnId, vacuousText } from "./shared.js";

/**
 * Escape text for XML 1.0 character data (docs/reliability.md, "Hostile ids
 * in every output"): `& < > " '` become entities; characters XML 1.0
 * forbids (C0 controls other than tab/LF/CR, U+FFFE/U+FFFF) are shown as
 * their `\uXXXX` escape, so a hostile id reads as the text it was; a lone
 * surrogate (no character at all) becomes U+FFFD.
 */
export function xmlEscape(s: string): string {
  return s
    .replace(
      /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
    )
    .replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, "\uFFFD")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&apos;")
    .replace(/\r/g, "&#13;"); // a parser would read a raw CR as LF
}

/** An attribute value: as character data, and tab, LF and CR as character references (a parser would turn them into spaces). */
export function xmlAttr(s: string): string {
  return xmlEscape(s).replace(/\t/g, "&#9;").replace(/\n/g, "&#10;");
}

function attrs(a: Record<string, string | number>): string {
  return Object.entries(a)
    .map(([k, v]) => ` ${k}="${xmlAttr(String(v))}"`)
    .join("");
}

/**
 * JUnit XML that mirrors the gate (docs/gates-and-exit-codes.md): a
 * testcase fails exactly when the gate fails because of it, so a CI
 * dashboard is red exactly when the exit code is 1.
 *
 * - Suite `retrace.gate`: one testcase per check the gate made (each floor
 *   per scope, each baseline drop per scope, the flips count), failed when
 *   its verdict is not "pass", with the gate's reason as the message; then
 *   one failed testcase per gate failure no check stands for (`--graph`
 *   runs: errored turns beyond `--max-errors`, gold-bearing turns with no
 *   retrieval beyond `--max-no-retrieval`). Every gate failure is a <failure>.
 * - Suite `retrace.turns`: one testcase per gold-bearing turn, and per
 *   errored turn (classname `retrace.<locale>.<kind>`, name
 *   `caseId#turn: query`). A turn fails when a failed gate counted it: its
 *   hit@k went 1 → 0 under a failed `--max-flips`, it threw under a failed
 *   `--max-errors`, it made no retriever run under a failed
 *   `--max-no-retrieval`. A miss (hit@k = 0) that no check gates is reported
 *   in the testcase's <system-out> (the evaluator's comment and where the
 *   gold went), not as a failure. A turn whose retrieval was not measured (or
 *   that threw within `--max-errors`) is <skipped> with the reason.
 */
export function renderJUnit(report: Report): string {
  const k = report.run.k;
  // Wall-clock figures come from the report's `timings` section (docs/determinism.md).
  const suiteTime: Record<string, string> =
    report.timings !== undefined ? { time: (report.timings.durationMs / 1000).toFixed(3) } : {};
  const timestamp: Record<string, string> = report.timings !== undefined ? { timestamp: report.timings.started } : {};
  const g = report.gate;

  const gateCases: string[] = [];
  let gateFailures = 0;
  for (const c of g?.checks ?? []) {
    const a = {
      classname: `retrace.gate.${c.kind}`,
      name: `${c.option}: ${c.scope === "all" ? c.key : `${c.key}[${c.scope}]`}`,
    };
    if (c.verdict === "pass")
      gateCases.push(
        `    <testcase${attrs(a)}>\n      <system-out>${xmlEscape(c.reason)}</system-out>\n    </testcase>`,
      );
    else {
      gateFailures++;
      gateCases.push(
        `    <testcase${attrs(a)}>\n      <failure${attrs({ message: c.reason, type: c.verdict === "not_measured" ? "not_measured" : c.kind })}/>\n    </testcase>`,
      );
    }
  }

  // Gate failures that no check stands for (src/eval/sweep/graph-checks.ts: turn errors, no retrieval): a failed testcase each.
  const checkReasons = new Set((g?.checks ?? []).filter((c) => c.verdict !== "pass").map((c) => c.reason));
  const unchecked: GateFailure[] = (g?.failures ?? []).filter((f) => !checkReasons.has(f.reason));
  for (const f of unchecked) {
    gateFailures++;
    const option =
      f.kind === "turn_errors" ? "--gate max-errors" : f.kind === "no_retrieval" ? "--gate max-no-retrieval" : f.kind;
    const a = {
      classname: `retrace.gate.${f.kind}`,
      name: `${option}: ${f.scope === undefined || f.scope === "all" ? f.key : `${f.key}[${f.scope}]`}`,
    };
    gateCases.push(
      `    <testcase${attrs(a)}>\n      <failure${attrs({ message: f.reason, type: f.kind })}/>\n    </testcase>`,
    );
  }
  // A failed --max-errors / --max-no-retrieval (a check of its own since they are listed in gate.checks, or a bare failure of an older report) fails the turns it counted.
  const errorsFailed = (g?.failures ?? []).some((f) => f.kind === "turn_errors");
  const noRetrievalFailed = (g?.failures ?? []).some((f) => f.kind === "no_retrieval");

  const flipsFailed = (g?.checks ?? []).some((c) => c.kind === "flips" && c.verdict !== "pass");
  const flipped = new Set(flipsFailed ? (g?.flips ?? []).map((f) => turnId(f)) : []);
  const turnCases: string[] = [];
  let turnFailures = 0;
  let skipped = 0;
  for (const t of report.turns) {
    if (t.gold.length === 0 && t.error === undefined) continue;
    const hit = t.results.find((r) => r.key === HIT_KEY);
    const total = report.timings?.turns[turnId(t)]?.total;
    const a: Record<string, string | number> = {
      classname: `retrace.${t.locale}.${t.kind}`,
      name: `${turnId(t)}: ${t.user}`,
    };
    if (total !== undefined) a.time = (total / 1000).toFixed(3);
    if (t.error !== undefined && errorsFailed) {
      turnFailures++;
      turnCases.push(
        `    <testcase${attrs(a)}>\n      <failure${attrs({ message: turnErrorText(t), type: "turn_errors" })}/>\n    </testcase>`,
      );
      continue;
    }
    if (hit === undefined) {
      skipped++;
      const reason =
        t.error !== undefined
          ? `not run: ${turnErrorText(t)}`
          : t.noRetrieval === true
            ? "no retrieval captured"
            : (report.vacuousReasons[HIT_KEY] ?? (t.retrievedIds === null ? "no store" : "no hit@k result"));
      turnCases.push(
        `    <testcase${attrs(a)}>\n      <skipped${attrs({ message: vacuousText(reason) })}/>\n    </testcase>`,
      );
      continue;
    }
    const body = [
      `query: ${t.user}`,
      `gold: ${ids(t.gold)}`,
      `top${k}: ${ids(t.retrievedIds ?? [])}`,
      ...(goldPositionsText(t) !== "" ? [`gold by stage: ${goldPositionsText(t)}`] : []),
    ].join("\n");
    if (t.noRetrieval === true && noRetrievalFailed) {
      turnFailures++;
      turnCases.push(
        `    <testcase${attrs(a)}>\n      <failure${attrs({ message: hit.comment ?? "no retrieval", type: "no_retrieval" })}>${xmlEscape(body)}</failure>\n    </testcase>`,
      );
    } else if (flipped.has(turnId(t))) {
      turnFailures++;
      const message = `hit@${k} went from 1 (baseline) to 0: ${hit.comment ?? ""}`.trimEnd();
      turnCases.push(
        `    <testcase${attrs(a)}>\n      <failure${attrs({ message, type: "flips" })}>${xmlEscape(body)}</failure>\n    </testcase>`,
      );
    } else if (hit.score === 0) {
      turnCases.push(
        `    <testcase${attrs(a)}>\n      <system-out>${xmlEscape(`miss (not gated): ${hit.comment ?? `hit@${k}=0`}\n${body}`)}</system-out>\n    </testcase>`,
      );
    } else {
      turnCases.push(`    <testcase${attrs(a)}/>`);
    }
  }

  const props = [
    ["datasetHash", report.run.datasetHash],
    ["kbHash", report.run.kbHash],
    ["embedder", report.run.embedder ?? "none"],
    ["source", report.run.source],
    ["k", String(k)],
    ["store", report.run.store],
    ["gate", g === null ? "not evaluated" : g.passed ? "pass" : "fail"],
    ["missedTurns", String(missedCount(report))],
    // --graph runs: what the run could not score right (every retrieval empty, ids naming no card, locales without their cards).
    ...graphWarnings(report).map((w) => ["warning", w]),
  ]
    .map(([name, value]) => `      <property${attrs({ name: name as string, value: value as string })}/>`)
    .join("\n");
  const gateCounts = { tests: gateCases.length, failures: gateFailures, errors: 0, skipped: 0 };
  const turnCounts = { tests: turnCases.length, failures: turnFailures, errors: 0, skipped };
  const all = { tests: gateCases.length + turnCases.length, failures: gateFailures + turnFailures, errors: 0, skipped };
  const suite = (name: string, counts: Record<string, number>, cases: string[]) => [
    `  <testsuite${attrs({ name, ...counts, ...timestamp, ...suiteTime })}>`,
    `    <properties>\n${props}\n    </properties>`,
    ...cases,
    `  </testsuite>`,
  ];
  return [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<testsuites${attrs({ name: "retrace", ...all, ...suiteTime })}>`,
    ...suite("retrace.gate", gateCounts, gateCases),
    ...suite(`retrace.turns.hit_at_${k}`, turnCounts, turnCases),
    `</testsuites>`,
    "",
  ].join("\n");
}
