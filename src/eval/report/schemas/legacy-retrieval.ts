/**
 * The one place in src/eval that knows the names retrace's retriever gave its
 * settings before they were opaque (report versions 1–3, baseline versions
 * 1–2; docs/schema-versions.md): `migrateRetrievalEntry` turns an old
 * `run.retrieval` entry (`fusion` by name, `rrfK`, `weights`, `signalsShift`,
 * `bm25Params`) into the opaque `{ fusion: { method, params }, settings }`
 * the retriever records now. Frozen history, read only by the migrations;
 * test/eval/opaque-settings.test.ts exempts this file alone from the rule
 * that src/eval and src/contract name no agent setting.
 *
 * One section of the schemas indexed by ../schemas.ts (src/eval/report/schemas.ts).
 */

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * One old entry as the current retriever would record it: `rrf` keeps its
 * constant as `params.k`, `signals` its shift as `params.shift` (its other
 * parameters were not recorded, so they stay absent), the other methods take
 * no parameter; weights and BM25 k1/b go to `settings` (`weights`, `bm25`).
 * Other keys are kept. An entry already opaque, or not an object, is returned
 * as it is. Pure.
 */
export function migrateRetrievalEntry(entry: unknown): unknown {
  if (!isObject(entry) || typeof entry.fusion !== "string") return entry;
  const { fusion, rrfK, weights, signalsShift, bm25Params, ...rest } = entry;
  const params: Record<string, unknown> = {};
  if (fusion === "rrf" && rrfK !== undefined) params.k = rrfK;
  if (fusion === "signals" && signalsShift !== undefined) params.shift = signalsShift;
  const settings: Record<string, unknown> = {
    ...(weights !== undefined ? { weights } : {}),
    ...(bm25Params !== undefined ? { bm25: bm25Params } : {}),
  };
  return { ...rest, fusion: { method: fusion, params }, ...(Object.keys(settings).length > 0 ? { settings } : {}) };
}

/** Every entry of a `run.retrieval` / baseline `retrieval` record migrated; anything else returned as it is. Pure. */
export function migrateRetrievalRecord(record: unknown): unknown {
  if (!isObject(record)) return record;
  return Object.fromEntries(Object.entries(record).map(([locale, entry]) => [locale, migrateRetrievalEntry(entry)]));
}
