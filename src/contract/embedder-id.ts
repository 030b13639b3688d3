/**
 * The embedder-identity rule (docs/fusion-and-tuning.md, "baselines"): an
 * embedder id is opaque to whoever compares runs, except for one convention
 * the agent's embedders follow when they write their ids. An embedder fitted
 * on the corpus (the LSA embedder, src/retrieval/embedders/lsa.ts) writes
 * `<name>-<dimension>-<fit hash, 12 hex>-v<version>`; a KB edit refits it and
 * changes the fit hash, yet the run still uses the same embedder. Its
 * identity, what a baseline compares (src/eval/gate/baseline.ts), drops the
 * fit hash. Every other id is its own identity.
 */

const FITTED_ID = /^([a-z][a-z0-9]*(?:-[a-z][a-z0-9]*)*)-(\d+)-[0-9a-f]{12}-v(\d+)$/;

/** `lsa-128-916eee2dd175-v1` → `lsa-128-v1`; an id without a fit hash unchanged. */
export function embedderIdentity(id: string): string {
  const m = FITTED_ID.exec(id);
  return m === null ? id : `${m[1]}-${m[2]}-v${m[3]}`;
}
