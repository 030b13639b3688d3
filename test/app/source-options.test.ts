/**
 * The sources' options type is derived from the settings schema
 * (src/app/sources/source.ts `SourceOptions`, src/app/settings/schema.ts
 * `SettingValues`): each setting of `retrace eval` is typed by its row (its
 * parser's result, one of its choices, an object), and the zod schema built
 * from the same rows reads values to those types. The type assertions are
 * checked by `npx tsc --noEmit` (the test folder is type-checked); the
 * runtime ones by vitest.
 */
import { describe, expect, expectTypeOf, it } from "vitest";
import { settingsOf, settingValuesSchema, type SettingValues } from "../../src/app/settings/schema.js";
import type { GraphOnlySetting, OwnGraphOnlySetting, SourceOptions } from "../../src/app/sources/source.js";
import type { EvalOptions, ExternalGraphOptions, GraphEvalOptions } from "../../src/index.js";
import type { Replay } from "../../src/eval/sweep/replay.js";
import type { RetrievalMode } from "../../src/retrieval/types.js";
import type { ResampleUnit } from "../../src/eval/stats/bootstrap.js";

type Own = Extract<SourceOptions, { kind: "own" }>["options"];
type Graph = Extract<SourceOptions, { kind: "graph" }>["options"];

describe("SourceOptions from the settings schema", () => {
  it("types each eval setting by its row", () => {
    expectTypeOf<SettingValues<"eval">["concurrency"]>().toEqualTypeOf<number | undefined>();
    expectTypeOf<SettingValues<"eval">["workers"]>().toEqualTypeOf<number | undefined>();
    expectTypeOf<SettingValues<"eval">["mode"]>().toEqualTypeOf<RetrievalMode | undefined>();
    expectTypeOf<SettingValues<"eval">["replay"]>().toEqualTypeOf<Replay | undefined>();
    expectTypeOf<SettingValues<"eval">["resample"]>().toEqualTypeOf<ResampleUnit | undefined>();
    expectTypeOf<SettingValues<"eval">["configurable"]>().toEqualTypeOf<string | Record<string, unknown> | undefined>();
    expectTypeOf<SettingValues<"eval">["judge"]>().toEqualTypeOf<string | undefined>();
    // A setting of another command only (`cases synth`'s run.callTimeout) is no eval option.
    expectTypeOf<SettingValues<"eval">>().not.toHaveProperty("callTimeout");
    expectTypeOf<SettingValues<"cases synth">["callTimeout"]>().toEqualTypeOf<number | undefined>();
  });

  it("each source's options carry the schema's settings, and the source's own fields", () => {
    expectTypeOf<Own["workers"]>().toEqualTypeOf<number | undefined>();
    expectTypeOf<Graph["turnTimeout"]>().toEqualTypeOf<number | undefined>();
    expectTypeOf<Graph["graph"]>().toEqualTypeOf<string>();
    expectTypeOf<Own["kb"]>().toEqualTypeOf<string | undefined>();
  });

  it("the zod schema of the same rows has one key per eval setting and reads values to the typed values", () => {
    const schema = settingValuesSchema("eval");
    const shape = Object.keys((schema as unknown as { shape: Record<string, unknown> }).shape).sort();
    expect(shape).toEqual(
      settingsOf("eval")
        .map((s) => s.attribute)
        .sort(),
    );
    expect(shape).toContain("workers");
    expect(shape).not.toContain("callTimeout");
    const read = schema.parse({ concurrency: "4", mode: "bm25", replay: "recorded" });
    expect(read).toEqual({ concurrency: 4, mode: "bm25", replay: "recorded" });
    expect(() => schema.parse({ concurrency: "0" })).toThrow(/run\.concurrency/);
  });

  it("the public EvalOptions, GraphEvalOptions and ExternalGraphOptions take their settings from the same rows", () => {
    // Every eval setting but a graph module's is an EvalOptions field, typed by its row.
    type OwnSettings = Omit<SettingValues<"eval">, GraphOnlySetting>;
    expectTypeOf<Pick<EvalOptions, keyof OwnSettings>>().toEqualTypeOf<OwnSettings>();
    expectTypeOf<EvalOptions>().not.toHaveProperty("configurable");
    expectTypeOf<EvalOptions>().not.toHaveProperty("maxStateMb");
    // Every eval setting but retrace's own graph's is a GraphEvalOptions field; every trace one an ExternalGraphOptions field.
    type GraphSettings = Omit<SettingValues<"eval">, OwnGraphOnlySetting>;
    expectTypeOf<Pick<GraphEvalOptions, keyof GraphSettings>>().toEqualTypeOf<GraphSettings>();
    type ModuleSettings = Omit<SettingValues<"trace">, OwnGraphOnlySetting>;
    expectTypeOf<Pick<ExternalGraphOptions, keyof ModuleSettings>>().toEqualTypeOf<ModuleSettings>();
    expectTypeOf<GraphEvalOptions>().not.toHaveProperty("embedder");
    expectTypeOf<GraphEvalOptions>().not.toHaveProperty("workers");
    // What users pass today still type-checks (fields they set on each type).
    const own: EvalOptions = { embedder: "lsa", mode: "bm25", concurrency: 2, workers: 2, seed: 1, judge: "j.mjs" };
    const graph: GraphEvalOptions = { graph: "g.mjs", configurable: { a: 1 }, turnTimeout: 5, seed: 1, concurrency: 2 };
    expect([own.mode, graph.turnTimeout]).toEqual(["bm25", 5]);
  });
});
