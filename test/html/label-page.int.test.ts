/**
 * The labelling page (`retrace label`, docs/labelling.md) in real browsers —
 * Debian's Chromium via playwright-core and firefox-esr via puppeteer-core
 * (test/helpers/browser.ts): three conversations imported with `retrace
 * cases import` over a copy of kb-mini with a hostile card, the page written
 * by the real bin (memory store, built-in embedder), labelled with the
 * keyboard, reloaded (labels kept), exported; the export merges with `label
 * --merge`, passes `retrace check`, and `retrace eval` scores those turns.
 * A second page with the fake relevance judge: suggestions accepted with `a`,
 * the page's κ equal to `label --agreement`'s.
 */
import { existsSync } from "node:fs";
import { cp, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BROWSERS, launchDriver, type BrowserDriver, type BrowserPage } from "../helpers/browser.js";
import { tempDir } from "../helpers/chroma.js";
import { ROOT, runCli } from "../helpers/cli.js";
import { MINI_KB } from "../helpers/fixtures.js";

for (const b of BROWSERS) if (b.skipReason !== null) process.stderr.write(`${b.skipReason}\n`);

// Every payload sets window.__pwned (or opens a dialog) if it ever runs.
const HOSTILE_USER = `<script>window.__pwned='conv'</script> hostile freeze card "><img src=x onerror="window.__pwned='img'"> </script><script>alert(1)</script>`;
const HOSTILE_CARD = [
  "---",
  "id: card-hostile",
  "locale: en",
  `title: 'Hostile freeze </script><script>window.__pwned = "title"</script>'`,
  "---",
  "## Freeze the hostile card",
  `To freeze the hostile card open the app "><img src=x onerror="window.__pwned='card'"> and tap Freeze. </script><script>window.__pwned='card2'</script>`,
  "",
].join("\n");
const CONVERSATIONS = [
  {
    messages: [
      { role: "user", content: "how do I lock my card?" },
      { role: "assistant", content: "Open the app." },
      { role: "user", content: "and when does my refund arrive?" },
    ],
    locale: "en",
  },
  { messages: [{ role: "user", content: HOSTILE_USER }], locale: "en" },
  { messages: [{ role: "user", content: "do you sell mortgages?" }], locale: "en" },
];

let dir: string;
let cleanup: () => Promise<void>;
let kb: string;
let casesFile: string;
const common = () => [
  "--kb",
  kb,
  "--store",
  "memory",
  "--config",
  JSON.stringify({ retrieval: { embedder: "builtin" } }),
];
/** The same data for `retrace eval`, whose embedder is a key of --config. */
const evalCommon = () => ["--kb", kb, "--store", "memory", "--config", '{"retrieval":{"embedder":"builtin"}}'];

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir("label-page"));
  kb = path.join(dir, "kb");
  await cp(MINI_KB, kb, { recursive: true });
  await writeFile(path.join(kb, "cards", "en", "card-hostile.md"), HOSTILE_CARD);
  await writeFile(path.join(dir, "conv.jsonl"), CONVERSATIONS.map((c) => JSON.stringify(c)).join("\n") + "\n");
  casesFile = path.join(dir, "cases.jsonl");
  const imp = await runCli(["cases", "import", path.join(dir, "conv.jsonl"), "--out", casesFile]);
  expect(imp.exitCode, imp.stderr).toBe(0);
  const page = await runCli(["label", casesFile, ...common(), "--out", `html:${path.join(dir, "label.html")}`]);
  expect(page.exitCode, page.stderr).toBe(0);
  expect(page.stderr).toMatch(/3 cases, 4 turns/);
  const judged = await runCli([
    "label",
    casesFile,
    ...common(),
    "--out",
    `html:${path.join(dir, "label-judge.html")}`,
    "--judge",
    path.join(ROOT, "test", "fixtures", "judge", "relevance-judge-fake.mjs"),
  ]);
  expect(judged.exitCode, judged.stderr).toBe(0);
}, 240_000);

afterAll(async () => cleanup());

/** Clicks Export and returns the file the browser downloaded (checked equal to the export link's data: URL). */
async function exported(page: BrowserPage, downloads: string): Promise<string> {
  const file = path.join(downloads, "cases.labelled.jsonl");
  await rm(file, { force: true });
  await page.click("#export");
  const href = await page.attribute("#export-link", "href");
  expect(href).toMatch(/^data:application\/x-ndjson;charset=utf-8,/);
  const linked = decodeURIComponent(href!.slice(href!.indexOf(",") + 1));
  for (let i = 0; i < 100 && !existsSync(file); i++) await new Promise((r) => setTimeout(r, 100));
  await new Promise((r) => setTimeout(r, 200)); // a download being written completes
  const text = await readFile(file, "utf8");
  expect(text).toBe(linked);
  return text;
}

const cardCount = (page: BrowserPage) => page.evalAll("#turn .card", (els) => els.length);
const grades = (page: BrowserPage) =>
  page.evalAll("#turn .card", (els) =>
    els.map((e) => [e.getAttribute("data-card"), e.getAttribute("data-grade"), e.getAttribute("data-citeable")]),
  );
const pwned = (page: BrowserPage) =>
  page.evaluate(() => (globalThis as unknown as { __pwned?: unknown }).__pwned ?? null);

for (const target of BROWSERS) {
  describe.skipIf(target.skipReason !== null)(`the labelling page in ${target.label}`, () => {
    let driver: BrowserDriver;
    let downloads: string;
    beforeAll(async () => {
      downloads = path.join(dir, `downloads-${target.name}`);
      await mkdir(downloads);
      driver = await launchDriver(target, { downloadDir: downloads });
    }, 60_000);
    afterAll(async () => driver?.close());

    it("is labelled with the keyboard, keeps the work across a reload, and its export merges, checks and is scored", async () => {
      const page = await driver.open(path.join(dir, "label.html"));
      expect(await page.attribute("#app", "data-state")).toBe("ready");
      // Hostile text stays text: shown as typed, never run.
      // Cases are listed by their first user message, the id under it.
      expect(
        await page.evalAll("nav.cases button", (els) =>
          els.map((e) => [e.querySelector(".first")?.textContent, e.querySelector(".cid")?.textContent]),
        ),
      ).toEqual(CONVERSATIONS.map((c) => [c.messages[0]!.content, expect.stringMatching(/^conv-[0-9a-f]{16}$/)]));
      const all: string[] = [];
      const marked: string[] = [];
      // Turn by turn: c (the first card citeable; not on the third turn, which stays graded relevance only), 2 (it is highly relevant),
      // then x (every other card 0): three key presses for a turn with one relevant card among several pooled. The last turn (mortgages) is a refusal: r, x.
      for (let turn = 0; turn < 4; turn++) {
        const n = await cardCount(page);
        expect(n).toBeGreaterThanOrEqual(3); // one relevant card among several: grading each by hand would take n presses and more
        all.push((await page.text("#turn"))!);
        marked.push(...(await page.evalAll("#turn mark", (els) => els.map((e) => e.textContent ?? ""))));
        // One numbering: the 0-based index of the caseId#N keys.
        expect(await page.text("#turn h2")).toContain(`turn #${turn === 1 ? 1 : 0}`);
        expect(await page.attribute("#turn", "data-turn")).toBe(String(turn === 1 ? 1 : 0));
        // The query each of retrace's systems searched with, shown (one line when they searched alike).
        expect(
          (await page.evalAll("#turn .searched", (els) => els.map((e) => e.getAttribute("data-systems"))))
            .join(",")
            .split(",")
            .sort(),
        ).toEqual(["bm25", "dense", "hybrid"]);
        const keys = turn < 2 ? ["c", "2", "x"] : turn === 2 ? ["2", "x"] : ["r", "x"];
        expect(keys.length).toBeLessThanOrEqual(3);
        for (const k of keys) await page.press(k);
        expect(await page.evalAll("#turn .card", (els) => els.every((e) => e.getAttribute("data-grade") !== ""))).toBe(
          true,
        );
        expect(await page.text("#progress")).toBe(`${turn + 1} of 4 turns labelled`);
        // Graded relevant with nothing citeable: marked as relevance only (nDCG only) on the turn and in the case list.
        expect(await page.attribute("#turn p.gold", "data-gold")).toBe(
          turn === 2 ? "relevance-only" : turn < 2 ? "citeable" : "none",
        );
        if (turn < 3) await page.press("n");
      }
      expect(await page.evalAll("nav.cases .ndcg-only", (els) => els.map((e) => e.textContent))).toEqual([
        " \u00b7 1 nDCG only",
      ]);
      // The follow-up shows what the assistant said before it.
      await page.press("p");
      await page.press("p");
      expect(
        await page.evalAll("#turn .convo .msg", (els) => els.map((e) => [e.getAttribute("data-role"), e.textContent])),
      ).toEqual([
        ["user", "user #0how do I lock my card?"],
        ["assistant", "assistantOpen the app."],
        ["user", "user #1and when does my refund arrive?"],
      ]);
      await page.press("n");
      await page.press("n");
      // No stop word of the English analyzer is marked; nor is "card", held by every English card of the KB (under the IDF floor).
      expect(marked.length).toBeGreaterThan(0);
      const stop = ["how", "do", "i", "my", "and", "when", "does", "the", "for", "still", "you", "to"];
      expect(marked.filter((m) => stop.includes(m.toLowerCase()) || m.toLowerCase() === "card")).toEqual([]);
      const joined = all.join("\n");
      expect(joined).toContain(HOSTILE_USER);
      expect(joined).toContain(`Hostile freeze </script><script>window.__pwned = "title"</script>`);
      expect(await page.text("#progress")).toBe("4 of 4 turns labelled");
      expect(await page.attribute("#turn p.expect", "data-expect")).toBe("refuse");
      const before = await grades(page);
      await page.reload();
      expect(await page.text("#progress")).toBe("4 of 4 turns labelled");
      expect(await grades(page)).toEqual(before);
      expect(await pwned(page)).toBeNull();
      expect(page.events).toEqual([]);

      const text = await exported(page, downloads);
      const lines = text
        .trimEnd()
        .split("\n")
        .map(
          (l) =>
            JSON.parse(l) as {
              id: string;
              turns: {
                must_cite_one_of?: string[];
                expect?: string;
                relevant?: Record<string, number>;
                judged?: string[];
              }[];
            },
        );
      expect(lines).toHaveLength(3);
      const turns = lines.flatMap((l) => l.turns);
      expect(turns.map((t) => t.expect)).toEqual(["answer", "answer", undefined, "refuse"]);
      for (const t of turns.slice(0, 2)) {
        expect(t.must_cite_one_of).toHaveLength(1);
        expect(t.relevant).toEqual({ [t.must_cite_one_of![0]!]: 2 });
        expect(t.judged![0]).toBe(t.must_cite_one_of![0]);
      }
      // Graded relevant, nothing citeable: relevance only (no citation contract, no expect), scored for nDCG only.
      expect(turns[2]!.must_cite_one_of).toBeUndefined();
      expect(turns[2]!.relevant).toEqual({ [turns[2]!.judged![0]!]: 2 });
      expect(turns[3]!.must_cite_one_of).toEqual([]);
      await page.close();

      // The export merges into a copy of the imported cases, passes check, and eval scores its turns.
      const into = path.join(dir, `${target.name}-cases.jsonl`);
      const exp = path.join(dir, `${target.name}-export.jsonl`);
      await writeFile(into, await readFile(casesFile, "utf8"));
      await writeFile(exp, text);
      const evalArgs = ["eval", ...evalCommon(), "--cases", into, "--json", "--counterfactual", "off"];
      const pre = await runCli(evalArgs);
      const preReport = JSON.parse(pre.stdout) as { aggregates: Record<string, { n: number }> };
      expect(preReport.aggregates.retrieval_hit_at_k?.n ?? 0).toBe(0);
      const merged = await runCli(["label", "--merge", exp, "--into", into]);
      expect(merged.exitCode, merged.stderr).toBe(0);
      const check = await runCli(["check", "--kb", kb, "--cases", into, "--json"]);
      expect(check.exitCode, check.stderr + check.stdout).toBe(0);
      // check counts as eval scores: two turns with a citeable card, one relevance-only turn (nDCG only), one no-match refusal.
      const counts = (
        JSON.parse(check.stdout) as {
          dataset: Record<
            string,
            { goldBearingTurns: number; relevanceOnlyTurns: number; noMatchTurns: number; toLabelTurns: number }
          >;
        }
      ).dataset["all/all"]!;
      expect([counts.goldBearingTurns, counts.relevanceOnlyTurns, counts.noMatchTurns, counts.toLabelTurns]).toEqual([
        2, 1, 1, 0,
      ]);
      const post = await runCli(evalArgs);
      const report = JSON.parse(post.stdout) as { aggregates: Record<string, { n: number }> };
      expect(report.aggregates.retrieval_hit_at_k!.n).toBe(2); // the two turns with a citeable card
      expect(report.aggregates.retrieval_ndcg_at_k!.n).toBe(3); // and the relevance-only turn
    }, 240_000);

    it("keeps hostile text inert by escaping alone (the page without its CSP meta tag)", async () => {
      const html = await readFile(path.join(dir, "label.html"), "utf8");
      const csp = /<meta http-equiv="Content-Security-Policy" content="[^"]*">\n/;
      expect(html).toMatch(csp);
      const nocsp = path.join(dir, `label-nocsp-${target.name}.html`);
      await writeFile(nocsp, html.replace(csp, ""));
      const page = await driver.open(nocsp);
      expect(await page.attribute("#app", "data-state")).toBe("ready");
      let text = "";
      for (let turn = 0; turn < 4; turn++) {
        text += (await page.text("#turn")) ?? "";
        await page.press("n");
      }
      expect(text).toContain(HOSTILE_USER);
      expect(await page.evalAll("#turn img, #turn script", (els) => els.length)).toBe(0);
      expect(await pwned(page)).toBeNull();
      expect(page.events).toEqual([]);
      await page.close();
    }, 60_000);

    it("shows the judge's suggestions until confirmed, and its kappa equals label --agreement's", async () => {
      const page = await driver.open(path.join(dir, "label-judge.html"));
      expect(await page.evalAll("[data-suggested]", (els) => els.length)).toBeGreaterThan(0);
      expect(await page.text(".suggest")).toMatch(/^suggestion: \d/);
      // Turn 0: every suggestion accepted (a); the other turns graded 0 by hand.
      for (let turn = 0; turn < 4; turn++) {
        const n = await cardCount(page);
        for (let i = 0; i < n; i++) await page.press(turn === 0 ? "a" : "0");
        if (turn < 3) await page.press("n");
      }
      const shown = (await page.text("#kappa"))!;
      const n = Number(await page.attribute("#kappa", "data-n"));
      expect(n).toBeGreaterThan(0);
      const text = await exported(page, downloads);
      expect(page.events).toEqual([]);
      await page.close();
      const exp = path.join(dir, `${target.name}-judge-export.jsonl`);
      await writeFile(exp, text);
      const r = await runCli(["label", "--agreement", exp, "--json"]);
      expect(r.exitCode, r.stderr).toBe(0);
      const a = JSON.parse(r.stdout) as { n: number; kappa: number | null };
      expect(a.n).toBe(n);
      expect(shown).toContain(`n=${a.n} confirmed cards`);
      expect(shown).toContain(a.kappa === null ? "undefined" : a.kappa.toFixed(3));
    }, 120_000);
  });
}
