/**
 * `retrace merge`'s checks (./shard-merge.ts; docs/reliability.md, "Sharded
 * sweeps"): each shard report read with its `shard` section, the set checked
 * (one run's identity, each index once, none missing), every case's turns
 * collected once, and the assignment rule re-run on the merged turn counts.
 * Throws DataValidationError (exit 2) naming the file and the field. Pure;
 * inputs are never mutated.
 */
import { DataValidationError, type DataIssue } from "../../errors.js";
import { GRAPH_IDENTITY_KEYS, parseReport, REPORT_VERSION } from "../report/schemas.js";
import { assignShards } from "./shard.js";
import type { Report, ShardInfo, TurnReport } from "../report/types.js";

/** One shard report as read from disk: its file name and its parsed JSON. */
export interface ShardFile {
  file: string;
  data: unknown;
}

export const fail = (issues: DataIssue[]): never => {
  throw new DataValidationError(issues);
};

const show = (v: unknown) => (v === undefined ? "absent" : (JSON.stringify(v) ?? String(v)));

/** Dotted path of the first field where `a` and `b` differ (object keys in sorted order), or null when they are equal. */
export function firstDifference(a: unknown, b: unknown, at = ""): { field: string; a: unknown; b: unknown } | null {
  if (Object.is(a, b)) return null;
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return { field: `${at}.length`.replace(/^\./, ""), a: a.length, b: b.length };
    for (let i = 0; i < a.length; i++) {
      const d = firstDifference(a[i], b[i], `${at}[${i}]`);
      if (d !== null) return d;
    }
    return null;
  }
  if (
    typeof a === "object" &&
    a !== null &&
    typeof b === "object" &&
    b !== null &&
    !Array.isArray(a) &&
    !Array.isArray(b)
  ) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    for (const k of keys) {
      const d = firstDifference(
        (a as Record<string, unknown>)[k],
        (b as Record<string, unknown>)[k],
        at === "" ? k : `${at}.${k}`,
      );
      if (d !== null) return d;
    }
    return null;
  }
  return { field: at, a, b };
}

export interface Shard {
  file: string;
  raw: Record<string, unknown>;
  report: Report;
  shard: ShardInfo;
}

/** The identity every shard must share with the first: what was run, how, and on which selection. */
export function identity(s: Shard): Record<string, unknown> {
  // `retrieval` is per locale and a shard holds only some locales' turns: checked locale by locale in mergeRetrieval.
  // A --graph run's `run.graph` counts are per shard (recomputed from the merged turns): only its identity and scoring are compared.
  // The run as read (migrated to the current version: a shard of an older version agrees with a current one on what it ran).
  const { datasetHash: _ownHash, retrieval: _retrieval, graph, ...run } = s.report.run as Record<string, unknown>;
  const judge = s.report.judge;
  const graphIdentity =
    graph === undefined
      ? {}
      : { graph: Object.fromEntries(GRAPH_IDENTITY_KEYS.map((k) => [k, (graph as Record<string, unknown>)[k]])) };
  return {
    schemaVersion: s.report.schemaVersion,
    shard: { count: s.shard.count, rule: s.shard.rule, dataset: s.shard.dataset },
    run: { ...run, ...graphIdentity },
    bootstrap: s.raw.bootstrap,
    chance: (s.raw.chance as { cardsPerLocale?: unknown } | undefined)?.cardsPerLocale,
    judge: judge === undefined ? undefined : { model: judge.model, prompt: judge.prompt },
    counterfactual: counterfactualOf(s),
    // `--repeat N`: every shard ran the same number of repeats (or none).
    repeats: s.report.repeats?.n,
  };
}

/** Whether a shard ran counterfactual retrieval (and why not): its `queryAttribution` header; undefined when it has no such section. */
export function counterfactualOf(s: Shard): { enabled: boolean; reason?: string } | undefined {
  const qa = s.report.queryAttribution;
  return qa === undefined
    ? undefined
    : { enabled: qa.enabled, ...(qa.reason !== undefined ? { reason: qa.reason } : {}) };
}

const FIELD_NAMES: Record<string, string> = {
  "shard.count": "shard count",
  "shard.rule": "assignment rule",
  "shard.dataset": "case selection (dataset hash, case ids or turns)",
  run: "run configuration",
  bootstrap: "bootstrap settings",
  chance: "card counts",
  judge: "judge",
  repeats: "number of repeats (--repeat)",
};

function fieldName(field: string): string {
  for (const [prefix, name] of Object.entries(FIELD_NAMES))
    if (field === prefix || field.startsWith(`${prefix}.`) || field.startsWith(`${prefix}[`)) return name;
  return field;
}

/** Reads each file's report and its `shard` section (a non-shard report is refused). */
export function readShards(files: readonly ShardFile[]): Shard[] {
  if (files.length === 0) fail([{ file: "retrace merge", message: "no shard report given" }]);
  return files.map(({ file, data }) => {
    const report = parseReport(data, file); // ReportSchema: fields and the shard section checked, exit 2 naming the field
    if (report.shard === undefined)
      fail([
        {
          file,
          field: "shard",
          message:
            "not a shard report (no `shard` section): retrace merge takes the reports written by `retrace eval --shard i/n`",
        },
      ]);
    // Shards came with schemaVersion 2; a version 2, 3 or 4 shard is migrated on read (judge counters into timings, retrieval settings opaque, the run's source its own field) and merges with current ones.
    const written = (data as Record<string, unknown>).schemaVersion;
    if (report.schemaVersion !== REPORT_VERSION || ![2, 3, 4, REPORT_VERSION].includes(written as number))
      fail([
        {
          file,
          field: "schemaVersion",
          message: `a shard report is written with schemaVersion 2, 3, 4 or ${REPORT_VERSION}`,
        },
      ]);
    return { file, raw: data as Record<string, unknown>, report, shard: report.shard as ShardInfo };
  });
}

/** Every shard agrees with the first on identity(); each index given once; none missing. */
export function checkSet(shards: readonly Shard[]): void {
  const first = shards[0]!;
  const ref = identity(first);
  for (const s of shards.slice(1)) {
    const d = firstDifference(identity(s), ref);
    if (d !== null)
      fail([
        {
          file: s.file,
          field: d.field,
          message: `differs from ${first.file}: ${show(d.a)} here, ${show(d.b)} there. The shards of one merge must come from one run's configuration (${fieldName(d.field)} differs)`,
        },
      ]);
  }
  const byIndex = new Map<number, Shard>();
  for (const s of shards) {
    const other = byIndex.get(s.shard.index);
    if (other !== undefined)
      fail([
        {
          file: s.file,
          field: "shard.index",
          message: `shard ${s.shard.index}/${s.shard.count} is given twice (also ${other.file})`,
        },
      ]);
    byIndex.set(s.shard.index, s);
  }
  const count = first.shard.count;
  const missing = Array.from({ length: count }, (_, i) => i + 1).filter((i) => !byIndex.has(i));
  if (missing.length > 0)
    fail([
      {
        file: "retrace merge",
        message: `missing shard${missing.length === 1 ? "" : "s"} ${missing.map((i) => `${i}/${count}`).join(", ")} (given: ${[
          ...byIndex.keys(),
        ]
          .sort((a, b) => a - b)
          .map((i) => `${i}/${count} ${byIndex.get(i)!.file}`)
          .join(", ")}); every shard of a run must be merged`,
      },
    ]);
}

/**
 * Each shard's turns are exactly its cases' turns, 0..m−1 each, in its case
 * order; no case is in two shards. Returns each case's turns. The shards of a
 * `--traces` run (`dataset.caseTurns`) hold only the recorded turns that
 * joined: their turns are in increasing order within the case's turns, and a
 * case may have none.
 */
export function collectTurns(shards: readonly Shard[]): Map<string, { file: string; turns: TurnReport[] }> {
  const dataset = shards[0]!.shard.dataset;
  const caseTurns =
    dataset.caseTurns === undefined ? undefined : new Map(dataset.caseIds.map((id, i) => [id, dataset.caseTurns![i]]));
  if (caseTurns !== undefined && dataset.caseTurns!.length !== dataset.caseIds.length)
    fail([
      {
        file: shards[0]!.file,
        field: "shard.dataset.caseTurns",
        message: `expected one turn count per selected case (${dataset.caseIds.length}), got ${dataset.caseTurns!.length}`,
      },
    ]);
  const inDataset = new Set(dataset.caseIds);
  const byCase = new Map<string, { file: string; turns: TurnReport[] }>();
  for (const s of shards) {
    for (const [i, id] of s.shard.caseIds.entries()) {
      if (!inDataset.has(id))
        fail([
          {
            file: s.file,
            field: `shard.caseIds[${i}]`,
            message: `case ${show(id)} is not in the selection the shards split`,
          },
        ]);
      const other = byCase.get(id);
      if (other !== undefined)
        fail([
          {
            file: s.file,
            field: `shard.caseIds[${i}]`,
            message: `case ${show(id)} is also in ${other.file}: shards must not overlap`,
          },
        ]);
      byCase.set(id, { file: s.file, turns: [] });
    }
    const rawTurns = s.raw.turns as TurnReport[];
    for (const [i, t] of rawTurns.entries()) {
      const entry = byCase.get(t.caseId);
      if (entry === undefined || entry.file !== s.file)
        fail([
          {
            file: s.file,
            field: `turns[${i}].caseId`,
            message: `turn of case ${show(t.caseId)}, which is not one of this shard's cases (shard.caseIds)`,
          },
        ]);
      const e = entry!;
      if (caseTurns !== undefined) {
        const last = e.turns.at(-1)?.turn ?? -1;
        if (t.turn <= last || t.turn >= caseTurns.get(t.caseId)!)
          fail([
            {
              file: s.file,
              field: `turns[${i}].turn`,
              message: `expected a turn of case ${show(t.caseId)} after turn ${last} and below ${caseTurns.get(t.caseId)}, got ${t.turn}`,
            },
          ]);
      } else if (t.turn !== e.turns.length)
        fail([
          {
            file: s.file,
            field: `turns[${i}].turn`,
            message: `expected turn ${e.turns.length} of case ${show(t.caseId)}, got ${t.turn}`,
          },
        ]);
      e.turns.push(t);
    }
    if (caseTurns !== undefined) continue; // recorded traces: the turns that joined, checked above
    const count = s.shard.caseIds.reduce((n, id) => n + (byCase.get(id)?.turns.length ?? 0), 0);
    if (count !== s.shard.turns || count !== rawTurns.length)
      fail([
        {
          file: s.file,
          field: "shard.turns",
          message: `the shard says ${s.shard.turns} turns but its report holds ${rawTurns.length}`,
        },
      ]);
    for (const [i, id] of s.shard.caseIds.entries())
      if (byCase.get(id)!.turns.length === 0)
        fail([{ file: s.file, field: `shard.caseIds[${i}]`, message: `case ${show(id)} has no turn in this report` }]);
  }
  return byCase;
}

/** The rule, recomputed from the merged turn counts, assigns each shard exactly the cases it ran. */
export function checkAssignment(shards: readonly Shard[], byCase: Map<string, { turns: TurnReport[] }>): void {
  const dataset = shards[0]!.shard.dataset;
  const total = [...byCase.values()].reduce((n, c) => n + c.turns.length, 0);
  // A --traces run's shards hold the turns that joined; the assignment reads the cases' own turn counts (dataset.caseTurns).
  if (dataset.caseTurns === undefined && total !== dataset.turns)
    fail([
      {
        file: shards[0]!.file,
        field: "shard.dataset.turns",
        message: `the selection has ${dataset.turns} turns but the shards hold ${total} together`,
      },
    ]);
  const count = shards[0]!.shard.count;
  const shardOf = assignShards(
    dataset.caseIds.map((id, i) => ({ id, turns: dataset.caseTurns?.[i] ?? byCase.get(id)!.turns.length })),
    count,
  );
  for (const s of shards) {
    const expected = dataset.caseIds.filter((_, i) => shardOf[i] === s.shard.index);
    const d = firstDifference(s.shard.caseIds, expected);
    if (d !== null)
      fail([
        {
          file: s.file,
          field: "shard.caseIds",
          message: `shard ${s.shard.index}/${count} ran ${show(s.shard.caseIds.slice(0, 5))}${s.shard.caseIds.length > 5 ? "…" : ""} but the assignment rule gives it ${show(expected.slice(0, 5))}${expected.length > 5 ? "…" : ""} (first difference at ${d.field})`,
        },
      ]);
  }
}
