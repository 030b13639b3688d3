/**
 * The one logger of retrace. Library code never writes to stdout: progress and
 * diagnostics go to stderr through here, so stdout stays the result.
 * `RETRACE_LOG=silent|error|warn|info|debug` sets the level (default info;
 * tests set it to warn); `--verbose` or `RETRACE_VERBOSE=1` makes it debug.
 */
import { escapeControlChars } from "./control-chars.js";
import { redactSecrets } from "./redact.js";

const LEVELS = { silent: 0, error: 1, warn: 2, info: 3, debug: 4 } as const;
export type LogLevel = keyof typeof LEVELS;

/** `--verbose` on the command line or RETRACE_VERBOSE=1: stacks of errors (src/cli/io.ts) and debug lines (the embedder's search path). */
export function verboseRequested(
  argv: readonly string[] = process.argv,
  env: NodeJS.ProcessEnv = process.env,
): boolean {
  return argv.includes("--verbose") || env.RETRACE_VERBOSE === "1";
}

function currentLevel(): number {
  if (verboseRequested()) return LEVELS.debug;
  const raw = process.env.RETRACE_LOG as LogLevel | undefined;
  return raw !== undefined && raw in LEVELS ? LEVELS[raw] : LEVELS.info;
}

/**
 * Where log lines go instead of this thread's stderr: the thread running a
 * user's graph (src/app/graph-worker.ts) hands them to the main thread, whose
 * stderr is retrace's, while its own stderr is the user's code's (captured).
 */
let sink: ((level: LogLevel, msg: string) => void) | undefined;

/** Sends every log line of this thread to `to` (unfiltered: the receiver filters, by `logLine`); undefined: back to stderr. */
export function setLogSink(to: ((level: LogLevel, msg: string) => void) | undefined): void {
  sink = to;
}

/** Writes one line at `level` as the logger does (a line another thread's logger handed over: `setLogSink`). */
export function logLine(level: LogLevel, msg: string): void {
  write(level, msg);
}

function write(level: LogLevel, msg: string): void {
  if (sink !== undefined) return sink(level, msg);
  // The message boundary (docs/reliability.md): secrets never written, control and bidi characters shown as escapes.
  if (LEVELS[level] <= currentLevel()) process.stderr.write(`${escapeControlChars(redactSecrets(msg))}\n`);
}

export const log = {
  error: (msg: string) => write("error", `error: ${msg}`),
  warn: (msg: string) => write("warn", `warning: ${msg}`),
  info: (msg: string) => write("info", msg),
  debug: (msg: string) => write("debug", msg),
};
