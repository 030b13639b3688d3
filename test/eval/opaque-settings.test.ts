import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { FUSION_METHODS } from "../../src/retrieval/fusion/registry.js";

/**
 * Issue 34 item 2: the harness (src/eval) and the trace contract
 * (src/contract) know no agent. The agent's settings reach them as opaque
 * `{ method, params }` and `settings` objects, so none of its setting names
 * nor its fusion methods' names may appear there — in code or in comments.
 * The one exemption is the migration of files written before the settings
 * were opaque (legacy-retrieval.ts), which must read the old names.
 */
const ROOTS = ["src/eval", "src/contract"];
const EXEMPT = new Set(["src/eval/report/schemas/legacy-retrieval.ts"]);
/** Setting names of retrace's retriever, as identifiers or keys. */
const SETTING_NAMES = /\b(rrfK|signalsShift|bm25Params|weights|k1)\b/;
/** Fusion method names as quoted literals (`"rrf"`, `'minmax'`, `` `signals` ``). */
const METHOD_LITERAL = new RegExp(`["'\`](${FUSION_METHODS.join("|")})["'\`]`);

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

export function offenders(root: string): string[] {
  const out: string[] = [];
  for (const dir of ROOTS)
    for (const file of files(join(root, dir))) {
      const rel = relative(root, file).split("\\").join("/");
      if (EXEMPT.has(rel)) continue;
      readFileSync(file, "utf8")
        .split("\n")
        .forEach((line, i) => {
          const m = SETTING_NAMES.exec(line) ?? METHOD_LITERAL.exec(line);
          if (m !== null) out.push(`${rel}:${i + 1}: ${m[0]}`);
        });
    }
  return out;
}

describe("the harness knows no agent", () => {
  it("src/eval and src/contract name none of the retriever's settings or fusion methods", () => {
    expect(offenders(process.cwd())).toEqual([]);
  });

  it("the patterns catch a regression", () => {
    expect(SETTING_NAMES.test("const { rrfK } = c;")).toBe(true);
    expect(SETTING_NAMES.test("c.weights?.dense")).toBe(true);
    expect(METHOD_LITERAL.test('if (c.fusion.method === "rrf")')).toBe(true);
    expect(METHOD_LITERAL.test("`signals`")).toBe(true);
    expect(SETTING_NAMES.test("denseK bm25K fusion.params")).toBe(false);
  });
});
