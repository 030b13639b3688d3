/**
 * The CLI docs' generated blocks are current (scripts/cli-docs.ts, issue 50
 * item 4): docs/cli.md's output-format and retired-spelling tables and
 * docs/configuration.md's settings table are what the registry, RETIRED and
 * the settings schema give; a block changed by hand, or a row added to the
 * code without `npm run docs:cli`, fails naming the page and the block.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT, runCli } from "../helpers/cli.js";
import { BLOCKS, run, withBlock } from "../../scripts/cli-docs.js";

describe("npm run docs:cli -- --check", () => {
  it("finds every generated block current", async () => {
    expect(await run(true)).toEqual([]);
  });

  it("names a stale block (a block's text that is not the code's)", async () => {
    const page = "a\n<!-- retired -->\n\nold\n\n<!-- /retired -->\nb";
    const block = BLOCKS.find((b) => b.name === "retired")!;
    const next = withBlock(page, "retired", await block.text());
    expect(next).not.toBe(page);
    expect(next).toContain("| `--embedder <auto\\|builtin\\|lsa\\|model>` |");
    expect(next.startsWith("a\n<!-- retired -->\n\n| retired |")).toBe(true);
    expect(next.endsWith("\n\n<!-- /retired -->\nb")).toBe(true);
    expect(() => withBlock("no markers", "retired", "x")).toThrow(/no <!-- retired --> … <!-- \/retired --> block/);
  });
});

/** `text` with every run of white space one space (the help wraps long descriptions; the docs do not). */
const flat = (text: string) => text.replace(/\s+/g, " ");
/** A generated cell back to the help's text. */
const uncell = (text: string) => text.replaceAll("\\|", "|").replaceAll("&lt;", "<").replaceAll("&gt;", ">");

describe("docs/cli.md's option tables are what --help prints", () => {
  it("every row of every command's table: the same flags and the same description", async () => {
    const doc = await readFile(path.join(ROOT, "docs", "cli.md"), "utf8");
    const sections = [
      { name: "eval", text: doc.slice(doc.indexOf("<!-- options-eval -->"), doc.indexOf("<!-- /options-eval -->")) },
      ...doc
        .slice(doc.indexOf("<!-- options -->"), doc.indexOf("<!-- /options -->"))
        .split(/^### /m)
        .slice(1)
        .map((s) => ({ name: /^`retrace ([^`]+)`/.exec(s)![1]!, text: s })),
    ];
    expect(sections.map((s) => s.name)).toEqual(expect.arrayContaining(["eval", "check", "cases synth", "score"]));
    for (const { name, text } of sections) {
      const r = await runCli([...name.split(" "), "--help"]);
      expect(r.exitCode, name).toBe(0);
      const help = flat(r.stdout);
      const rows = [...text.matchAll(/^\| `((?:[^`\\]|\\.)+)` \| (.*) \|$/gm)];
      expect(rows.length, name).toBeGreaterThan(1);
      for (const [, term, description] of rows) {
        expect(help, `${name} ${term}`).toContain(flat(`${uncell(term!)} ${uncell(description!)}`));
      }
    }
  });
});
