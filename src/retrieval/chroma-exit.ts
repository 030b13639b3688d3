/**
 * The self-started Chroma servers of this process, stopped when it exits or is signalled (SIGINT, SIGTERM, SIGHUP:
 * exit 130, 143, 129), so that no server outlives retrace. Used by ./chroma-process.ts.
 */
import { type ChildProcess } from "node:child_process";
import { log } from "../log.js";
import { signalOwners } from "../interrupt.js";

// ---------------------------------------------------------------------------
// Process-exit safety: one registry of live children, handlers installed while it is non-empty.

export interface Tracked {
  child: ChildProcess;
  stop(): Promise<void>;
}
export const live = new Set<Tracked>();
export const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
export type HandledSignal = (typeof SIGNALS)[number];
export const SIGNAL_EXIT: Record<HandledSignal, number> = { SIGHUP: 129, SIGINT: 130, SIGTERM: 143 };
export let installed = false;
/** A signal is stopping the servers (until the handlers are uninstalled). */
export let stoppingOnSignal = false;

export function onExit(): void {
  // Synchronous only: ask every live server to shut down; each does so on its own.
  for (const t of live) {
    try {
      t.child.kill("SIGINT");
    } catch {
      // already gone
    }
  }
}

export function onSignal(signal: HandledSignal): void {
  // Another listener (e.g. a command that aborts its work, then closes the store) owns the
  // shutdown; the exit handler and the child's watchdog still stop the server when we end.
  if (signalOwners(signal) > 1) return;
  // A signal re-raised while the servers are being stopped (a command forcing its exit) is the same stop.
  if (stoppingOnSignal) return;
  stoppingOnSignal = true;
  log.info(`${signal} received: stopping the local Chroma server`);
  const all = [...live].map((t) => t.stop());
  void Promise.allSettled(all).then(() => {
    uninstallHandlers();
    if (signalOwners(signal) > 0) return; // someone registered meanwhile: theirs now
    // With the CLI's last-resort handler (src/interrupt.ts) listening, the re-raised signal ends the process through it (exit 130 / 143).
    process.exitCode = SIGNAL_EXIT[signal];
    // Re-raise with the default action so the parent sees "killed by <signal>".
    process.kill(process.pid, signal);
  });
}

export const signalHandlers = new Map<HandledSignal, () => void>(SIGNALS.map((s) => [s, () => onSignal(s)]));

export function installHandlers(): void {
  if (installed) return;
  installed = true;
  process.on("exit", onExit);
  for (const [s, h] of signalHandlers) process.on(s, h);
}

export function uninstallHandlers(): void {
  if (!installed) return;
  installed = false;
  stoppingOnSignal = false;
  process.off("exit", onExit);
  for (const [s, h] of signalHandlers) process.off(s, h);
}
