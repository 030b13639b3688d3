/**
 * No source file outgrows a reader (issue 55, item 4): every file under
 * src/ is at most MAX_LINES lines, generated bundles (`*.generated.ts`)
 * aside. The allow-list of files still over it is gone: the last ones were
 * split in wave seven.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "./helpers/cli.js";

const MAX_LINES = 450;

/** Lines of every source file under src/ (generated bundles aside), by path relative to the repository. */
function sourceLines(): Map<string, number> {
  const out = new Map<string, number>();
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, e.name);
      if (e.isDirectory()) walk(full);
      else if (/\.(c|m)?[jt]sx?$/.test(e.name) && !e.name.includes(".generated.")) {
        const text = readFileSync(full, "utf8");
        const lines = text === "" ? 0 : text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
        out.set(path.relative(ROOT, full).split(path.sep).join("/"), lines);
      }
    }
  };
  walk(path.join(ROOT, "src"));
  return out;
}

describe(`no source file over ${MAX_LINES} lines`, () => {
  const files = sourceLines();

  it("finds the source tree", () => {
    expect(files.size).toBeGreaterThan(100);
    expect(files.has("src/index.ts")).toBe(true);
  });

  it(`every file is at most ${MAX_LINES} lines`, () => {
    const over = [...files].filter(([, n]) => n > MAX_LINES).map(([f, n]) => `${f}: ${n} lines`);
    expect(over, "split these files (or, for a generated bundle, name it *.generated.ts)").toEqual([]);
  });
});
