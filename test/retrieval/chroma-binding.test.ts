/**
 * The choice of the native Chroma server binding (src/retrieval/chroma-binding.ts;
 * docs/decisions/0005-self-started-chroma.md): the candidates per platform, the
 * first that loads wins, and the one message when none does. The loads are
 * forced to fail here (a machine with a newer glibc cannot be had); the real
 * loads run in test/retrieval/chroma-server.int.test.ts.
 */
import { describe, expect, it } from "vitest";
import {
  candidatePackages,
  chooseBinding,
  CHOSEN_MARKER,
  glibcNeeded,
  NONE_MARKER,
  noBindingMessage,
  readLauncherVerdict,
  RETRACE_BINDING_PACKAGE,
  type BindingCandidate,
} from "../../src/retrieval/chroma-binding.js";

const GNU = "chromadb-js-bindings-linux-x64-gnu";
const own: BindingCandidate = {
  package: GNU,
  declaredBy: "chromadb",
  file: "/nm/chromadb-js-bindings-linux-x64-gnu/b.node",
  version: "1.3.4",
};
const ours: BindingCandidate = {
  package: RETRACE_BINDING_PACKAGE,
  declaredBy: "retrace-eval",
  file: "/nm/retrace-chroma-binding-linux-x64-gnu/b.node",
  version: "1.0.5",
};
const glibcError = (needs: string, file: string) =>
  new Error(`/lib/x86_64-linux-gnu/libc.so.6: version \`GLIBC_${needs}' not found (required by ${file})`);

describe("candidatePackages", () => {
  it("linux/x64: chromadb's own binding first, then retrace's", () => {
    expect(candidatePackages("linux", "x64").map((c) => c.package)).toEqual([GNU, RETRACE_BINDING_PACKAGE]);
  });
  it("macOS, linux/arm64 and Windows/arm64: chromadb's own only (retrace's binding does not apply there)", () => {
    expect(candidatePackages("darwin", "arm64").map((c) => c.package)).toEqual(["chromadb-js-bindings-darwin-arm64"]);
    expect(candidatePackages("darwin", "x64").map((c) => c.package)).toEqual(["chromadb-js-bindings-darwin-x64"]);
    expect(candidatePackages("linux", "arm64").map((c) => c.package)).toEqual(["chromadb-js-bindings-linux-arm64-gnu"]);
    expect(candidatePackages("win32", "arm64").map((c) => c.package)).toEqual([
      "chromadb-js-bindings-win32-arm64-msvc",
    ]);
  });
  it("a platform chromadb ships no binding for has none", () => {
    expect(candidatePackages("freebsd", "x64")).toEqual([]);
  });
});

describe("chooseBinding", () => {
  it("on a current glibc, chromadb's own binding loads and is chosen (retrace's is never loaded)", () => {
    const loaded: string[] = [];
    const r = chooseBinding([own, ours], (file) => (loaded.push(file), { cli: file }));
    expect(r.chosen?.candidate).toBe(own);
    expect(r.failures).toEqual([]);
    expect(loaded).toEqual([own.file]);
  });

  it("on glibc 2.36, chromadb's binding fails to load and retrace's is chosen, the failure kept", () => {
    const r = chooseBinding([own, ours], (file) => {
      if (file === own.file) throw glibcError("2.38", file);
      return { cli: file };
    });
    expect(r.chosen?.candidate).toBe(ours);
    expect(r.failures).toEqual([
      {
        package: GNU,
        version: "1.3.4",
        reason: `/lib/x86_64-linux-gnu/libc.so.6: version \`GLIBC_2.38' not found (required by ${own.file})`,
      },
    ]);
  });

  it("a candidate that is not installed is passed over without a load", () => {
    const loaded: string[] = [];
    const r = chooseBinding(
      [{ package: GNU, declaredBy: "chromadb", missing: "not installed" }, ours],
      (file) => (loaded.push(file), {}),
    );
    expect(r.chosen?.candidate).toBe(ours);
    expect(loaded).toEqual([ours.file]);
    expect(r.failures).toEqual([{ package: GNU, reason: "not installed" }]);
  });

  it("none loads: no choice, every failure", () => {
    const r = chooseBinding([own, ours], (file) => {
      throw glibcError(file === own.file ? "2.38" : "2.39", file);
    });
    expect(r.chosen).toBeUndefined();
    expect(r.failures.map((f) => f.package)).toEqual([GNU, RETRACE_BINDING_PACKAGE]);
  });
});

describe("glibcNeeded", () => {
  it("reads the highest GLIBC_x.y a loader error names", () => {
    expect(glibcNeeded("version `GLIBC_2.38' not found")).toBe("2.38");
    expect(glibcNeeded("version `GLIBC_2.9' not found; version `GLIBC_2.34' not found")).toBe("2.34");
    expect(glibcNeeded("cannot open shared object file")).toBeUndefined();
  });
});

describe("noBindingMessage", () => {
  it("names each binding with the glibc it needs and the one found, and both ways out", () => {
    const m = noBindingMessage(
      [
        { package: GNU, version: "1.3.4", reason: "version `GLIBC_2.38' not found (required by x.node)" },
        { package: RETRACE_BINDING_PACKAGE, reason: "not installed" },
      ],
      "2.36",
    );
    expect(m).toContain("no Chroma server binding runs on this system");
    expect(m).toContain(`${GNU}@1.3.4: needs glibc 2.38, this system has 2.36`);
    expect(m).toContain(`${RETRACE_BINDING_PACKAGE}: not installed`);
    expect(m).toContain("`--store memory`");
    expect(m).toContain("`--store URL`");
  });

  it("on a system without glibc (musl) says so", () => {
    const m = noBindingMessage(
      [{ package: GNU, version: "1.3.4", reason: "Error loading shared library ld-linux-x86-64.so.2" }],
      undefined,
    );
    expect(m).toContain(`${GNU}@1.3.4: Error loading shared library ld-linux-x86-64.so.2`);
  });
});

describe("readLauncherVerdict", () => {
  it("reads the launcher's chosen line and its none line out of the server output, ignoring look-alikes", () => {
    const chosenLine = `${CHOSEN_MARKER}${JSON.stringify({ chosen: ours, failures: [{ package: GNU, reason: "x" }] })}`;
    expect(readLauncherVerdict(`banner\n${chosenLine}\nmore`)).toEqual({
      chosen: ours,
      failures: [{ package: GNU, reason: "x" }],
    });
    expect(
      readLauncherVerdict(`${NONE_MARKER}${JSON.stringify({ failures: [{ package: GNU, reason: "y" }] })}\n`),
    ).toEqual({ none: [{ package: GNU, reason: "y" }] });
    expect(readLauncherVerdict(`${CHOSEN_MARKER}{not json\n`)).toEqual({});
  });
});
