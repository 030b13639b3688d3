/**
 * The wall-clock section of a report (docs/determinism.md). Everything in a
 * report except the `timings` key is a pure function of the data, the
 * configuration and the seed; comparisons and `retrace merge` drop this key
 * by name before looking at a report.
 */
import type { Report } from "./types.js";

/** Name of the one report key that holds wall-clock figures. */
export const TIMINGS_KEY = "timings" as const;

/** A copy of `report` without its `timings` section (the input is not mutated). */
export function withoutTimings<T extends Partial<Pick<Report, "timings">>>(report: T): Omit<T, typeof TIMINGS_KEY> {
  const { [TIMINGS_KEY]: _timings, ...rest } = report;
  return rest;
}
