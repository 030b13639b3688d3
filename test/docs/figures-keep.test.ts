/**
 * scripts/doc-figures.ts: a figure whose inputs are missing (README's
 * `readme.model` without the model's weights) is left as committed: neither
 * rewritten nor reported stale, while the other figures are still checked.
 */
import { describe, expect, it } from "vitest";
import { applyFigures, type Figure } from "../../scripts/doc-figures.js";

const doc = [
  "Markets: <!-- fig:readme.markets -->two<!-- /fig -->.",
  "",
  "<!-- fig:readme.model -->",
  "",
  "| committed | table |",
  "",
  "<!-- /fig -->",
  "",
].join("\n");

describe("applyFigures with a kept figure", () => {
  it("keeps the committed region and reports it neither stale nor unknown", () => {
    const figures: Figure[] = [
      { file: "README.md", id: "readme.markets", block: false, text: "three" },
      { file: "README.md", id: "readme.model", block: true, text: "", keep: "the model is not in /nowhere" },
    ];
    const r = applyFigures("README.md", doc, figures);
    expect(r.errors).toEqual([]);
    expect(r.stale.map((p) => p.id)).toEqual(["readme.markets"]);
    expect(r.text).toBe(doc.replace(">two<", ">three<"));
  });

  it("rewrites the region when the figure is there", () => {
    const figures: Figure[] = [
      { file: "README.md", id: "readme.markets", block: false, text: "two" },
      { file: "README.md", id: "readme.model", block: true, text: "| new | table |" },
    ];
    const r = applyFigures("README.md", doc, figures);
    expect(r.stale.map((p) => p.id)).toEqual(["readme.model"]);
    expect(r.text).toContain("| new | table |");
    expect(r.text).not.toContain("committed");
  });
});
