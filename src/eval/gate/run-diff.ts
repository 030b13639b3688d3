/**
 * What two runs differ in (`retrace compare`'s header; docs/ci.md): every
 * property of the reports' `run` sections (and of `schemaVersion` and the
 * `bootstrap` settings) whose value is not the same in both, found by walking
 * the objects — no list of fields to keep up to date: a property added to
 * `run` later (a graph module hash, a scoring setting) shows up here when it
 * differs. Readable names come from PROPERTY_NAMES, else from the path
 * itself (`retrievalCall` → "retrieval call").
 *
 * A baseline file records fewer properties than a report (dataset and KB
 * hashes, k, source (and a graph's module and export), embedder, mode,
 * rerank, store kind); a property one side does
 * not record at all is compared only when both are reports, so a baseline
 * never "differs" by what it does not keep.
 *
 * Outcome counts of a `--graph` run (`run.graph.errors`, `scoredIds`, …) are
 * results, not settings: they are listed apart (`outcome: true`). Pure.
 */
import type { Baseline } from "./baseline.js";
import type { Report } from "../report/types.js";
import type { RunDifference } from "../report/comparison.js";

export type { RunDifference };

/** Readable names of the properties a report records (the last path segments; `*` = any key). */
const PROPERTY_NAMES: Readonly<Record<string, string>> = {
  schemaVersion: "report schema version",
  "run.datasetHash": "dataset hash (cases)",
  "run.kbHash": "KB hash",
  "run.source": "source (own graph, --graph or --traces)",
  "run.embedder": "embedder",
  "run.embedderDescription": "embedder description",
  "run.k": "k",
  "run.store": "store",
  "run.storeKind": "store kind",
  "run.mode": "retrieval mode",
  "run.rerank": "rerank",
  "run.answerer": "answerer",
  "run.split": "split file",
  "run.genericLocales": "locales on generic rules",
  "run.retrieval": "retrieval settings",
  "run.retrieval.*.denseK": "dense k",
  "run.retrieval.*.bm25K": "BM25 k",
  "run.retrieval.*.fusion.method": "fusion method",
  "run.graph": "graph",
  "run.graph.file": "graph module",
  "run.graph.exportName": "graph export",
  "run.graph.moduleHash": "graph module hash",
  "run.graph.retrievers": "graph retrievers",
  "run.graph.idKey": "id key",
  "run.graph.retrievalCall": "retrieval call scored",
  "run.graph.catalog": "catalog",
  "bootstrap.seed": "bootstrap seed",
  "bootstrap.samples": "bootstrap resamples",
  "bootstrap.unit": "bootstrap resampling unit",
  "bootstrap.test": "delta test",
  "bootstrap.correction": "delta correction",
};

/**
 * `run.graph` measurements that are no property of the run at all: the
 * largest state of a turn moves with the text of every message (its
 * safeguard, `--max-state-mb`, and the turns above it are compared).
 */
const IGNORED_PATHS: ReadonlySet<string> = new Set(["run.graph.largestStateBytes"]);

/** `run.graph` fields that are counts of what happened, not settings. */
const OUTCOME_PATHS: ReadonlySet<string> = new Set(
  [
    "errors",
    "noRetrieval",
    "noRetrievalMisses",
    "noRetrievalNoneNeeded",
    "multiCallTurns",
    "parallelCallTurns",
    "multiStepTurns",
    "retrievalTurns",
    "emptyRetrievalTurns",
    "scoredIds",
    "unknownIds",
    "unknownExamples",
    "localesWithoutCards",
    "largeStateTurns",
  ].map((f) => `run.graph.${f}`),
);

/** "retrievalCall" → "retrieval call", "bm25K" → "bm25 k". */
function words(segment: string): string {
  return segment.replace(/([a-z0-9])([A-Z])/g, "$1 $2").toLowerCase();
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Leaf paths of `v` (objects walked; arrays and scalars are leaves), with their values. */
function leaves(v: unknown, prefix: string, out: Map<string, unknown>): void {
  if (isPlainObject(v) && Object.keys(v).length > 0) {
    for (const [k, x] of Object.entries(v)) leaves(x, `${prefix}.${k}`, out);
  } else out.set(prefix, v);
}

/** The comparable properties of a run side: a report's `schemaVersion`, `run` and `bootstrap`; a baseline's recorded subset under the report's names. */
export function runProperties(side: Report | Baseline): { props: Map<string, unknown>; kind: "report" | "baseline" } {
  const props = new Map<string, unknown>();
  if ("perTurn" in side) {
    const b = side;
    const fields: Record<string, unknown> = {
      "run.datasetHash": b.datasetHash,
      "run.kbHash": b.kbHash,
      "run.k": b.k,
      "run.source": b.source.kind,
      ...(b.source.kind === "graph"
        ? { "run.graph.file": b.source.module, "run.graph.exportName": b.source.exportName }
        : {}),
      "run.embedder": b.config.embedder,
      "run.mode": b.config.mode,
      "run.rerank": b.config.rerank,
      ...(b.storeKind !== undefined ? { "run.storeKind": b.storeKind } : {}),
    };
    for (const [p, v] of Object.entries(fields)) props.set(p, v);
    return { props, kind: "baseline" };
  }
  props.set("schemaVersion", side.schemaVersion);
  leaves(side.run, "run", props);
  if (side.bootstrap !== undefined) leaves(side.bootstrap, "bootstrap", props);
  return { props, kind: "report" };
}

/** The name of a path: the registry's, with `*` standing for a locale (given back), else built from its segments. */
function nameOf(path: string): { name: string; locale?: string } {
  if (PROPERTY_NAMES[path] !== undefined) return { name: PROPERTY_NAMES[path] };
  const m = /^run\.retrieval\.([^.]+)\.(.+)$/.exec(path);
  if (m !== null) {
    const rest = `run.retrieval.*.${m[2]}`;
    // The agent's opaque settings are named by their recorded paths (`fusion.params.k`), never by what they mean.
    const opaque = /^(fusion\.params|settings)\./.test(m[2]!) ? m[2]! : undefined;
    return { name: PROPERTY_NAMES[rest] ?? opaque ?? m[2]!.split(".").map(words).join(" "), locale: m[1]! };
  }
  const segs = path.split(".");
  // The longest registered prefix names the start; the rest is spelled out.
  for (let i = segs.length - 1; i > 0; i--) {
    const head = PROPERTY_NAMES[segs.slice(0, i).join(".")];
    if (head !== undefined) return { name: `${head}: ${segs.slice(i).map(words).join(" ")}` };
  }
  return {
    name: segs
      .filter((s) => s !== "run")
      .map(words)
      .join(" "),
  };
}

/**
 * The properties whose values differ between A and B, in A's order then
 * B's; per-locale retrieval settings that differ the same way in several
 * locales are one row naming them all.
 */
export function runDifferences(a: Report | Baseline, b: Report | Baseline): RunDifference[] {
  const pa = runProperties(a);
  const pb = runProperties(b);
  const bothReports = pa.kind === "report" && pb.kind === "report";
  const paths = [...pa.props.keys(), ...[...pb.props.keys()].filter((p) => !pa.props.has(p))];
  const rows: (RunDifference & { locale?: string; base: string })[] = [];
  for (const path of paths) {
    const inA = pa.props.has(path);
    const inB = pb.props.has(path);
    if (!bothReports && !(inA && inB)) continue; // a baseline does not record it: nothing to compare
    const va = pa.props.get(path);
    const vb = pb.props.get(path);
    if (same(va, vb) || IGNORED_PATHS.has(path)) continue;
    const { name, locale } = nameOf(path);
    rows.push({
      path,
      name,
      a: va,
      b: vb,
      outcome: OUTCOME_PATHS.has(path),
      base: locale !== undefined ? path.replace(`.${locale}.`, ".*.") : path,
      ...(locale !== undefined ? { locale } : {}),
    });
  }
  // Merge per-locale rows with the same name and the same values.
  const out: RunDifference[] = [];
  const merged = new Map<string, { row: RunDifference; locales: string[] }>();
  for (const r of rows) {
    if (r.locale === undefined) {
      out.push({ path: r.path, name: r.name, a: r.a, b: r.b, outcome: r.outcome });
      continue;
    }
    const key = `${r.base}\u0000${JSON.stringify(r.a)}\u0000${JSON.stringify(r.b)}`;
    const m = merged.get(key);
    if (m !== undefined) {
      m.locales.push(r.locale);
      continue;
    }
    const row: RunDifference = { path: r.path, name: r.name, a: r.a, b: r.b, outcome: r.outcome };
    merged.set(key, { row, locales: [r.locale] });
    out.push(row);
  }
  for (const { row, locales } of merged.values()) {
    row.path = locales.length === 1 ? row.path : row.path.replace(`.${locales[0]}.`, `.{${locales.join(",")}}.`);
    row.name = `retrieval settings [${locales.join(", ")}]: ${row.name}`;
  }
  return out;
}
