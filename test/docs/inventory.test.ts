/**
 * docs/architecture.md's file inventory is generated from each source file's
 * header comment (scripts/docs-inventory.ts): the rules that read a header,
 * and the check that every file under src/ has one and that the page's
 * section is current.
 */
import { describe, expect, it } from "vitest";
import { checkInventory, headerComment, inventory, summaryOf } from "../../scripts/docs-inventory.js";

describe("headerComment", () => {
  it("reads the doc comment a file starts with, gutters removed", () => {
    expect(headerComment("/**\n * The one logger.\n *\n * More.\n */\nexport const x = 1;\n")).toBe(
      "The one logger.\n\nMore.",
    );
    expect(headerComment("#!/usr/bin/env node\n\n/** One line. */\n")).toBe("One line.");
  });

  it("is null when the file starts with anything else", () => {
    expect(headerComment('import x from "y";\n/** A function. */\nexport function f() {}\n')).toBeNull();
    expect(headerComment("// a line comment\n/** later */\n")).toBeNull();
    expect(headerComment("/* not a doc comment */\n")).toBeNull();
    expect(headerComment("/**\n *\n */\n")).toBeNull();
    expect(headerComment("/** never closed\n")).toBeNull();
  });
});

describe("summaryOf", () => {
  it("keeps the first sentence of the first paragraph, on one line", () => {
    expect(summaryOf("The one logger of retrace.\nIt writes to stderr. Nothing else.")).toBe(
      "The one logger of retrace.",
    );
    expect(summaryOf("First paragraph, no full stop\n\nSecond.")).toBe("First paragraph, no full stop");
    expect(summaryOf("Ends at a backtick. `x` follows.")).toBe("Ends at a backtick.");
  });

  it("does not end a sentence at e.g., i.e., cf. or vs., nor at a lower-case word", () => {
    expect(summaryOf("Any retriever (e.g. `Foo`, i.e. Bar) works, cf. Baz vs. Qux. Then more.")).toBe(
      "Any retriever (e.g. `Foo`, i.e. Bar) works, cf. Baz vs. Qux.",
    );
    expect(summaryOf("Version 2.5 is read. Then.")).toBe("Version 2.5 is read.");
  });

  it("stops where a list starts and turns a closing colon into a full stop", () => {
    expect(summaryOf("LangChain adapters:\n- `A`: one. Two.\n- `B`")).toBe("LangChain adapters.");
  });
});

describe("inventory", () => {
  it("is one table per folder in path order, pipes escaped", () => {
    const md = inventory([
      { file: "src/b/x.ts", summary: "X." },
      { file: "src/a.ts", summary: "A | B." },
      { file: "src/b/c/y.ts", summary: "Y." },
    ]);
    expect(md.split("\n").filter((l) => l.startsWith("**") || l.startsWith("| `"))).toEqual([
      "**`src/`**",
      "| `a.ts` | A \\| B. |",
      "**`src/b/`**",
      "| `x.ts` | X. |",
      "**`src/b/c/`**",
      "| `y.ts` | Y. |",
    ]);
  });
});

describe("docs/architecture.md", () => {
  it("every source file has a header comment, and the inventory is current (run `npm run docs:inventory` when this fails)", async () => {
    const { missing, current } = await checkInventory();
    expect(missing).toEqual([]);
    expect(current).toBe(true);
  });
});
