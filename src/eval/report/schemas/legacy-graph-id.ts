/**
 * The one place that reads the `graph:` prefix (docs/schema-versions.md):
 * report versions 1–4 and baseline versions 1–3 identified a `--graph` run by
 * an `embedder` of `graph:<module>#<export>`, and recorded traces by
 * `graph:traces#recorded`. The migrations to report version 5 and baseline
 * version 4 turn that into the run's `source` and leave `embedder` null (no
 * embedder of retrace's ran). Frozen history, read only by the migrations;
 * test/eval/graph-identity-migration.test.ts checks no other source file
 * parses the prefix.
 *
 * One section of the schemas indexed by ../schemas.ts (src/eval/report/schemas.ts).
 */
import type { BaselineSource } from "./source.js";

const LEGACY_PREFIX = "graph:";
/** What a recording's `embedder` was: its module and export were the placeholder `traces#recorded`. */
const LEGACY_RECORDED = "traces#recorded";

/**
 * What an old `embedder` said about the run: its source and its real
 * embedder (null for a graph or a recording). The module as written (not
 * renormalized: a baseline written before modules were named relative to
 * their project root is read as it always was, src/app/graph-identity.ts),
 * the export after the last `#` (`graph` when there is none). Pure.
 */
export function legacySourceOf(embedder: unknown): { source: BaselineSource; embedder: unknown } {
  if (typeof embedder !== "string" || !embedder.startsWith(LEGACY_PREFIX)) return { source: { kind: "own" }, embedder };
  const body = embedder.slice(LEGACY_PREFIX.length);
  if (body === LEGACY_RECORDED) return { source: { kind: "traces" }, embedder: null };
  const hash = body.lastIndexOf("#");
  return {
    source: {
      kind: "graph",
      module: hash < 0 ? body : body.slice(0, hash),
      exportName: hash < 0 ? "graph" : body.slice(hash + 1),
    },
    embedder: null,
  };
}
