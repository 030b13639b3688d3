/**
 * Which native Chroma server binding a self-started server runs on
 * (docs/decisions/0005-self-started-chroma.md, "Which binding"). chromadb's
 * CLI loads one binding per platform (`chromadb-js-bindings-<os>-<arch>[-gnu]`)
 * at the caret range chromadb itself declares; on Linux x64 that binding's
 * newest releases need glibc 2.38, which Debian 12 (the `node:20` image)
 * does not have, and npm ignores a dependency's `overrides`, so a project
 * installing retrace cannot be pinned from here. retrace therefore declares
 * a second binding itself, an optional dependency under its own name
 * (`retrace-chroma-binding-linux-x64-gnu`, an npm alias of the last binding
 * that runs on glibc 2.36, limited to linux/x64/glibc by that package's own
 * `os`/`cpu`/`libc` fields), and chooses at run time by what loads:
 * chromadb's own binding first, then retrace's. Elsewhere (macOS, arm64,
 * musl, Windows) only chromadb's own binding is a candidate, as before.
 *
 * The choice is made inside the server process (./chroma-launcher.ts), so the
 * parent never maps a binding of several hundred MB; the parent resolves the
 * candidates, hands them over in RETRACE_CHROMA_BINDINGS, and reads back the
 * launcher's one-line verdict (`retrace-chroma-binding: {…}` or, when nothing
 * loads, `retrace-chroma-no-binding: {…}` and exit code NO_BINDING_EXIT).
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

/** The package retrace declares as an optional dependency (package.json `optionalDependencies`). */
export const RETRACE_BINDING_PACKAGE = "retrace-chroma-binding-linux-x64-gnu";
/** The environment variable the launcher reads its candidates from (JSON `BindingCandidate[]`). */
export const BINDINGS_ENV = "RETRACE_CHROMA_BINDINGS";
/** The launcher's exit code when no candidate loads (EX_CONFIG). */
export const NO_BINDING_EXIT = 78;
export const CHOSEN_MARKER = "retrace-chroma-binding: ";
export const NONE_MARKER = "retrace-chroma-no-binding: ";

export interface BindingCandidate {
  /** The package name as installed (`chromadb-js-bindings-linux-x64-gnu`, or retrace's alias). */
  package: string;
  /** Who declares it: `chromadb` or `retrace-eval`. */
  declaredBy: string;
  /** The `.node` file, when the package is installed. */
  file?: string;
  /** Its version (the package's own package.json), when installed. */
  version?: string;
  /** Why it is not installed (the resolution error), when not. */
  missing?: string;
}

/** What the launcher reports back for one candidate it tried and could not load. */
export interface BindingFailure {
  package: string;
  version?: string;
  reason: string;
}

/** chromadb's own binding package for a platform (the names its CLI requires), or undefined where it has none. */
export function chromadbBindingPackage(
  platform: string = process.platform,
  arch: string = process.arch,
): string | undefined {
  if (platform === "darwin" && (arch === "arm64" || arch === "x64")) return `chromadb-js-bindings-darwin-${arch}`;
  if (platform === "linux" && (arch === "arm64" || arch === "x64")) return `chromadb-js-bindings-linux-${arch}-gnu`;
  if (platform === "win32" && arch === "arm64") return "chromadb-js-bindings-win32-arm64-msvc";
  return undefined;
}

/** The candidates' package names in the order they are tried: chromadb's own, then retrace's on linux/x64. */
export function candidatePackages(
  platform: string = process.platform,
  arch: string = process.arch,
): { package: string; declaredBy: string }[] {
  const own = chromadbBindingPackage(platform, arch);
  return [
    ...(own !== undefined ? [{ package: own, declaredBy: "chromadb" }] : []),
    ...(platform === "linux" && arch === "x64"
      ? [{ package: RETRACE_BINDING_PACKAGE, declaredBy: "retrace-eval" }]
      : []),
  ];
}

/**
 * Resolves each candidate package as its declarer resolves it: chromadb's own
 * binding from the chromadb package's folder (where npm puts chromadb's
 * optional dependency), retrace's from this module's folder.
 */
export function resolveBindingCandidates(
  chromadbMain: string,
  retraceModule: string = import.meta.url,
): BindingCandidate[] {
  return candidatePackages().map(({ package: pkg, declaredBy }) => {
    const req = createRequire(declaredBy === "chromadb" ? chromadbMain : retraceModule);
    try {
      const manifest = req.resolve(`${pkg}/package.json`);
      const version = (JSON.parse(readFileSync(manifest, "utf8")) as { version?: string }).version;
      return { package: pkg, declaredBy, file: req.resolve(pkg), ...(version !== undefined ? { version } : {}) };
    } catch (e) {
      return {
        package: pkg,
        declaredBy,
        missing:
          (e as NodeJS.ErrnoException).code === "MODULE_NOT_FOUND" ? "not installed" : String((e as Error).message),
      };
    }
  });
}

/**
 * The first candidate `load` loads, with the failures of those before it; or
 * no choice and every failure. `load` is `require` in the launcher (a test
 * passes its own to force a failure).
 */
export function chooseBinding<T>(
  candidates: readonly BindingCandidate[],
  load: (file: string) => T,
): { chosen?: { candidate: BindingCandidate; binding: T }; failures: BindingFailure[] } {
  const failures: BindingFailure[] = [];
  for (const c of candidates) {
    const version = c.version !== undefined ? { version: c.version } : {};
    if (c.file === undefined) {
      failures.push({ package: c.package, ...version, reason: c.missing ?? "not installed" });
      continue;
    }
    try {
      return { chosen: { candidate: c, binding: load(c.file) }, failures };
    } catch (e) {
      failures.push({ package: c.package, ...version, reason: firstLine((e as Error)?.message ?? String(e)) });
    }
  }
  return { failures };
}

function firstLine(s: string): string {
  return s.split("\n")[0]?.trim() ?? "";
}

/** The glibc version a loader error says a binding needs (`GLIBC_2.38' not found` → "2.38"; the highest named). */
export function glibcNeeded(reason: string): string | undefined {
  const versions = [...reason.matchAll(/GLIBC_(\d+)\.(\d+)/g)].map((m) => [Number(m[1]), Number(m[2])] as const);
  if (versions.length === 0) return undefined;
  versions.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const [major, minor] = versions[versions.length - 1]!;
  return `${major}.${minor}`;
}

/** The glibc this process runs on ("2.36"), or undefined on musl / non-Linux. */
export function glibcRuntime(): string | undefined {
  const header = (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header;
  return header?.glibcVersionRuntime;
}

/** `chromadb-js-bindings-linux-x64-gnu@1.3.4` */
export function bindingLabel(b: { package: string; version?: string }): string {
  return b.version !== undefined ? `${b.package}@${b.version}` : b.package;
}

/**
 * The one message for "no Chroma server binding can run here": the cause
 * (each candidate and why it did not load; for a glibc mismatch, the glibc
 * it needs and the one found) and both ways out.
 */
export function noBindingMessage(
  failures: readonly BindingFailure[],
  glibc: string | undefined = glibcRuntime(),
): string {
  const system = `${process.platform}/${process.arch}${glibc !== undefined ? `, glibc ${glibc}` : process.platform === "linux" ? ", no glibc (musl?)" : ""}`;
  const lines = failures.map((f) => {
    const needs = glibcNeeded(f.reason);
    const why = needs !== undefined ? `needs glibc ${needs}, this system has ${glibc ?? "none"}` : f.reason;
    return `  ${bindingLabel(f)}: ${why}`;
  });
  const tried =
    failures.length === 0 ? [`  chromadb ships no server binding for ${process.platform}/${process.arch}`] : lines;
  return (
    `no Chroma server binding runs on this system (${system}):\n${tried.join("\n")}\n` +
    "What to do: run with `--store memory` (an exact in-memory index, no server), or with `--store URL` " +
    "(or CHROMA_URL) pointing at a Chroma server running elsewhere (Docker, `pip install chromadb`, Chroma Cloud)."
  );
}

/** Parses the launcher's verdict lines out of the server's output. */
export function readLauncherVerdict(output: string): {
  chosen?: BindingCandidate;
  failures?: BindingFailure[];
  none?: BindingFailure[];
} {
  const out: { chosen?: BindingCandidate; failures?: BindingFailure[]; none?: BindingFailure[] } = {};
  for (const line of output.split("\n")) {
    try {
      if (line.startsWith(CHOSEN_MARKER)) {
        const v = JSON.parse(line.slice(CHOSEN_MARKER.length)) as {
          chosen: BindingCandidate;
          failures: BindingFailure[];
        };
        out.chosen = v.chosen;
        out.failures = v.failures;
      } else if (line.startsWith(NONE_MARKER))
        out.none = (JSON.parse(line.slice(NONE_MARKER.length)) as { failures: BindingFailure[] }).failures;
    } catch {
      // a line that only looks like a verdict: not ours
    }
  }
  return out;
}
