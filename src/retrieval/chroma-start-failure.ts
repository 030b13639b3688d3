/**
 * Why a self-started Chroma did not start (docs/reliability.md): its heartbeat and version, the cause read from its
 * output (the panic or error line, not the backtrace), and the start log kept beside the data dir.
 * Used by ./chroma-process.ts.
 */
import { rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { ServiceUnavailableError } from "../errors.js";
import { redactSecrets } from "../redact.js";

/** Where a start failure's full server output goes: this file in the data dir (else in the temp dir). */
export const START_LOG_FILE = "retrace-chroma-start.log";
// ---------------------------------------------------------------------------

export const ANSI = /\u001b\[[0-9;]*[A-Za-z]/g;

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** The server's version (`GET /api/v2/version`: a JSON string), or undefined when it does not answer one. */
export async function serverVersionOf(url: string): Promise<string | undefined> {
  try {
    const res = await fetch(`${url}/api/v2/version`, { signal: AbortSignal.timeout(1_000) });
    const v = (await res.json()) as unknown;
    return res.ok && typeof v === "string" ? v : undefined;
  } catch {
    return undefined;
  }
}

export async function heartbeatOk(url: string, timeoutMs: number): Promise<boolean> {
  try {
    const res = await fetch(`${url}/api/v2/heartbeat`, { signal: AbortSignal.timeout(timeoutMs) });
    await res.arrayBuffer();
    return res.ok;
  } catch {
    return false;
  }
}

/** Lines of a Rust backtrace or a stack trace, and the launcher's verdict lines: never a cause. */
export const TRACE_LINE = /^\s*(\d+: |at |note: (Some details|run with)|stack backtrace:|retrace-chroma-)/;

/**
 * The line of the server's output that says why it failed, the most
 * specific one: a quoted `message: "…"` of an error (sqlite's `database disk
 * image is malformed`), else a line naming a known cause (malformed,
 * corrupt, permission denied, no space, read-only, address in use), else
 * the message of a Rust panic (the line after `panicked at`), else a line
 * with `error` / `Error:` (not the generic `fatal runtime error`), else the
 * last line that is not part of a backtrace (`lastLine`). Undefined for no
 * output.
 */
export function causeOf(output: string): { cause: string; line: string; lastLine?: true } | undefined {
  const lines = output
    .replace(ANSI, "")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "");
  const useful = lines.filter((l) => !TRACE_LINE.test(l));
  if (useful.length === 0) return undefined;
  const quoted = (l: string) => /message: "([^"]+)"/.exec(l)?.[1];
  const known =
    /malformed|corrupt|not a database|permission denied|no space|read-only|disk i\/o|is not available|address already in use|no such file/i;
  const generic = /^fatal runtime error: failed to initiate panic/;
  for (const l of useful) {
    const q = quoted(l);
    if (q !== undefined) return { cause: q, line: l };
  }
  const knownLine = useful.find((l) => known.test(l) && !generic.test(l));
  if (knownLine !== undefined) return { cause: knownLine, line: knownLine };
  const panic = lines.findIndex((l) => /panicked at/.test(l));
  const afterPanic = panic >= 0 ? lines[panic + 1] : undefined;
  if (afterPanic !== undefined && !TRACE_LINE.test(afterPanic)) return { cause: afterPanic, line: afterPanic };
  const errorLine = useful.find((l) => /\berror\b|Error:/i.test(l) && !generic.test(l));
  if (errorLine !== undefined) return { cause: errorLine, line: errorLine };
  const last = useful[useful.length - 1] as string;
  return { cause: last, line: last, lastLine: true };
}

/** Writes the server's output to `<data dir>/retrace-chroma-start.log` (else the temp dir); the path, or undefined when neither could be written. */
export function saveStartLog(output: string, dataDir: string): string | undefined {
  for (const dir of [dataDir, os.tmpdir()]) {
    const file = path.join(dir, dir === dataDir ? START_LOG_FILE : `retrace-chroma-start-${process.pid}.log`);
    try {
      writeFileSync(file, redactSecrets(output)); // the server's output may echo a token (docs/reliability.md)
      return file;
    } catch {
      // A full disk leaves the file created but empty: no 0-byte log behind; try the next place.
      rmSync(file, { force: true });
    }
  }
  return undefined;
}

export function startFailure(
  message: string,
  output: string,
  dataDir: string,
  cause?: unknown,
  exited = false,
): ServiceUnavailableError {
  // The last line of a server that died is its last word; of one still running (no heartbeat), a banner line.
  const candidate = causeOf(output);
  const found = candidate?.lastLine === true && !exited ? undefined : candidate;
  const damaged = found !== undefined && /malformed|not a database|corrupt/i.test(found.cause);
  // The first line names the cause; the server's own line and where its full output went follow.
  const first = found === undefined || message.includes(found.cause) ? message : `${found.cause}; ${message}`;
  const logFile = output.trim() === "" ? undefined : saveStartLog(output, dataDir);
  const said = found !== undefined && found.line !== found.cause ? `Server said: ${found.line}\n` : "";
  const where =
    output.trim() === "" ? "Server output: (none)\n" : logFile !== undefined ? `Full server output: ${logFile}\n` : "";
  const told = `${found?.cause ?? ""} ${message}`;
  const elsewhere =
    "or run with `--store memory` (no server), or `--store URL` (or CHROMA_URL) pointing at a running Chroma server.";
  // The advice follows the cause: a full or read-only data dir is not helped by freeing a port.
  const todo = damaged
    ? `What to do: the Chroma database ${path.join(dataDir, "chroma.sqlite3")} is damaged; restore the data dir from a backup, or move ${dataDir} aside and run \`retrace ingest\` again (it rebuilds retrace's collections).`
    : /no space|ENOSPC|disk (is )?full|quota/i.test(told)
      ? `What to do: the file system of ${dataDir} is full; free space there, or give --data-dir a folder on another file system, ${elsewhere}`
      : /read-only|EROFS/i.test(told)
        ? `What to do: ${dataDir} is on a read-only file system; give --data-dir a writable folder, ${elsewhere}`
        : /permission denied|EACCES|EPERM/i.test(told)
          ? `What to do: retrace may not write ${dataDir}; give --data-dir a folder you can write, ${elsewhere}`
          : `What to do: free the port or omit --port, ${elsewhere}`;
  return new ServiceUnavailableError(
    "chroma",
    `Could not start a local Chroma server (data dir ${dataDir}): ${first}.\n${said}${where}${todo}`,
    cause === undefined ? undefined : { cause },
  );
}

/** How many free ports are tried when one is taken between finding it and the server binding it. */
