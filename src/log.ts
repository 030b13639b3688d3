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

function write(level: LogLevel, msg: string): void {
  // The message boundary (docs/reliability.md): secrets never written, control and bidi characters shown as escapes.
  if (LEVELS[level] <= currentLevel()) process.stderr.write(`${escapeControlChars(redactSecrets(msg))}\n`);
}

export const log = {
  error: (msg: string) => write("error", `error: ${msg}`),
  warn: (msg: string) => write("warn", `warning: ${msg}`),
  info: (msg: string) => write("info", msg),
  debug: (msg: string) => write("debug", msg),
};
