/**
 * The extractor of the docs' package-importing code blocks
 * (test/helpers/doc-snippets.ts); the pack test compiles and runs what it
 * finds against the packed tarball.
 */
import { describe, expect, it } from "vitest";
import { ROOT } from "../helpers/cli.js";
import { docSnippets, extractSnippets, importedModules } from "../helpers/doc-snippets.js";

const md = (...lines: string[]) => lines.join("\n");

describe("extractSnippets", () => {
  it("takes ts/js blocks that import the package: unmarked ones are compiled, marked ones run or are fragments", () => {
    const text = md(
      "# Doc",
      "```ts",
      'import { ndcgAtK } from "retrace-eval/metrics";',
      "```",
      "<!-- snippet: run -->",
      "",
      "```mjs",
      'import { HashingEmbedder } from "retrace-eval";',
      "console.log(new HashingEmbedder().dimension);",
      "```",
      "<!-- snippet: fragment -->",
      "```typescript",
      'import { expect } from "vitest";',
      'import { retraceMatchers, type RetraceMatchers } from "retrace-eval/testing";',
      'expect(trace).toRetrieve(["a"]);',
      "```",
      "```sh",
      "npx retrace eval",
      "```",
      "```ts",
      'import { StateGraph } from "@langchain/langgraph";',
      "```",
    );
    const got = extractSnippets(text, "docs/x.md");
    expect(got.map((s) => [s.line, s.mode, s.file])).toEqual([
      [2, "compile", "snippets/docs-x-L2.ts"],
      [7, "run", "snippets/docs-x-L7.mjs"],
      [12, "fragment", "snippets/docs-x-L12.ts"],
    ]);
    expect(got[0]!.source).toBe('import { ndcgAtK } from "retrace-eval/metrics";\n');
    // A fragment keeps only its imports of the package: a wrong path or name still fails to compile.
    expect(got[2]!.source).toBe(
      'import { retraceMatchers, type RetraceMatchers } from "retrace-eval/testing";\nexport {};\n',
    );
  });

  it("takes blocks that import the wrong name `retrace` too, so that they fail to compile instead of being skipped", () => {
    const got = extractSnippets(
      md(
        "```ts",
        'import { retraceMatchers } from "retrace/testing";',
        "```",
        "```js",
        'const m = await import("retrace");',
        "```",
      ),
      "d.md",
    );
    expect(got.map((s) => s.line)).toEqual([1, 4]);
  });

  it("a longer fence keeps an inner ``` line inside the block", () => {
    const got = extractSnippets(
      md("````ts", 'import { gate } from "retrace-eval";', "```", "const x = 1;", "````"),
      "d.md",
    );
    expect(got).toHaveLength(1);
    expect(got[0]!.code).toContain("const x = 1;");
  });

  it("refuses an unknown mode, a marker without a block, and a marker on a block that does not import the package", () => {
    expect(() =>
      extractSnippets(md("<!-- snippet: runn -->", "```ts", 'import "retrace-eval";', "```"), "d.md"),
    ).toThrow(/d\.md:1: unknown snippet mode "runn"/);
    expect(() =>
      extractSnippets(md("<!-- snippet: run -->", "Some text.", "```ts", 'import "retrace-eval";', "```"), "d.md"),
    ).toThrow(/d\.md:1: .* is not followed by a code block/);
    expect(() => extractSnippets(md("text", "<!-- snippet: fragment -->"), "d.md")).toThrow(
      /d\.md:2: .* is not followed by a code block/,
    );
    expect(() => extractSnippets(md("<!-- snippet: run -->", "```sh", "npm start", "```"), "d.md")).toThrow(
      /does not import the package/,
    );
  });

  it("importedModules reads static imports, re-exports and dynamic imports", () => {
    expect(
      importedModules('import a from "x";\nexport { b } from "y";\nconst c = await import("z");\nimport "w";\n'),
    ).toEqual(["x", "y", "z", "w"]);
  });
});

describe("the repository's README.md and docs/", () => {
  it("have package-importing blocks, none of which names the package by a wrong name", () => {
    const snippets = docSnippets(ROOT);
    expect(snippets.length).toBeGreaterThan(0);
    const wrong = snippets.flatMap((s) =>
      importedModules(s.code)
        .filter((m) => /^retrace(?:\/|$)/.test(m))
        .map((m) => `${s.doc}:${s.line} imports "${m}"`),
    );
    expect(wrong).toEqual([]);
  });
});
