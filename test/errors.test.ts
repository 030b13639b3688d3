import { describe, expect, it } from "vitest";
import * as errors from "../src/errors.js";
import {
  BaselineMismatchError,
  DataValidationError,
  exitCodeOf,
  InternalError,
  InvalidArgumentError,
  isRetraceError,
  MissingPeerError,
  ModelUnavailableError,
  NotMeasuredError,
  RETRACE_ERROR_MARKER,
  RetraceError,
  ServiceUnavailableError,
} from "../src/errors.js";

/** A second, separately evaluated copy of the module: what a consumer with two installed copies of retrace has. */
async function otherCopy(): Promise<typeof errors> {
  // The query string makes the module loader evaluate errors.ts again: distinct classes, same Symbol.for marker.
  return (await import(/* @vite-ignore */ `../src/errors.ts?copy=${Date.now()}`)) as typeof errors;
}

describe("typed errors", () => {
  it("every class carries a string code, the marker and its exit code", () => {
    const cases: [RetraceError, string, number][] = [
      [new DataValidationError([{ file: "f", message: "bad" }]), "INVALID_DATA", 2],
      [new InvalidArgumentError("k", "a positive integer", 0), "INVALID_ARGUMENT", 2],
      [new ServiceUnavailableError("chroma", "down"), "SERVICE_UNAVAILABLE", 3],
      [new ModelUnavailableError("m", "missing"), "MODEL_UNAVAILABLE", 3],
      [new BaselineMismatchError("k", 5, 3), "BASELINE_MISMATCH", 2],
      [new NotMeasuredError("retrieval_hit_at_k", "no store"), "NOT_MEASURED", 2],
      [new MissingPeerError("tsx", "npm install -D tsx", "needs tsx"), "MISSING_PEER", 2],
      [new InternalError("bug"), "INTERNAL", 70],
    ];
    for (const [e, code, exit] of cases) {
      expect(e.code).toBe(code);
      expect(e.exitCode).toBe(exit);
      expect(exitCodeOf(e)).toBe(exit);
      expect((e as unknown as Record<symbol, unknown>)[Symbol.for("retrace.error")]).toBe(true);
      expect(isRetraceError(e)).toBe(true);
    }
    expect(RETRACE_ERROR_MARKER).toBe(Symbol.for("retrace.error"));
  });

  it("X.isInstance matches its own class only; RetraceError.isInstance matches any retrace error", () => {
    const e = new InvalidArgumentError("k", "a positive integer", 0);
    expect(InvalidArgumentError.isInstance(e)).toBe(true);
    expect(DataValidationError.isInstance(e)).toBe(false);
    expect(RetraceError.isInstance(e)).toBe(true);
    expect(RetraceError.isInstance(new Error("plain"))).toBe(false);
    expect(isRetraceError(new TypeError("x"))).toBe(false);
    expect(isRetraceError(null)).toBe(false);
    expect(isRetraceError({ code: "INVALID_DATA" })).toBe(false); // a code without the marker is not enough
  });

  it("recognises errors thrown by another copy of the package, where instanceof fails", async () => {
    const copy = await otherCopy();
    expect(copy.InvalidArgumentError).not.toBe(InvalidArgumentError);
    const foreign = new copy.ServiceUnavailableError("chroma", "down");
    expect(foreign instanceof ServiceUnavailableError).toBe(false);
    expect(isRetraceError(foreign)).toBe(true);
    expect(ServiceUnavailableError.isInstance(foreign)).toBe(true);
    expect(ModelUnavailableError.isInstance(foreign)).toBe(false);
    expect(exitCodeOf(foreign)).toBe(3);
    // and the other way round
    expect(copy.DataValidationError.isInstance(new DataValidationError([{ file: "f", message: "m" }]))).toBe(true);
  });

  it("anything that is not a retrace error maps to the internal-error exit code, never 1", () => {
    expect(exitCodeOf(new TypeError("Cannot read properties of undefined"))).toBe(70);
    expect(exitCodeOf("a string")).toBe(70);
    expect(exitCodeOf(undefined)).toBe(70);
  });
});
