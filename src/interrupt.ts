/**
 * Interrupted runs leave nothing behind (docs/reliability.md, "Interrupted
 * runs leave nothing behind"). Importable from every layer, like atomic.ts.
 *
 * - **Temporary files**: every temporary file a write creates beside its
 *   target (`.NAME.PID.hex.tmp`: a run's staged outputs, a file written
 *   atomically) is tracked from just before it is created until it is
 *   renamed into place or removed. Should the process end meanwhile (an
 *   interrupt, `process.exit`), an `exit` listener removes every tracked
 *   file synchronously. The registry is process state by nature (like the
 *   live Chroma servers of src/retrieval/chroma-process.ts): a signal ends
 *   the whole process, whichever system created the file.
 * - **The last-resort interrupt handler** of the CLI (`installInterruptHandler`,
 *   src/cli/run.ts): on SIGHUP, SIGINT or SIGTERM that nothing else handles (no
 *   command that stops its work cleanly, such as `retrace ingest`, and no
 *   local Chroma server being stopped), it removes the temporary files,
 *   prints one line saying the run was interrupted and ends the process by
 *   the signal (exit status 129 for SIGHUP, 130 for SIGINT, 143 for SIGTERM,
 *   as a shell reports it). Handlers of their own skip it:
 *   `signalOwners(signal)` counts the listeners that are not this one.
 */
import { rmSync } from "node:fs";

const temporaries = new Set<string>();
let exitListener = false;

function removeOnExit(): void {
  removeTemporaries();
}

/** Tracks `path` (a temporary file about to be created) until `untrackTemporary`: it is removed if the process ends meanwhile. */
export function trackTemporary(path: string): void {
  temporaries.add(path);
  if (!exitListener) {
    exitListener = true;
    process.on("exit", removeOnExit);
  }
}

/** The temporary file `path` was renamed into place or removed: no longer tracked. */
export function untrackTemporary(path: string): void {
  temporaries.delete(path);
}

/** Removes every tracked temporary file now (synchronously: also from an `exit` listener); returns how many there were. */
export function removeTemporaries(): number {
  const n = temporaries.size;
  for (const p of temporaries) {
    try {
      rmSync(p, { force: true });
    } catch {
      // nothing more can be done while the process ends
    }
  }
  temporaries.clear();
  return n;
}

/** The exit status of a process interrupted by each signal (128 + its number, as a shell reports it). */
export const INTERRUPT_EXIT = { SIGHUP: 129, SIGINT: 130, SIGTERM: 143 } as const;
export type InterruptSignal = keyof typeof INTERRUPT_EXIT;

/** Marks the last-resort handler, in every copy of the package. */
const LAST_RESORT: unique symbol = Symbol.for("retrace.lastResortInterrupt") as never;

/** The listeners of `signal` other than the CLI's last-resort handler: those that handle the signal themselves. */
export function signalOwners(signal: NodeJS.Signals): number {
  return process.listeners(signal).filter((l) => !(LAST_RESORT in l)).length;
}

/**
 * Installs the last-resort SIGHUP / SIGINT / SIGTERM handler (see the module
 * comment). `say` prints the one line (stderr through the CLI's `err`).
 * This handler ends the process by re-raising the signal with its default
 * action (docs/architecture.md §8), as the local Chroma's handler does: the
 * work it interrupts (a sweep, a write into a FIFO nobody reads) has no way
 * to stop otherwise.
 */
export function installInterruptHandler(say: (line: string) => void): void {
  for (const signal of Object.keys(INTERRUPT_EXIT) as InterruptSignal[]) {
    const handler = Object.assign(
      () => {
        if (signalOwners(signal) > 0) return; // a command or the local Chroma's handler stops the work itself
        const removed = removeTemporaries();
        const code = INTERRUPT_EXIT[signal];
        say(
          `retrace: interrupted by ${signal}; stopped with exit ${code}${removed > 0 ? ` (${removed} temporary file${removed === 1 ? "" : "s"} of unfinished outputs removed)` : ""}`,
        );
        // Re-raised with its default action (the shell sees exit 128 + the signal's number). Not process.exit: that
        // joins libuv's thread pool, where a write into a FIFO nobody reads is blocked in open(2) for good.
        for (const s of Object.keys(INTERRUPT_EXIT))
          for (const l of process.listeners(s as InterruptSignal)) if (LAST_RESORT in l) process.off(s, l);
        process.kill(process.pid, signal);
      },
      { [LAST_RESORT]: true },
    );
    process.on(signal, handler);
  }
}
