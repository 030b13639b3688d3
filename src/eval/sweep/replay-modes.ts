/**
 * The replay modes of a sweep (docs/evaluate-your-graph.md, `run.replay`), apart from ./replay.ts so that the
 * settings schema, which `retrace --help` loads, does not load LangChain's messages (test/cli/lazy-imports.test.ts).
 */

/** The replay modes, the default first. */
export const REPLAY_MODES = ["own", "recorded"] as const;
export type Replay = (typeof REPLAY_MODES)[number];
