/**
 * How a use-case reports progress without writing anything itself: the
 * caller hands it a factory of progress sinks (the CLI's is a bar or a line
 * per quarter on stderr, src/cli/progress.ts); by default nothing is shown.
 */

/** One phase's progress: `done` of `total` units. */
export interface Progress {
  update(done: number, total: number): void;
  stop(): void;
}

/** Makes the sink of one phase, named by `label` ("eval", "ingest") counting `unit`s ("cases", "chunks"). */
export type ProgressFactory = (label: string, unit: string) => Progress;

/** The default: no progress shown. */
export const NO_PROGRESS: ProgressFactory = () => ({ update() {}, stop() {} });

/** How a use-case reports progress (default: not at all). */
export interface UseCaseHooks {
  progress?: ProgressFactory;
}
