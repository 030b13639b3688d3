/** Run the real `retrace` bin in a child process and capture {exitCode, stdout, stderr}. */
import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const BIN = path.join(ROOT, "bin", "retrace.mjs");

export interface CliResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** `bin`: another copy of bin/retrace.mjs (e.g. one where an optional peer cannot be resolved); default the checkout's. */
export function runCli(
  args: string[],
  opts: { cwd?: string; env?: Record<string, string | undefined>; timeoutMs?: number; bin?: string } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [opts.bin ?? BIN, ...args], {
      cwd: opts.cwd ?? ROOT,
      // RETRACE_WIDTH=0: no wrapping, so tests can match a table row on one line (test/cli/terminal-output.test.ts checks the wrapped forms).
      // GITHUB_ACTIONS / GITHUB_STEP_SUMMARY unset: a test run inside GitHub Actions must not get annotations and summaries it did not ask for (docs/ci.md); tests that want them pass them.
      env: {
        ...process.env,
        NO_COLOR: "1",
        RETRACE_LOG: "info",
        RETRACE_WIDTH: "0",
        GITHUB_ACTIONS: undefined,
        GITHUB_STEP_SUMMARY: undefined,
        ...opts.env,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    // Decode as streams: a multi-byte character split across two chunks must not become U+FFFD.
    child.stdout.setEncoding("utf8");
    child.stderr.setEncoding("utf8");
    child.stdout.on("data", (d: string) => (stdout += d));
    child.stderr.on("data", (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), opts.timeoutMs ?? 120_000);
    child.on("error", reject);
    child.on("close", (exitCode, signal) => {
      clearTimeout(timer);
      resolve({ exitCode, signal, stdout, stderr });
    });
  });
}
