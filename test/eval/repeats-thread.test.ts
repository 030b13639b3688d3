/**
 * The repeats section's intervals in a worker thread (src/eval/sweep/repeats-thread.ts;
 * issue 49 item 1): the same section, byte for byte, as in this thread.
 */
import { describe, expect, it } from "vitest";
import type { TurnReport } from "../../src/eval/report/types.js";
import { combineRepeats, combineRepeatTurns, repeatsSection } from "../../src/eval/sweep/repeats.js";
import { combineRepeatsOffThread, repeatsSectionOffThread } from "../../src/eval/sweep/repeats-thread.js";
import { largeInput } from "./build-thread-input.js";

/** `repeats` runs of the large input's turns, every fifth turn (shifted by the repeat) scored the other way. */
async function repeatedRuns(copies: number, repeats: number): Promise<TurnReport[][]> {
  const { turns } = await largeInput(copies);
  return Array.from({ length: repeats }, (_, r) =>
    turns.map((t, j) => ({
      ...t,
      results: t.results.map((x) => ({ ...x, score: (j + r) % 5 === 0 ? 1 - x.score : x.score })),
    })),
  );
}

describe("repeats section off the calling thread", () => {
  it("combines 1,120 turns × 2 repeats with the section computed in a worker, the same bytes as combineRepeats", async () => {
    const runs = await repeatedRuns(160, 2);
    const here = combineRepeats(runs, { seed: 9 });
    const off = await combineRepeatsOffThread(runs, { seed: 9 });
    expect(here.section.identical).toBe(false);
    expect(Object.keys(here.section.metrics).length).toBeGreaterThan(3);
    expect(here.section.flaky.length).toBeGreaterThan(0);
    expect(JSON.stringify(off)).toBe(JSON.stringify(here));
  }, 60_000);

  it("computes the section in the worker above the threshold, here below it, with the same numbers", async () => {
    const { turns, ...o } = combineRepeatTurns(await repeatedRuns(30, 3));
    const opts = { ...o, seed: 3, samples: 400 };
    const where: string[] = [];
    const off = await repeatsSectionOffThread(turns, opts, { minWork: 0, onWhere: (w) => where.push(w) });
    const small = await repeatsSectionOffThread(turns, opts, { onWhere: (w) => where.push(w) });
    expect(where).toEqual(["worker", "this thread"]);
    expect(JSON.stringify(off)).toBe(JSON.stringify(repeatsSection(turns, opts)));
    expect(JSON.stringify(small)).toBe(JSON.stringify(off));
  }, 60_000);
});
