/** `--catalog` (id<TAB>locale a line) standing in for the KB of a `--graph` run. */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { loadGraphData } from "../../src/app/graph-eval.js";
import { InvalidArgumentError } from "../../src/errors.js";
import { parseCatalog } from "../../src/kb/catalog.js";

describe("catalog", () => {
  it("parses id<TAB>locale lines, skipping blanks and comments; ids may be paths", () => {
    const { kb, issues } = parseCatalog("# ids\ncard-a\tde\n\ndocs/b.md\tja\n", "cat.tsv");
    expect(issues).toEqual([]);
    expect(kb.cards.map((c) => [c.id, c.locale])).toEqual([["card-a", "de"], ["docs/b.md", "ja"]]);
  });

  it("names file, line and field of every bad line", () => {
    const { issues } = parseCatalog("ok\ten\n\ten\nx\tpt_BR\nok\tde\nno-tab\n", "cat.tsv");
    expect(issues.map((i) => [i.line, i.field])).toEqual([[2, "id"], [3, "locale"], [4, "id"], [5, undefined]]);
    expect(issues[2]?.message).toContain('duplicate id "ok", first listed on line 1');
  });

  it("stands in for --kb: the integrity check resolves gold against it; with neither --graph refuses", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "retrace-catalog-"));
    try {
      await writeFile(path.join(dir, "catalog.tsv"), "karte-sperren\tde\n");
      await writeFile(path.join(dir, "cases.jsonl"), JSON.stringify({ id: "c1", locale: "de", kind: "golden", turns: [{ user: "Karte sperren", must_cite_one_of: ["karte-sperren"], expect: "answer" }] }) + "\n");
      const data = await loadGraphData({ catalog: path.join(dir, "catalog.tsv"), cases: path.join(dir, "cases.jsonl") });
      expect(data.cases.map((c) => c.id)).toEqual(["c1"]);
      await writeFile(path.join(dir, "bad.jsonl"), JSON.stringify({ id: "c1", locale: "de", kind: "golden", turns: [{ user: "x", must_cite_one_of: ["nope"], expect: "answer" }] }) + "\n");
      await expect(loadGraphData({ catalog: path.join(dir, "catalog.tsv"), cases: path.join(dir, "bad.jsonl") })).rejects.toThrow(/gold id "nope" names no card/);
      await expect(loadGraphData({ kb: path.join(dir, "no-kb") })).rejects.toThrow(InvalidArgumentError);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
