import { readdir, readFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { copyKb, editFile, MINI_KB, SHIPPED_KB } from "../helpers/fixtures.js";

/** Every file under dir with its size and mtime: to prove a failed check wrote nothing. */
async function snapshot(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const rows = await Promise.all(
    entries.map(async (e) => {
      const p = path.join(e.parentPath, e.name);
      const s = await stat(p);
      return `${path.relative(dir, p)} ${s.size} ${s.mtimeMs}`;
    }),
  );
  return rows.sort();
}

describe("retrace check on the shipped data", () => {
  it("exits 0 and prints counts that meet the dataset's targets", async () => {
    const r = await runCli(["check", "--json"]);
    expect(r.stderr).toBe("");
    expect(r.exitCode).toBe(0);
    const s = JSON.parse(r.stdout);
    expect(s.valid).toBe(true);
    expect(s.kb.total.cards).toBe(38);
    expect([s.kb.byLocale.en.cards, s.kb.byLocale["es-419"].cards, s.kb.byLocale["pt-BR"].cards]).toEqual([18, 10, 10]);
    expect(s.kb.total.minSections).toBeGreaterThanOrEqual(3);
    expect(s.kb.total.maxSections).toBeLessThanOrEqual(6);
    expect(s.kb.total.minWords).toBeGreaterThanOrEqual(150);
    expect(s.kb.total.maxWords).toBeLessThanOrEqual(600);
    expect(s.dataset["en/all"].goldBearingTurns).toBeGreaterThanOrEqual(70);
    expect(s.dataset["es-419/all"].goldBearingTurns).toBeGreaterThanOrEqual(29);
    expect(s.dataset["pt-BR/all"].goldBearingTurns).toBeGreaterThanOrEqual(29);
    expect(s.dataset["all/all"].multiTurnShare).toBeGreaterThanOrEqual(0.25);
    expect(s.dataset["all/all"].disjunctiveShare).toBeGreaterThanOrEqual(0.2);
    expect(s.dataset["all/all"].noMatchTurns).toBeGreaterThan(0);
    expect(s.dataset["all/adversarial"].goldBearingTurns).toBeGreaterThan(0);
    // At least a third of the questions are paraphrases that share few content words with their card.
    expect(s.lexicalOverlap.goldBearingTurns).toBe(s.dataset["all/all"].goldBearingTurns);
    expect(s.lexicalOverlap.share).toBeGreaterThanOrEqual(1 / 3);
    expect(Object.keys(s.adversarialByCategory).sort()).toEqual([
      "bypass_limits_or_verification",
      "other_customer_data",
      "out_of_scope",
      "prompt_injection",
    ]);
    // The tune/holdout split covers every case and turn (docs/holdout.md); 417 turns counted in kb/eval/cases.jsonl.
    expect(s.dataset["all/all"].turns).toBe(417);
    expect(s.split.file).toBe(path.join("kb", "eval", "split.json"));
    expect(s.split.tune.cases + s.split.holdout.cases).toBe(s.dataset["all/all"].cases);
    expect(s.split.tune.turns + s.split.holdout.turns).toBe(417);
    expect(s.split.holdout.turns).toBeGreaterThan(s.split.tune.turns);
  });

  it("prints the human summary with per-locale and per-kind rows", async () => {
    const r = await runCli(["check"]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/^Knowledge base kb: 38 cards \(en 18, es-419 10, pt-BR 10\)/);
    for (const l of ["en", "es-419", "pt-BR", "all"])
      for (const k of ["golden", "adversarial", "all"])
        expect(r.stdout).toMatch(new RegExp(`^${l}\\s+${k}\\s+\\d+`, "m"));
    expect(r.stdout).toContain("Integrity: OK");
    expect(r.stdout).toMatch(
      /^Split kb\/eval\/split\.json: tune \d+ cases \(\d+ turns\), holdout \d+ cases \(\d+ turns\)$/m,
    );
  });
});

describe("retrace check counts turns as eval scores them", () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    await Promise.all(cleanups.splice(0).map((c) => c()));
  });

  it("counts a turn graded relevant without must_cite_one_of as relevance-only (nDCG only), not as no-match", async () => {
    const tmp = await copyKb(MINI_KB);
    cleanups.push(tmp.cleanup);
    const cases = path.join(tmp.dir, "labelled.jsonl");
    const turns = [
      { user: "how do I freeze my card?", must_cite_one_of: ["card-freeze"], expect: "answer" }, // gold-bearing
      {
        user: "and how long do refunds take?",
        relevant: { "refund-timelines": 2, "card-freeze": 0 },
        judged: ["refund-timelines", "card-freeze"],
      }, // relevance only
      { user: "do you sell mortgages?", must_cite_one_of: [], expect: "refuse" }, // no-match
      { user: "thanks!" }, // to label
    ];
    await writeFile(cases, JSON.stringify({ id: "conv-mixed", locale: "en", kind: "golden", turns }) + "\n");
    const r = await runCli(["check", "--kb", tmp.dir, "--cases", cases, "--json"]);
    expect(r.exitCode, r.stderr).toBe(0);
    const all = JSON.parse(r.stdout).dataset["all/all"];
    expect([
      all.turns,
      all.goldBearingTurns,
      all.relevanceOnlyTurns,
      all.noMatchTurns,
      all.toLabelTurns,
      all.refuseTurns,
    ]).toEqual([4, 1, 1, 1, 1, 1]);
    // As eval scores them: hit@k on the one gold-bearing turn, nDCG@k on it and the relevance-only turn.
    const ev = await runCli(
      [
        "eval",
        "--kb",
        tmp.dir,
        "--cases",
        cases,
        "--store",
        "memory",
        "--config",
        '{"retrieval":{"embedder":"builtin"}}',
        "--json",
        "--counterfactual",
        "off",
      ],
      { timeoutMs: 120_000 },
    );
    const aggregates = JSON.parse(ev.stdout).aggregates;
    expect([aggregates.retrieval_hit_at_k.n, aggregates.retrieval_ndcg_at_k.n]).toEqual([
      all.goldBearingTurns,
      all.goldBearingTurns + all.relevanceOnlyTurns,
    ]);
    const text = await runCli(["check", "--kb", tmp.dir, "--cases", cases]);
    expect(text.stdout).toMatch(/^locale\s+kind\s+cases\s+turns\s+gold-bearing\s+relevance-only\s+no-match\s+refuse/m);
    expect(text.stdout).toMatch(/^en\s+golden\s+1\s+4\s+1\s+1\s+1\s+1\s/m);
    expect(text.stdout).toContain(
      "Relevance only: 1 turn graded relevant without must_cite_one_of (scored for nDCG only, as eval scores them;",
    );
  }, 180_000);

  it("shows no relevance-only column when no turn is graded without a contract", async () => {
    const r = await runCli(["check", "--kb", MINI_KB]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^locale\s+kind\s+cases\s+turns\s+gold-bearing\s+no-match\s+refuse/m);
    expect(r.stdout).not.toContain("Relevance only");
  });
});

describe("retrace check on broken copies of the shipped data", () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    await Promise.all(cleanups.splice(0).map((c) => c()));
  });

  async function brokenCopy(edit: (dir: string) => Promise<void>) {
    const tmp = await copyKb(SHIPPED_KB);
    cleanups.push(tmp.cleanup);
    await edit(tmp.dir);
    const before = await snapshot(tmp.dir);
    const r = await runCli(["check", "--kb", tmp.dir], { cwd: tmp.dir });
    expect(await snapshot(tmp.dir)).toEqual(before); // nothing written anywhere
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe("");
    return { ...r, dir: tmp.dir };
  }

  it("names file, line and field for a misspelt gold id", async () => {
    let target = "";
    const r = await brokenCopy(async (dir) => {
      const file = path.join(dir, "eval", "cases.jsonl");
      const lines = (await readFile(file, "utf8")).split("\n");
      const i = lines.findIndex((l) => l.includes('"must_cite_one_of": ["'));
      const gold = /"must_cite_one_of": \["([^"]+)"/.exec(lines[i]!)![1]!;
      target = `cases.jsonl:${i + 1}: field \`turns[`;
      lines[i] = lines[i]!.replace(`"${gold}"`, `"${gold}x"`);
      await writeFile(file, lines.join("\n"));
    });
    expect(r.stderr).toContain(target);
    expect(r.stderr).toMatch(/must_cite_one_of\[\d\]` gold id "[a-z0-9-]+x" names no card in the KB; did you mean/);
  });

  it("names both files for a duplicate card id", async () => {
    const r = await brokenCopy(async (dir) => {
      const src = path.join(dir, "cards", "en", "card-freeze.md");
      await writeFile(path.join(dir, "cards", "en", "card-freeze-copy.md"), await readFile(src, "utf8"));
    });
    expect(r.stderr).toMatch(
      /card-freeze-copy\.md:\d+: field `id` expected `id` to equal the file name "card-freeze-copy"/,
    );
    const r2 = await brokenCopy(async (dir) => {
      const src = path.join(dir, "cards", "en", "card-freeze.md");
      await writeFile(
        path.join(dir, "cards", "es-419", "card-freeze.md"),
        (await readFile(src, "utf8")).replace("locale: en", "locale: es-419"),
      );
    });
    expect(r2.stderr).toMatch(
      /cards\/(en|es-419)\/card-freeze\.md:\d+: field `id` duplicate card id "card-freeze", already used by .*card-freeze\.md/,
    );
  });

  it("names line and field for a case in the wrong locale", async () => {
    let lineNo = 0;
    const r = await brokenCopy(async (dir) => {
      const file = path.join(dir, "eval", "cases.jsonl");
      const lines = (await readFile(file, "utf8")).split("\n");
      const i = lines.findIndex((l) => l.includes('"locale": "pt-BR"') && l.includes('"must_cite_one_of": ["pt-'));
      lineNo = i + 1;
      lines[i] = lines[i]!.replace('"locale": "pt-BR"', '"locale": "es-419"');
      await writeFile(file, lines.join("\n"));
    });
    expect(r.stderr).toMatch(
      new RegExp(
        `cases\\.jsonl:${lineNo}: field \`turns\\[\\d\\]\\.must_cite_one_of\\[\\d\\]\` gold card "pt-[a-z0-9-]+" is in locale pt-BR but the case is es-419`,
      ),
    );
  });

  it("names the split file and field for a split id that names no case", async () => {
    const r = await brokenCopy(async (dir) => {
      await editFile(path.join(dir, "eval", "split.json"), (t) =>
        t.replace(/"tune": \[\s*"[^"]+"/, '"tune": [\n    "no-such-case"'),
      );
    });
    expect(r.stderr).toMatch(/split\.json.*`tune\[0\]` unknown case id "no-such-case"/);
  });

  it("a cases file that does not exist gets a did-you-mean among the files of its folder", async () => {
    const r = await runCli(["check", "--kb", MINI_KB, "--cases", path.join(MINI_KB, "eval", "case.jsonl")]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(`; did you mean ${path.join(MINI_KB, "eval", "cases.jsonl")}?`);
    const far = await runCli(["check", "--kb", MINI_KB, "--cases", path.join(MINI_KB, "eval", "nothing-like-it.txt")]);
    expect(far.exitCode).toBe(2);
    expect(far.stderr).not.toContain("did you mean");
  });

  it("names the line of a truncated JSON line", async () => {
    let lineNo = 0;
    const r = await brokenCopy(async (dir) => {
      const file = path.join(dir, "eval", "cases.jsonl");
      await editFile(file, (t) => {
        const lines = t.split("\n");
        lineNo = 10;
        lines[9] = lines[9]!.slice(0, Math.floor(lines[9]!.length / 2));
        return lines.join("\n");
      });
    });
    expect(r.stderr).toMatch(new RegExp(`cases\\.jsonl:${lineNo}:\\d+: malformed JSON \\(`)); // line and column
  });

  it("names the file and field of a bad analyzers.json", async () => {
    const r = await brokenCopy(async (dir) => {
      await writeFile(path.join(dir, "analyzers.json"), JSON.stringify({ en: { stemmer: "klingon" } }));
    });
    expect(r.stderr).toMatch(/analyzers\.json.*en\.stemmer/);
  });
});

describe("retrace check and the KB's analyzers.json", () => {
  it("measures paraphrases with the KB's analyzers", async () => {
    const tmp = await copyKb(SHIPPED_KB);
    try {
      const overlap = async () => {
        const r = await runCli(["check", "--kb", tmp.dir, "--json"], { cwd: tmp.dir });
        expect(r.exitCode).toBe(0);
        return JSON.parse(r.stdout).lexicalOverlap;
      };
      const stemmed = await overlap();
      // Without stemming, "blocked" no longer meets "blocks": fewer questions share their card's words.
      await writeFile(path.join(tmp.dir, "analyzers.json"), JSON.stringify({ en: { stemmer: "none" } }));
      const unstemmed = await overlap();
      expect(unstemmed.goldBearingTurns).toBe(stemmed.goldBearingTurns);
      expect(unstemmed.paraphrases).toBeGreaterThan(stemmed.paraphrases);
    } finally {
      await tmp.cleanup();
    }
  });
});

describe("retrace check usage", () => {
  it("exits 2 on an unknown option", async () => {
    const r = await runCli(["check", "--nope"]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("unknown option '--nope'");
  });
});
