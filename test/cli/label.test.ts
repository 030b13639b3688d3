/**
 * `retrace label --merge` and `--agreement` through the real bin (no browser:
 * the exports are written here as a labelling page writes them; the page
 * itself is driven in test/html/label-page.int.test.ts), and the option
 * checks of `retrace label`.
 */
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "../helpers/chroma.js";
import { ROOT, runCli } from "../helpers/cli.js";
import { MINI_KB } from "../helpers/fixtures.js";
import { gunzipSync } from "node:zlib";
import type { LabelPageData } from "../../src/eval/label/pool.js";

const DATA_ELEMENT =
  /<script type="application\/octet-stream" id="retrace-data" data-encoding="gzip\+base64">([^<]*)<\/script>/;
async function pageData(file: string): Promise<LabelPageData> {
  const m = DATA_ELEMENT.exec(await readFile(file, "utf8"));
  expect(m).not.toBeNull();
  return JSON.parse(gunzipSync(Buffer.from(m![1]!, "base64")).toString("utf8")) as LabelPageData;
}
const KB_AGENT = path.join(ROOT, "test", "fixtures", "graphs", "kb-agent.mjs");

let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir, cleanup } = await tempDir("label-cli")));
afterAll(async () => cleanup());

const toLabel = {
  id: "conv-a",
  locale: "en",
  kind: "golden",
  turns: [{ user: "how do I lock my card?" }, { user: "and my refund?" }],
};
const other = { id: "conv-b", locale: "en", kind: "golden", turns: [{ user: "refund timing" }] };
const jsonl = (...cases: unknown[]) => cases.map((c) => JSON.stringify(c)).join("\n") + "\n";

describe("retrace label --merge", () => {
  it("merges labelled turns, keeps other lines byte for byte, and a second merge changes nothing", async () => {
    const into = path.join(dir, "cases.jsonl");
    const exported = path.join(dir, "exp.jsonl");
    await writeFile(into, jsonl(toLabel, other));
    const labelled = {
      ...toLabel,
      turns: [
        {
          user: "how do I lock my card?",
          must_cite_one_of: ["card-freeze"],
          expect: "answer",
          relevant: { "card-freeze": 2 },
          judged: ["card-freeze", "refund-timelines"],
        },
        { user: "and my refund?" },
      ],
    };
    await writeFile(exported, jsonl(labelled, other));
    const r = await runCli(["label", "--merge", exported, "--into", into]);
    expect(r.stderr).toMatch(/1 case updated, 0 appended, 1 unchanged/);
    expect(r.exitCode).toBe(0);
    const after = await readFile(into, "utf8");
    expect(after.split("\n")[0]).toBe(JSON.stringify(labelled));
    expect(after.split("\n")[1]).toBe(JSON.stringify(other));
    const check = await runCli(["check", "--kb", MINI_KB, "--cases", into]);
    expect(check.exitCode, check.stderr + check.stdout).toBe(0);
    const again = await runCli(["label", "--merge", exported, "--into", into]);
    expect(again.exitCode).toBe(0);
    expect(again.stderr).toMatch(/nothing to write/);
    expect(await readFile(into, "utf8")).toBe(after);
  });

  it("refuses conflicting judgments with file:line of both sides, and writes nothing (exit 2)", async () => {
    const into = path.join(dir, "conflict-cases.jsonl");
    const exported = path.join(dir, "conflict-exp.jsonl");
    const mine = {
      ...toLabel,
      turns: [
        {
          user: "how do I lock my card?",
          must_cite_one_of: ["card-freeze"],
          expect: "answer",
          relevant: { "card-freeze": 2 },
          judged: ["card-freeze"],
        },
        { user: "and my refund?" },
      ],
    };
    const theirs = {
      ...toLabel,
      turns: [
        {
          user: "how do I lock my card?",
          must_cite_one_of: ["card-freeze", "refund-timelines"],
          expect: "answer",
          relevant: { "card-freeze": 1, "refund-timelines": 1 },
          judged: ["card-freeze", "refund-timelines"],
        },
        { user: "and my refund?" },
      ],
    };
    await writeFile(into, jsonl(other, mine)); // line 2
    await writeFile(exported, jsonl(theirs)); // line 1
    const before = await readFile(into, "utf8");
    const r = await runCli(["label", "--merge", exported, "--into", into]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(
      `${exported}:1: field \`turns[0].relevant.card-freeze\` case conv-a turn 0: card card-freeze graded 1 here, 2 in ${into}:2`,
    );
    expect(r.stderr).toContain(
      `${exported}:1: field \`turns[0].must_cite_one_of\` case conv-a turn 0: card refund-timelines citeable here, not in ${into}:2`,
    );
    expect(await readFile(into, "utf8")).toBe(before);
  });
});

describe("retrace label --merge --kb / --catalog", () => {
  const labelled = (ids: string[]) => ({
    ...toLabel,
    turns: [
      { user: "how do I lock my card?", must_cite_one_of: ids, expect: "answer", judged: ids },
      { user: "and my refund?" },
    ],
  });

  it("checks the export's ids against the KB and prints the check command with --kb; unknown, hidden and hostile ids are refused with file:line", async () => {
    const into = path.join(dir, "kb-cases.jsonl");
    const exported = path.join(dir, "kb-exp.jsonl");
    await writeFile(into, jsonl(toLabel));
    await writeFile(exported, jsonl(labelled(["card-freeze"])));
    const ok = await runCli(["label", "--merge", exported, "--into", into, "--kb", MINI_KB]);
    expect(ok.exitCode, ok.stderr).toBe(0);
    expect(ok.stderr).toContain(`Next: check the merged cases: npx retrace check --kb ${MINI_KB} --cases ${into}`);
    expect(ok.stderr).not.toContain("were not checked");
    // The printed command, run as printed, passes.
    const check = await runCli(["check", "--kb", MINI_KB, "--cases", into]);
    expect(check.exitCode, check.stderr).toBe(0);
    for (const bad of ["card-freze", "card-\u200bfreeze", "<img src=x>"]) {
      const id = JSON.parse(`"${bad}"`) as string;
      await writeFile(into, jsonl(toLabel));
      await writeFile(exported, jsonl(labelled([id])));
      const r = await runCli(["label", "--merge", exported, "--into", into, "--kb", MINI_KB]);
      expect(r.exitCode, bad).toBe(2);
      expect(r.stderr).toContain(`${exported}:1: field \`turns[0].must_cite_one_of[0]\``);
      expect(r.stderr).toContain("names no card in the KB");
      expect(await readFile(into, "utf8")).toBe(jsonl(toLabel)); // nothing written
    }
  });

  it("checks against a catalog and prints the check command with --catalog", async () => {
    const catalog = path.join(dir, "ids.tsv");
    await writeFile(catalog, "card-freeze\ten\nrefund-timelines\ten\n");
    const into = path.join(dir, "cat-cases.jsonl");
    const exported = path.join(dir, "cat-exp.jsonl");
    await writeFile(into, jsonl(toLabel));
    await writeFile(exported, jsonl(labelled(["refund-timelines"])));
    const ok = await runCli(["label", "--merge", exported, "--into", into, "--catalog", catalog]);
    expect(ok.exitCode, ok.stderr).toBe(0);
    expect(ok.stderr).toContain(`Next: check the merged cases: npx retrace check --catalog ${catalog} --cases ${into}`);
    const check = await runCli(["check", "--catalog", catalog, "--cases", into]);
    expect(check.exitCode, check.stderr).toBe(0);
    expect(check.stdout).toContain(`Catalog ${catalog}: 2 entries (en 2)`);
    await writeFile(exported, jsonl(labelled(["lost-card"])));
    const r = await runCli(["label", "--merge", exported, "--into", into, "--catalog", catalog]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(`${exported}:1: field \`turns[0].must_cite_one_of[0]\``);
  });

  it("refuses an export that changes a case's locale (exit 2, file:line of both)", async () => {
    const into = path.join(dir, "loc-cases.jsonl");
    const exported = path.join(dir, "loc-exp.jsonl");
    await writeFile(into, jsonl(toLabel));
    await writeFile(exported, jsonl({ ...labelled(["card-freeze"]), locale: "es-419" }));
    const r = await runCli(["label", "--merge", exported, "--into", into]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(
      `${exported}:1: field \`locale\` case conv-a is locale "es-419" here, "en" in ${into}:1`,
    );
    expect(await readFile(into, "utf8")).toBe(jsonl(toLabel));
  });

  it("without --kb or --catalog merges and says the ids were not checked", async () => {
    const into = path.join(dir, "nokb-cases.jsonl");
    const exported = path.join(dir, "nokb-exp.jsonl");
    await writeFile(into, jsonl(toLabel));
    await writeFile(exported, jsonl(labelled(["card-freeze"])));
    const r = await runCli(["label", "--merge", exported, "--into", into]);
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toContain("were not checked against a KB or catalog");
  });
});

describe("retrace label --agreement", () => {
  it("prints Cohen's kappa (unweighted) of suggested against the person's grades, with n", async () => {
    // Cards: a (judge 2, person 2), b (judge 0, person 0), c (judge 1, person 0), d (judge 2: not graded by the person, left out).
    // p_o = 2/3; judge shares 0:1/3 1:1/3 2:1/3, person 0:2/3 2:1/3 → p_e = (1/3)(2/3) + 0 + (1/3)(1/3) = 1/3; κ = (2/3 − 1/3)/(2/3) = 0.5.
    const file = path.join(dir, "agree.jsonl");
    const c = {
      ...other,
      turns: [
        {
          user: "refund timing",
          must_cite_one_of: ["refund-timelines"],
          expect: "answer",
          relevant: { "refund-timelines": 2 },
          judged: ["refund-timelines", "card-freeze", "x-card"],
          suggested: { "refund-timelines": 2, "card-freeze": 0, "x-card": 1, "y-card": 2 },
        },
      ],
    };
    await writeFile(file, jsonl(c));
    const r = await runCli(["label", "--agreement", file]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/unweighted/);
    expect(r.stdout).toMatch(
      /kappa 0\.500\s+n=3 cards in 1 turns\s+observed agreement 0\.667\s+chance agreement 0\.333/,
    );
    expect(r.stdout).toMatch(/not graded by the person \(left out\): 1/);
    const j = await runCli(["label", "--agreement", file, "--json"]);
    const parsed = JSON.parse(j.stdout) as { version: number; measure: string; n: number; kappa: number };
    expect(parsed).toMatchObject({ version: 1, measure: "cohen-kappa-unweighted", n: 3 });
    expect(parsed.kappa).toBeCloseTo(0.5, 12);
  });
});

describe("retrace label options", () => {
  it("refuses what cannot work, before anything runs (exit 2)", async () => {
    const cases = path.join(dir, "opts.jsonl");
    await writeFile(cases, jsonl(toLabel));
    const noHtml = await runCli(["label", cases, "--kb", MINI_KB]);
    expect(noHtml.exitCode).toBe(2);
    expect(noHtml.stderr).toMatch(/--out html:/);
    const badPool = await runCli([
      "label",
      cases,
      "--kb",
      MINI_KB,
      "--out",
      `html:${path.join(dir, "p.html")}`,
      "--pool",
      "bm25,splade",
    ]);
    expect(badPool.exitCode).toBe(2);
    expect(badPool.stderr).toMatch(/--pool/);
    const graphNoModule = await runCli([
      "label",
      cases,
      "--kb",
      MINI_KB,
      "--out",
      `html:${path.join(dir, "p.html")}`,
      "--pool",
      "graph",
    ]);
    expect(graphNoModule.exitCode).toBe(2);
    expect(graphNoModule.stderr).toMatch(/graph only with --graph/);
    const catalogMixed = await runCli([
      "label",
      cases,
      "--catalog",
      "c.tsv",
      "--graph",
      "g.mjs",
      "--pool",
      "bm25,graph",
      "--out",
      `html:${path.join(dir, "p.html")}`,
    ]);
    expect(catalogMixed.exitCode).toBe(2);
    expect(catalogMixed.stderr).toMatch(/graph or recorded alone with --catalog/);
    const storeUnused = await runCli([
      "label",
      cases,
      "--catalog",
      "c.tsv",
      "--graph",
      "g.mjs",
      "--pool",
      "graph",
      "--store",
      "memory",
      "--out",
      `html:${path.join(dir, "p.html")}`,
    ]);
    expect(storeUnused.exitCode).toBe(2);
    expect(storeUnused.stderr).toMatch(/'--store' is not used with --pool graph or recorded alone/);
    const mergeWithHtml = await runCli(["label", "--merge", cases, "--into", cases, "--out", "html:x.html"]);
    expect(mergeWithHtml.exitCode).toBe(2);
    expect(mergeWithHtml.stderr).toMatch(/'--out' is not used with --merge/);
  });
});

describe("retrace label with --graph", () => {
  it("pools your graph's scored list next to retrace's bm25 (--pool bm25,graph)", async () => {
    const cases = path.join(dir, "graph-cases.jsonl");
    await writeFile(cases, jsonl(toLabel));
    const html = path.join(dir, "graph.html");
    const r = await runCli([
      "label",
      cases,
      "--kb",
      MINI_KB,
      "--store",
      "memory",
      "--config",
      JSON.stringify({ retrieval: { embedder: "builtin" } }),
      "--graph",
      KB_AGENT,
      "--pool",
      "bm25,graph",
      "--depth",
      "3",
      "--out",
      `html:${html}`,
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    const data = await pageData(html);
    expect(data.systems).toEqual(["bm25", "graph"]);
    const pool = data.cases[0]!.turns[0]!.pool;
    // kb-agent ranks by word overlap with the card's text: card-freeze shares "how" and "card" with "how do I lock my card?".
    expect(pool.find((p) => p.id === "card-freeze")?.ranks.graph).toBeDefined();
    expect(pool.some((p) => p.ranks.bm25 !== undefined)).toBe(true);
    for (const p of pool) expect(Math.max(...Object.values(p.ranks))).toBeLessThanOrEqual(3);
    // The query each system searched with: bm25's follow-up query is the contextualized one `retrace trace` shows for that turn, not the raw message.
    const trace = await runCli([
      "trace",
      "conv-a",
      "--turn",
      "1",
      "--kb",
      MINI_KB,
      "--cases",
      cases,
      "--store",
      "memory",
      "--config",
      '{"retrieval":{"embedder":"builtin"}}',
      "--config",
      '{"retrieval":{"mode":"bm25"}}',
      "--json",
    ]);
    expect(trace.exitCode, trace.stderr).toBe(0);
    const traced = (JSON.parse(trace.stdout) as { turns: { trace: { query: string } }[] }).turns[0]!.trace.query;
    expect(traced).not.toBe("and my refund?");
    expect(data.cases[0]!.turns[1]!.queries.bm25).toBe(traced);
    expect(typeof data.cases[0]!.turns[1]!.queries.graph).toBe("string");
  }, 120_000);

  it("takes the passages from the graph's documents with --catalog (--pool graph alone)", async () => {
    const cases = path.join(dir, "catalog-cases.jsonl");
    await writeFile(cases, jsonl(toLabel));
    const catalog = path.join(dir, "catalog.tsv");
    await writeFile(
      catalog,
      "card-freeze\ten\nrefund-timelines\ten\nes-congelar-tarjeta\tes-419\npt-chaves-pix\tpt-BR\n",
    );
    const html = path.join(dir, "catalog.html");
    const r = await runCli([
      "label",
      cases,
      "--catalog",
      catalog,
      "--graph",
      KB_AGENT,
      "--pool",
      "graph",
      "--out",
      `html:${html}`,
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    const data = await pageData(html);
    const freeze = data.cases[0]!.turns[0]!.pool.find((p) => p.id === "card-freeze")!;
    expect(freeze.title).toBe("card-freeze"); // a catalog has ids, not titles
    const passage = freeze.passage.map((s) => s[0]).join("");
    // The page content kb-agent's retriever returned for the card (its title and body: test/fixtures/kb-mini/cards/en/card-freeze.md).
    const card = await readFile(path.join(MINI_KB, "cards", "en", "card-freeze.md"), "utf8");
    expect(passage.length).toBeGreaterThan(0);
    expect(card).toContain(
      passage
        .split("\n")
        .filter((l) => l.trim() !== "")
        .at(-1)!
        .trim(),
    );
    // "card" is held by both documents the graph returned (df 2 of 2: IDF ln(1 + 0.5/2.5) < ln 2), "how", "do", "i", "my" are stop words: nothing of them marked.
    const marked = data.cases.flatMap((c) =>
      c.turns.flatMap((t) => t.pool.flatMap((p) => p.passage.filter((s) => s[1]).map((s) => s[0].toLowerCase()))),
    );
    expect(marked.filter((m) => ["card", "how", "do", "i", "my", "and"].includes(m))).toEqual([]);
    // The query the graph searched with, per system.
    expect(data.cases[0]!.turns[0]!.queries.graph).toBe("how do I lock my card?");
  }, 120_000);
});
