/**
 * The cause line of a Chroma start failure (issue 22, item 3): picked from
 * the server's output (a Rust panic and its backtrace), most specific first.
 */
import { describe, expect, it } from "vitest";
import { causeOf } from "../../src/retrieval/chroma-process.js";

/** What chromadb 3.5's server printed on a chroma.sqlite3 truncated to half its size (banner and frames shortened). */
const MALFORMED = `
                \u001b[38;5;069m(((((((((    \u001b[38;5;203m(((((\u001b[38;5;220m####
Saving data to: /tmp/d
Connect to Chroma at: http://localhost:38123
OpenTelemetry is not enabled because it is missing from the config.

thread '<unnamed>' panicked at /home/runner/_work/chroma/chroma/rust/frontend/src/lib.rs:91:10:
Error creating Frontend Config: SqlxError(Database(SqliteError { code: 11, message: "database disk image is malformed" }))
stack backtrace:
   0: __rustc::rust_begin_unwind
             at /rustc/29483883eed69d5fb4db01964cdf2af4d86e9cb2/library/std/src/panicking.rs:697:5
   1: core::panicking::panic_fmt
             at /rustc/29483883eed69d5fb4db01964cdf2af4d86e9cb2/library/core/src/panicking.rs:75:14
  29: Builtins_CEntry_Return1_ArgvOnStack_BuiltinExit
note: Some details are omitted, run with \`RUST_BACKTRACE=full\` for a verbose backtrace.
fatal runtime error: failed to initiate panic, error 5, aborting
`;

describe("causeOf (the server's own reason for a failed start)", () => {
  it("a quoted error message wins: sqlite's 'database disk image is malformed', with its whole line", () => {
    expect(causeOf(MALFORMED)).toEqual({
      cause: "database disk image is malformed",
      line: 'Error creating Frontend Config: SqlxError(Database(SqliteError { code: 11, message: "database disk image is malformed" }))',
    });
  });

  it("else a line naming a known cause, else a panic's message, else an error line; never a backtrace frame or the generic abort line", () => {
    expect(
      causeOf(
        "banner\nthread 'main' panicked at src/x.rs:1:1:\nPermission denied (os error 13)\nstack backtrace:\n   0: f\n",
      )?.cause,
    ).toBe("Permission denied (os error 13)");
    expect(
      causeOf(
        "banner\nthread 'main' panicked at src/x.rs:1:1:\nthe index could not be loaded\nstack backtrace:\n   0: f\n             at x.rs:1\nfatal runtime error: failed to initiate panic, error 5, aborting\n",
      )?.cause,
    ).toBe("the index could not be loaded");
    expect(causeOf("starting\nError: address 127.0.0.1:8000 is not available\n")?.cause).toBe(
      "Error: address 127.0.0.1:8000 is not available",
    );
    expect(causeOf("starting\nERROR chroma: bad config key\nready?\n")?.cause).toBe("ERROR chroma: bad config key");
  });

  it("without any of those: the last line that is not part of a backtrace, marked as such; nothing for no output", () => {
    expect(causeOf("binding failed: GLIBC_2.38 not found\n")).toEqual({
      cause: "binding failed: GLIBC_2.38 not found",
      line: "binding failed: GLIBC_2.38 not found",
      lastLine: true,
    });
    expect(causeOf("")).toBeUndefined();
    expect(causeOf("   0: f\n             at x.rs:1\n")).toBeUndefined();
  });
});
