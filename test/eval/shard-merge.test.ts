/**
 * `retrace merge`'s core (src/eval/gate/shard-merge.ts): shard reports made from a
 * synthetic run merge back into the unsharded report, byte for byte apart
 * from `timings`, through the report code eval uses (src/app/report.ts);
 * and every refusal names the file and what differs (exit 2).
 */
import { describe, expect, it } from "vitest";
import { applyGate, reportOf } from "../../src/app/report.js";
import { DataValidationError, isRetraceError } from "../../src/errors.js";
import { baselineFromReport } from "../../src/eval/gate/baseline.js";
import { reportToJSON } from "../../src/eval/report/render.js";
import { mergeShards, type ShardFile } from "../../src/eval/gate/shard-merge.js";
import { shardCases, shardSection } from "../../src/eval/gate/shard.js";
import { withoutTimings } from "../../src/eval/report/timings.js";
import type { Report, TurnReport } from "../../src/eval/report/types.js";
import { K, runInfo, turnReports } from "./report-fixture.js";
import { evaluatorsFor } from "../../src/eval/measures/storeless.js";

const LOC = ["en", "es-419", "pt-BR"] as const;
const IDS = ["a", "b", "c", "d", "e", "f", "g", "h"];
const SEED = 11;
const CARDS = { en: 3, "es-419": 3, "pt-BR": 2 };
const GATE = { minHit: 0.5, minNdcg: { en: 0.99 } };

/** 14 cases of 1–4 turns over three locales, both kinds; gold and retrieved lists rotate so scores vary. */
const CASES = Array.from({ length: 14 }, (_, c) => ({
  id: `case-${String.fromCharCode(97 + ((c * 5) % 14))}${c}`,
  locale: LOC[c % 3]!,
  kind: c % 4 === 3 ? ("adversarial" as const) : ("golden" as const),
  turns: Array.from({ length: 1 + ((c * 7) % 4) }, (_, t) => ({
    user: `question ${c}.${t}`,
    gold: (c + t) % 5 === 0 ? [] : [IDS[(c + t) % 8]!],
    retrievedIds: [IDS[(c * 3 + t) % 8]!, IDS[(c + t + 1) % 8]!, IDS[(c + 2 * t) % 8]!],
  })),
}));

async function allTurns(): Promise<TurnReport[]> {
  const rows = CASES.flatMap((c) =>
    c.turns.map((t, i) => ({
      caseId: c.id,
      turn: i,
      locale: c.locale,
      kind: c.kind,
      user: t.user,
      gold: t.gold,
      expect: (t.gold.length === 0 ? "refuse" : "answer") as "refuse" | "answer",
      retrievedIds: t.retrievedIds,
      citedIds: t.retrievedIds.slice(0, 1),
      refused: t.gold.length === 0,
    })),
  );
  return turnReports(rows, evaluatorsFor({ k: K, storeBacked: true }));
}

const timingsOf = (turns: readonly TurnReport[], started: string, durationMs: number) => ({
  started,
  durationMs,
  turns: Object.fromEntries(turns.map((t) => [`${t.caseId}#${t.turn}`, { total: 3 }])),
});

async function unsharded(): Promise<Report> {
  const turns = await allTurns();
  const report = reportOf({
    run: runInfo({ datasetHash: "ds-all" }),
    turns,
    evaluators: evaluatorsFor({ k: K, storeBacked: true }),
    seed: SEED,
    resample: "case",
    cardsPerLocale: CARDS,
  });
  applyGate(report, GATE, SEED, null);
  report.timings = timingsOf(turns, "2026-01-01T00:00:00.000Z", 900);
  return report;
}

/** The n shard reports of the run, as eval --shard writes them (JSON round trip included). */
async function shardFiles(n: number): Promise<ShardFile[]> {
  const turns = await allTurns();
  return Array.from({ length: n }, (_, s) => {
    const spec = { index: s + 1, count: n };
    const mine = shardCases(CASES, spec);
    const ids = new Set(mine.map((c) => c.id));
    const own = turns.filter((t) => ids.has(t.caseId));
    const report = reportOf({
      run: runInfo({ datasetHash: `ds-shard-${s + 1}` }),
      turns: own,
      evaluators: evaluatorsFor({ k: K, storeBacked: true }),
      seed: SEED,
      resample: "case",
      cardsPerLocale: CARDS,
    });
    report.shard = shardSection(spec, CASES, mine, "ds-all");
    report.timings = timingsOf(own, `2026-01-01T00:0${s}:00.000Z`, 100 * (s + 1));
    return { file: `shard-${s + 1}.json`, data: JSON.parse(reportToJSON(report)) as unknown };
  });
}

function merged(files: ShardFile[]): Report {
  const m = mergeShards(files);
  const report = reportOf({
    run: m.run,
    turns: m.turns,
    evaluators: evaluatorsFor({ k: m.run.k, storeBacked: true }),
    seed: m.bootstrap.seed,
    samples: m.bootstrap.samples,
    resample: m.bootstrap.unit,
    ...(m.cardsPerLocale !== undefined ? { cardsPerLocale: m.cardsPerLocale } : {}),
  });
  applyGate(report, GATE, m.bootstrap.seed, null);
  if (m.timings !== undefined) report.timings = m.timings;
  return report;
}

describe("mergeShards", () => {
  it.each([1, 2, 3, 5])("merges %i shards into the unsharded report, byte for byte apart from timings", async (n) => {
    const full = await unsharded();
    const files = await shardFiles(n);
    // each shard is a partial report: its own turns and aggregates, its own dataset hash
    if (n > 1) for (const f of files) expect((f.data as Report).turns.length).toBeLessThan(full.turns.length);
    const m = merged(files.reverse()); // file order does not matter
    expect(reportToJSON(withoutTimings(m))).toBe(reportToJSON(withoutTimings(full)));
    expect(m.gate?.passed).toBe(false); // the en nDCG floor of 0.99 fails on the merged turns, as it does unsharded
    expect(m.gate).toEqual(full.gate);
  });

  it("gives the unsharded gate against a baseline too (drops and flips)", async () => {
    const full = await unsharded();
    // A baseline that had hit@k = 1 on every gold-bearing turn: each miss of this run is a flip, and the hit mean a drop.
    const baseline = baselineFromReport(full, new Date("2026-01-01T00:00:00Z"));
    for (const scores of Object.values(baseline.perTurn))
      if ("retrieval_hit_at_k" in scores) scores.retrieval_hit_at_k = 1;
    baseline.aggregates.retrieval_hit_at_k!.mean = 1;
    const withBaseline = { ...GATE, maxDrop: 0.01, maxFlips: 0 };
    applyGate(full, withBaseline, SEED, baseline);
    const m = merged(await shardFiles(3));
    applyGate(m, withBaseline, SEED, baseline);
    expect(full.gate?.failures.map((f) => f.kind)).toEqual(expect.arrayContaining(["regression", "flips"]));
    expect(reportToJSON(withoutTimings(m))).toBe(reportToJSON(withoutTimings(full)));
  });

  it("merges a version 4 shard (no run.source, as the previous retrace wrote it) with version 5 shards, as if all were current", async () => {
    const full = await unsharded();
    const files = await shardFiles(3);
    const { source, ...run } = (files[1]!.data as Report).run;
    expect(source).toBe("own");
    files[1] = { file: "old.json", data: { ...(files[1]!.data as Report), schemaVersion: 4, run } };
    const m = merged(files);
    expect(Object.keys(m.run).indexOf("source")).toBe(Object.keys(m.run).indexOf("embedder") - 1);
    expect(reportToJSON(withoutTimings(m))).toBe(reportToJSON(withoutTimings(full)));
  });

  it("combines the wall-clock sections: earliest start, summed durations, every turn", async () => {
    const m = mergeShards(await shardFiles(3));
    expect(m.timings?.started).toBe("2026-01-01T00:00:00.000Z");
    expect(m.timings?.durationMs).toBe(100 + 200 + 300);
    expect(Object.keys(m.timings?.turns ?? {})).toEqual(m.turns.map((t) => `${t.caseId}#${t.turn}`));
  });

  it("unions run.retrieval over shards that hold different locales, and refuses one locale run two ways", async () => {
    const cfg = (method: "rrf" | "minmax") => ({
      denseK: 20,
      bm25K: 20,
      fusion: { method, params: method === "rrf" ? { k: 60 } : {} },
      settings: { weights: { dense: 1, bm25: 1 }, bm25: { k1: 1.2, b: 0.75 } },
    });
    const files = await shardFiles(2);
    const setRetrieval = (f: ShardFile, r: Record<string, unknown>) =>
      ((f.data as { run: Record<string, unknown> }).run.retrieval = r);
    setRetrieval(files[0]!, { en: cfg("rrf"), "es-419": cfg("minmax") });
    setRetrieval(files[1]!, { "pt-BR": cfg("rrf"), en: cfg("rrf") });
    expect(mergeShards(files).run.retrieval).toEqual({ en: cfg("rrf"), "es-419": cfg("minmax"), "pt-BR": cfg("rrf") });
    expect(Object.keys(mergeShards(files).run.retrieval!)).toEqual(["en", "es-419", "pt-BR"]);
    setRetrieval(files[1]!, { en: cfg("minmax") });
    expect(refusal(files)).toMatch(/shard-2\.json.*run\.retrieval\.en.*differs from shard-1\.json/s);
    // the differing paths of the opaque settings are named
    expect(refusal(files)).toContain("differ at fusion.method, fusion.params.k)");
    // key order is not a difference
    const reordered = { ...cfg("rrf"), settings: { bm25: { b: 0.75, k1: 1.2 }, weights: { bm25: 1, dense: 1 } } };
    setRetrieval(files[1]!, { en: reordered });
    expect(mergeShards(files).run.retrieval!.en).toEqual(cfg("rrf"));
  });

  /** Runs mergeShards and returns the DataValidationError's text (the test fails if it does not throw one). */
  function refusal(files: ShardFile[]): string {
    try {
      mergeShards(files);
    } catch (e) {
      expect(isRetraceError(e) && (e as { exitCode: number }).exitCode).toBe(2);
      expect(e).toBeInstanceOf(DataValidationError);
      return (e as Error).message;
    }
    throw new Error("mergeShards accepted the shards");
  }
  // The edits write fields of any shape, also ones a valid shard report cannot hold.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  type Loose = Record<string, any>;
  const edit = (f: ShardFile, change: (r: Loose) => void): ShardFile => {
    const data = structuredClone(f.data) as Loose;
    change(data);
    return { file: f.file, data };
  };

  it("refuses a report that is not a shard", async () => {
    const [s1] = await shardFiles(2);
    const full = { file: "full.json", data: JSON.parse(reportToJSON(await unsharded())) as unknown };
    expect(refusal([s1!, full])).toMatch(/full\.json: field `shard` not a shard report \(no `shard` section\)/);
  });

  it("refuses shards of another configuration, naming the field", async () => {
    const [s1, s2] = await shardFiles(2);
    expect(refusal([s1!, edit(s2!, (r) => (r.run.embedder = "other-embedder"))])).toMatch(
      /shard-2\.json: field `run\.embedder` differs from shard-1\.json: "other-embedder" here, "builtin-hash-ngram-384" there.*run configuration/,
    );
    expect(refusal([s1!, edit(s2!, (r) => (r.run.k = 10))])).toMatch(
      /shard-2\.json: field `run\.k` differs .* 10 here, 3 there/,
    );
    expect(refusal([s1!, edit(s2!, (r) => (r.run.kbHash = "kb-other"))])).toMatch(/field `run\.kbHash`/);
  });

  it("refuses shards of another seed or resampling unit", async () => {
    const [s1, s2] = await shardFiles(2);
    expect(refusal([s1!, edit(s2!, (r) => (r.bootstrap.seed = 12))])).toMatch(
      /shard-2\.json: field `bootstrap\.seed` differs from shard-1\.json: 12 here, 11 there.*bootstrap settings/,
    );
    expect(refusal([s1!, edit(s2!, (r) => (r.bootstrap.unit = "turn"))])).toMatch(/field `bootstrap\.unit`/);
  });

  it("refuses shards of another dataset or case selection", async () => {
    const [s1, s2] = await shardFiles(2);
    expect(refusal([s1!, edit(s2!, (r) => (r.shard.dataset.datasetHash = "ds-other"))])).toMatch(
      /shard-2\.json: field `shard\.dataset\.datasetHash` differs from shard-1\.json: "ds-other" here, "ds-all" there.*case selection/,
    );
  });

  it("refuses shards of different shard counts", async () => {
    const [a1] = await shardFiles(2);
    const [, b2] = await shardFiles(3);
    expect(refusal([a1!, { ...b2!, file: "three-2.json" }])).toMatch(
      /three-2\.json: field `shard\.count` differs from shard-1\.json: 3 here, 2 there/,
    );
  });

  it("refuses a shard given twice", async () => {
    const [s1, s2] = await shardFiles(2);
    expect(refusal([s1!, s2!, { ...s1!, file: "copy-of-1.json" }])).toMatch(
      /copy-of-1\.json: field `shard\.index` shard 1\/2 is given twice \(also shard-1\.json\)/,
    );
  });

  it("refuses a missing shard, naming it", async () => {
    const [s1, , s3] = await shardFiles(3);
    expect(refusal([s1!, s3!])).toMatch(/missing shard 2\/3 \(given: 1\/3 shard-1\.json, 3\/3 shard-3\.json\)/);
  });

  it("refuses overlapping shards", async () => {
    const [s1, s2] = await shardFiles(2);
    const moved = (s1!.data as Report).shard!.caseIds[0]!;
    const movedTurns = (s1!.data as Report).turns.filter((t) => t.caseId === moved);
    const s2b = edit(s2!, (r) => {
      r.shard.caseIds.push(moved);
      r.turns.push(...structuredClone(movedTurns));
    });
    expect(refusal([s1!, s2b])).toMatch(
      new RegExp(
        `shard-2\\.json: field \`shard\\.caseIds\\[\\d+\\]\` case "${moved}" is also in shard-1\\.json: shards must not overlap`,
      ),
    );
  });

  it("refuses shards whose cases are not the ones the rule assigns", async () => {
    const [s1, s2] = await shardFiles(2);
    const moved = (s1!.data as Report).shard!.caseIds[0]!;
    const s1b = edit(s1!, (r) => {
      r.shard.caseIds = r.shard.caseIds.filter((id: string) => id !== moved);
      r.turns = r.turns.filter((t: TurnReport) => t.caseId !== moved);
      r.shard.turns = r.turns.length;
    });
    const s2b = edit(s2!, (r) => {
      r.shard.caseIds.push(moved);
      r.turns.push(...structuredClone((s1!.data as Report).turns.filter((t) => t.caseId === moved)));
      r.shard.turns = r.turns.length;
    });
    expect(refusal([s1b, s2b])).toMatch(
      /shard-1\.json: field `shard\.caseIds` shard 1\/2 ran .* but the assignment rule gives it/,
    );
  });

  it("refuses a shard that lost turns", async () => {
    const [s1, s2] = await shardFiles(2);
    expect(refusal([s1!, edit(s2!, (r) => r.turns.pop())])).toMatch(
      /shard-2\.json: field `shard\.turns` the shard says \d+ turns but its report holds \d+/,
    );
    const at = (s2!.data as Report).turns.findIndex((t) => t.turn === 1) - 1; // turn 0 of a case with several turns
    expect(at).toBeGreaterThanOrEqual(0);
    expect(refusal([s1!, edit(s2!, (r) => r.turns.splice(at, 1))])).toMatch(
      new RegExp(`shard-2\\.json: field \`turns\\[${at}\\]\\.turn\` expected turn 0 of case .*, got 1`),
    );
  });

  it("refuses a malformed shard section through the report schema", async () => {
    const [s1, s2] = await shardFiles(2);
    expect(refusal([s1!, edit(s2!, (r) => (r.shard.index = 3))])).toMatch(/shard-2\.json: field `shard\.index`/);
    expect(refusal([s1!, edit(s2!, (r) => delete r.shard.dataset)])).toMatch(/shard-2\.json: field `shard\.dataset`/);
  });
});
