/**
 * The run-level facts, the unknown-id refusal and the gate of a `--graph` run
 * (src/eval/sweep/graph-checks.ts), on hand-made turn reports; and the
 * report lines they give (src/eval/report/graph-report.ts).
 */
import { describe, expect, it } from "vitest";
import { GraphInputError } from "../../src/errors.js";
import { graphTurnTag, graphWarnings } from "../../src/eval/report/graph-report.js";
import type { Report, TurnReport } from "../../src/eval/report/types.js";
import {
  checkKnownIds,
  graphGateFailures,
  graphRunFacts,
  UNKNOWN_ID_LIMIT,
} from "../../src/eval/sweep/graph-checks.js";

const LOCALE: Record<string, string> = { a: "en", b: "en", c: "es-419" };
const localeOf = (id: string) => LOCALE[id];

function t(caseId: string, over: Partial<TurnReport>): TurnReport {
  return {
    caseId,
    turn: 0,
    locale: "en",
    kind: "golden",
    user: "q",
    gold: ["a"],
    expect: "answer",
    retrievedIds: [],
    citedIds: [],
    refused: false,
    answer: "",
    results: [],
    ...over,
  };
}
const captured = (ids: string[], topLevelRuns = 1, steps = 1) => ({
  retrievedIds: ids,
  captured: {
    source: "callbacks" as const,
    retrievers: ["R"],
    topLevelRuns,
    steps,
    stages: [],
    noChildRuns: [],
    unknownIds: ids.filter((id) => LOCALE[id] === undefined),
  },
});

describe("graphRunFacts", () => {
  it("counts no-retrieval turns by gold, multi-call turns, scored and unknown ids, empty retrievals and locales without their cards", () => {
    const turns = [
      t("c1", { ...captured(["a", "x"], 3, 1) }), // parallel fan-out, one unknown id
      t("c2", { ...captured(["b"], 2, 2) }), // two sequential calls
      t("c3", { locale: "es-419", gold: ["c"], ...captured(["a", "y", "x"]) }), // es-419 retrieved only an en card and unknown ids
      t("c4", { noRetrieval: true }), // gold-bearing, no retrieval
      t("c5", { gold: [], noRetrieval: true }), // empty gold, no retrieval
      t("c6", { ...captured([]) }), // an empty retrieval
      t("c7", { error: "boom", retrievedIds: null }),
    ];
    turns[0]!.stateBytes = 2048;
    turns[1]!.stateBytes = 1025;
    turns[2]!.stateBytes = 1024;
    // A limit of 1 KB: c1 (2048) and c2 (1025) are above it, c3 (1024) is not.
    expect(graphRunFacts(turns, localeOf, 1024)).toMatchObject({
      maxStateBytes: 1024,
      largestStateBytes: 2048,
      largeStateTurns: 2,
    });
    expect(graphRunFacts(turns, localeOf)).toEqual({
      maxStateBytes: 16 * 2 ** 20,
      largestStateBytes: 2048,
      largeStateTurns: 0,
      noRetrievalMisses: 1,
      noRetrievalNoneNeeded: 1,
      multiCallTurns: 2,
      parallelCallTurns: 1,
      multiStepTurns: 1,
      retrievalTurns: 4,
      emptyRetrievalTurns: 1,
      scoredIds: 6,
      unknownIds: 3,
      unknownExamples: ["x", "y"],
      localesWithoutCards: ["es-419"],
    });
  });
});

describe("checkKnownIds", () => {
  const where = { graph: "--graph g.mjs#graph", idKeys: "metadata.parentId, Document.id", ids: "the KB kb" };
  it(`refuses a run with more than ${UNKNOWN_ID_LIMIT * 100}% unknown ids, naming examples and the options that fix them`, () => {
    expect(() => checkKnownIds({ scoredIds: 4, unknownIds: 2, unknownExamples: ["x"] }, where)).not.toThrow();
    expect(() => checkKnownIds({ scoredIds: 0, unknownIds: 0, unknownExamples: [] }, where)).not.toThrow();
    const refuse = () =>
      checkKnownIds({ scoredIds: 4, unknownIds: 3, unknownExamples: ["docs/en/a.md", "b.txt"] }, where);
    expect(refuse).toThrowError(GraphInputError);
    expect(refuse).toThrowError(
      /^--graph g\.mjs#graph: 3 of the 4 ids .*\(75%, more than 50%\) name no card of the KB kb.*e\.g\. "docs\/en\/a\.md", "b\.txt"\. The ids were read from metadata\.parentId, Document\.id\. They look like file paths.*--id-key FIELD.*--id-map MODULE/,
    );
    // No path hint for ids that do not look like paths.
    expect(() =>
      checkKnownIds({ scoredIds: 2, unknownIds: 2, unknownExamples: ["uuid-1", "uuid-2"] }, where),
    ).toThrowError(/^(?!.*file paths).*--id-key FIELD/);
  });
});

describe("graphGateFailures", () => {
  it("never fails on empty-gold no-retrieval turns; gates gold-bearing ones only with maxNoRetrieval", () => {
    const turns = [t("c1", { gold: [], noRetrieval: true }), t("c2", { noRetrieval: true })];
    expect(graphGateFailures(turns, {})).toEqual([]);
    expect(graphGateFailures(turns, { maxNoRetrieval: 1 })).toEqual([]);
    expect(graphGateFailures(turns, { maxNoRetrieval: 0 }).map((f) => f.kind)).toEqual(["no_retrieval"]);
  });
});

describe("graph report lines", () => {
  const graph = {
    file: "g.mjs",
    exportName: "graph",
    retrievers: ["R"],
    idKey: "k",
    retrievalCall: "last" as const,
    errors: 0,
    noRetrieval: 0,
  };
  const report = (g: object, turns: TurnReport[] = []) =>
    ({ run: { k: 5, graph: { ...graph, ...g } }, turns }) as unknown as Report;
  it("tag a turn's line with no retrieval, unknown ids and several calls; nothing on a built-in run", () => {
    const r = report({});
    expect(graphTurnTag(r, t("c", { noRetrieval: true }))).toBe("no retrieval (the turn made no retriever run)");
    expect(graphTurnTag(r, t("c", captured(["a", "x"], 3, 1)))).toBe(
      "unknown ids: 1 [x]; retriever calls: 3 in 1 step (some in parallel), 1 scored",
    );
    expect(graphTurnTag(r, t("c", captured(["a"], 2, 2)))).toBe("retriever calls: 2 in 2 steps, 1 scored");
    // A state above the report's run.maxStateMb limit is named on the turn's line.
    expect(graphTurnTag(report({ maxStateBytes: 1000 }), t("c", { ...captured(["a"]), stateBytes: 3 * 2 ** 20 }))).toBe(
      "state 3.0 MB above the 0.0 MB limit (run.maxStateMb)",
    );
    expect(graphTurnTag({ run: { k: 5 }, turns: [] } as unknown as Report, t("c", { noRetrieval: true }))).toBe("");
  });

  it("warn when every retrieval was empty (not per locale then), on unknown ids, and per locale without its cards", () => {
    expect(graphWarnings(report({ retrievalTurns: 3, emptyRetrievalTurns: 3, localesWithoutCards: ["en"] }))).toEqual([
      "every retrieval returned nothing: all 3 turns that called a retriever got an empty list, so every gold-bearing turn scores 0 (is the store empty, or filtered by a wrong user or tenant id in the graph's configuration?)",
    ]);
    expect(
      graphWarnings(
        report({
          retrievalTurns: 3,
          emptyRetrievalTurns: 1,
          scoredIds: 9,
          unknownIds: 2,
          unknownExamples: ["x", "y"],
          localesWithoutCards: ["pt-BR"],
        }),
      ),
    ).toEqual([
      "2 of the 9 scored ids name no card of the KB (e.g. x, y); they count as misses. If they are your cards under another id, use --id-key or --id-map; if your store holds documents the KB does not list, list them in a --catalog file.",
      "locale pt-BR: its turns called a retriever but retrieved no card of pt-BR (does the store hold that locale's documents?)",
    ]);
    // Turns whose state exceeded run.maxStateMb: listed by case#turn and size (dataset order), never failed.
    const big = [
      t("c1", { stateBytes: 20 * 2 ** 20 }),
      t("c2", { stateBytes: 2 ** 20 }),
      t("c3", { turn: 1, stateBytes: 17 * 2 ** 20 }),
    ];
    expect(graphWarnings(report({ maxStateBytes: 16 * 2 ** 20 }, big))).toEqual([
      "2 turns carried a state above the 16.0 MB limit (run.maxStateMb): c1#0 20.0 MB, c3#1 17.0 MB. Each case in flight holds its thread's checkpoints until the case ends, so memory grows with state size × --concurrency.",
    ]);
    expect(graphGateFailures(big, {})).toEqual([]);
    // A report written before these facts existed: no warnings.
    expect(graphWarnings(report({}))).toEqual([]);
  });
});
