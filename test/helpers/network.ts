/** Tests that must not reach the network: every fetch to a non-file URL fails and is recorded. */
import { afterEach, beforeEach, expect } from "vitest";
import { guardFetch } from "../fixtures/models/make-tiny-models.js";

/**
 * Installs the fetch guard around every test of the file and asserts after
 * each that no remote URL was requested. A test that expects a (rejected)
 * request checks `guard.remote` and then empties it.
 */
export function useFetchGuard(): { readonly remote: string[] } {
  let guard: ReturnType<typeof guardFetch> | undefined;
  beforeEach(() => {
    guard = guardFetch();
  });
  afterEach(() => {
    guard?.restore();
    expect(guard?.remote ?? []).toEqual([]);
  });
  return {
    get remote() {
      return guard?.remote ?? [];
    },
  };
}
