/**
 * Help read by a reader that stops early (`retrace eval --help | head -3`):
 * the closed pipe ends the command with exit 0 and nothing on stderr, not an
 * internal error (exit 70 with a stack; src/cli/main.ts, writeHelp).
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../bin/retrace.mjs");

describe("help into a closed pipe", () => {
  it.each([["eval", "--help"], ["init", "--help"], ["score", "--help"], ["--help"]])(
    "retrace %s %s | head -1: exit 0, stderr empty",
    (...args: string[]) => {
      // `head -1` exits after the first line; the help's remaining writes meet a closed pipe (EPIPE).
      const cmd = `node ${JSON.stringify(BIN)} ${args.join(" ")} 2>"$ERR" | head -1 >/dev/null; echo "\${PIPESTATUS[0]}"`;
      const errFile = path.join(process.env.TMPDIR ?? "/tmp", `retrace-help-${process.pid}-${args.join("")}.err`);
      const r = spawnSync("bash", ["-c", `${cmd}; cat "$ERR"; rm -f "$ERR"`], {
        encoding: "utf8",
        env: { ...process.env, ERR: errFile },
      });
      const [status, ...stderr] = r.stdout.split("\n");
      expect({ status, stderr: stderr.join("\n").trim() }).toEqual({ status: "0", stderr: "" });
    },
    60_000,
  );
});
