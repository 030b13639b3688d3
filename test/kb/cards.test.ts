import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DataValidationError } from "../../src/errors.js";
import { loadKnowledgeBase, parseCard, splitSections } from "../../src/kb/cards.js";
import { copyKb, editFile, MINI_KB } from "../helpers/fixtures.js";

const card = (front: string, body = "## One\nText one.\n\n## Two\nText two.\n") => `---\n${front}\n---\n${body}`;

async function issuesOf(p: Promise<unknown>) {
  const e = await p.then(() => null, (x: unknown) => x);
  expect(e).toBeInstanceOf(DataValidationError);
  return (e as DataValidationError).issues;
}

describe("parseCard", () => {
  it("parses front matter and body", () => {
    const { card: c, issues } = parseCard(card("id: a-b\nlocale: en\ntitle: T\ntags: [x, y]"), "kb/cards/en/a-b.md", "en");
    expect(issues).toEqual([]);
    expect(c).toMatchObject({ id: "a-b", locale: "en", title: "T", tags: ["x", "y"] });
  });

  it("rejects an id that does not match the file name, naming line and field", () => {
    const { issues } = parseCard(card("locale: en\nid: other\ntitle: T"), "kb/cards/en/a-b.md", "en");
    expect(issues).toEqual([{ file: "kb/cards/en/a-b.md", line: 3, field: "id", message: expect.stringContaining('file name "a-b"') }]);
  });

  it("rejects a locale that does not match its folder", () => {
    const { issues } = parseCard(card("id: a\nlocale: pt-BR\ntitle: T"), "kb/cards/en/a.md", "en");
    expect(issues).toEqual([{ file: "kb/cards/en/a.md", line: 3, field: "locale", message: expect.stringContaining('folder "en"') }]);
  });

  it("checks the front matter with CardFrontMatterSchema, each issue on its key's line", () => {
    const { card: c, issues } = parseCard(card("id: a\nlocale: en_US\ntitle: 5\ntags: x"), "kb/cards/en/a.md", "en");
    expect(c).toBeUndefined();
    expect(issues).toEqual([
      { file: "kb/cards/en/a.md", line: 3, field: "locale", message: 'expected `locale` to be a canonical BCP-47 language tag (e.g. en, de, fr-CA, ja, zh-Hans), got "en_US"' },
      { file: "kb/cards/en/a.md", line: 4, field: "title", message: "expected a non-empty title, got 5" },
      { file: "kb/cards/en/a.md", line: 5, field: "tags", message: 'expected a list of strings, got "x"' },
    ]);
    expect(parseCard(card("locale: en\ntitle: T"), "kb/cards/en/a.md", "en").issues).toEqual([
      { file: "kb/cards/en/a.md", line: 2, field: "id", message: "missing required field; expected the card id matching ^[a-z0-9][a-z0-9-]*$ (equal to the file name)" },
    ]);
  });

  it("rejects unknown fields", () => {
    const { issues } = parseCard(card("id: a\nlocale: en\ntitle: T\nauthor: me"), "kb/cards/en/a.md", "en");
    expect(issues).toEqual([{ file: "kb/cards/en/a.md", line: 5, field: "author", message: expect.stringContaining("unknown field") }]);
  });

  it("rejects an empty body", () => {
    const { issues } = parseCard(card("id: a\nlocale: en\ntitle: T", "\n\n"), "kb/cards/en/a.md", "en");
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({ field: "body", message: expect.stringContaining("empty body") });
  });

  it("rejects a body that does not start with a section, and a section without text", () => {
    expect(parseCard(card("id: a\nlocale: en\ntitle: T", "intro\n## One\ntext\n"), "a.md").issues[0]).toMatchObject({ line: 6, field: "body" });
    expect(parseCard(card("id: a\nlocale: en\ntitle: T", "## One\n\n## Two\ntext\n"), "a.md").issues[0]).toMatchObject({ line: 6, message: expect.stringContaining('"One" has no text') });
  });

  it("rejects a missing front matter and invalid YAML with a line", () => {
    expect(parseCard("## One\ntext", "a.md").issues[0]).toMatchObject({ line: 1 });
    expect(parseCard(card("id: a\nlocale: [en\ntitle: T"), "a.md").issues[0]?.message).toContain("invalid YAML");
  });

  it("rejects a bad id and missing title", () => {
    const { issues } = parseCard(card("id: A_b\nlocale: en"), "A_b.md");
    expect(issues.map((i) => i.field)).toEqual(["id", "title"]);
  });
});

describe("splitSections", () => {
  it("splits at ## only, keeping ### inside", () => {
    const s = splitSections("## A\nx\n### sub\ny\n## B\nz");
    expect(s.map((x) => [x.heading, x.text, x.line])).toEqual([["A", "x\n### sub\ny", 1], ["B", "z", 5]]);
  });
});

describe("loadKnowledgeBase", () => {
  let cleanup: (() => Promise<void>) | undefined;
  afterEach(async () => cleanup?.());

  it("loads the mini fixture", async () => {
    const kb = await loadKnowledgeBase(MINI_KB);
    expect(kb.cards.map((c) => c.id).sort()).toEqual(["card-freeze", "es-congelar-tarjeta", "pt-chaves-pix", "refund-timelines"]);
    expect(kb.byId.get("pt-chaves-pix")?.locale).toBe("pt-BR");
  });

  it("reports a duplicate card id across locales, naming both files", async () => {
    const tmp = await copyKb();
    cleanup = tmp.cleanup;
    const dup = path.join(tmp.dir, "cards", "es-419", "card-freeze.md");
    const { writeFile } = await import("node:fs/promises");
    await writeFile(dup, card("id: card-freeze\nlocale: es-419\ntitle: Duplicado"));
    const issues = await issuesOf(loadKnowledgeBase(tmp.dir));
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({ field: "id", line: 2, message: expect.stringMatching(/duplicate card id "card-freeze".*cards\/(en|es-419)\/card-freeze\.md/) });
  });

  it("collects every issue of every card before failing", async () => {
    const tmp = await copyKb();
    cleanup = tmp.cleanup;
    await editFile(path.join(tmp.dir, "cards", "en", "card-freeze.md"), (t) => t.replace("locale: en", "locale: es-419"));
    await editFile(path.join(tmp.dir, "cards", "pt-BR", "pt-chaves-pix.md"), (t) => t.replace("title: Chaves PIX", "title: Chaves PIX\nowner: x"));
    const issues = await issuesOf(loadKnowledgeBase(tmp.dir));
    expect(issues.map((i) => `${path.basename(i.file)}:${i.field}`).sort()).toEqual(["card-freeze.md:locale", "pt-chaves-pix.md:owner"]);
  });

  it("rejects an unknown locale folder and a missing cards folder", async () => {
    const tmp = await copyKb();
    cleanup = tmp.cleanup;
    const { mkdir } = await import("node:fs/promises");
    // Any BCP-47 tag is a locale folder; a name that is not one (or not canonical) is an error.
    await mkdir(path.join(tmp.dir, "cards", "pt_BR"));
    expect((await issuesOf(loadKnowledgeBase(tmp.dir)))[0]?.message).toContain('locale folder "pt_BR" is not a canonical BCP-47 language tag');
    expect((await issuesOf(loadKnowledgeBase(path.join(tmp.dir, "nowhere"))))[0]?.message).toContain("expected a folder of cards");
  });
});
