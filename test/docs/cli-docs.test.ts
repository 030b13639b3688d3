/**
 * The CLI docs' generated blocks are current (scripts/cli-docs.ts, issue 50
 * item 4): docs/cli.md's output-format and retired-spelling tables and
 * docs/configuration.md's settings table are what the registry, RETIRED and
 * the settings schema give; a block changed by hand, or a row added to the
 * code without `npm run docs:cli`, fails naming the page and the block.
 */
import { describe, expect, it } from "vitest";
import { BLOCKS, run, withBlock } from "../../scripts/cli-docs.js";

describe("npm run docs:cli -- --check", () => {
  it("finds every generated block current", async () => {
    expect(await run(true)).toEqual([]);
  });

  it("names a stale block (a block's text that is not the code's)", () => {
    const page = "a\n<!-- retired -->\n\nold\n\n<!-- /retired -->\nb";
    const block = BLOCKS.find((b) => b.name === "retired")!;
    const next = withBlock(page, "retired", block.text());
    expect(next).not.toBe(page);
    expect(next).toContain("| `--embedder <auto\\|builtin\\|lsa\\|model>` |");
    expect(next.startsWith("a\n<!-- retired -->\n\n| retired |")).toBe(true);
    expect(next.endsWith("\n\n<!-- /retired -->\nb")).toBe(true);
    expect(() => withBlock("no markers", "retired", "x")).toThrow(/no <!-- retired --> … <!-- \/retired --> block/);
  });
});
