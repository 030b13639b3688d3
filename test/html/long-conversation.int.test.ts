/**
 * A 50-turn conversation in real browsers — Debian's Chromium via playwright-core and
 * firefox-esr via puppeteer-core (test/helpers/browser.ts): the labelling page (`retrace
 * label`) walks it one turn at a time with n and p, each turn's heading and conversation so
 * far right, the turns before the last three folded so the cards stay in view, nothing wider
 * than the window; the HTML report (`retrace eval --out html:`) lists its 50 turns, opens
 * turn #49's view, and draws the turn-position buckets (#3–4, #5–9, #10+) with their n.
 */
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BROWSERS, launchDriver, type BrowserDriver, type BrowserPage } from "../helpers/browser.js";
import { tempDir } from "../helpers/chroma.js";
import { runCli } from "../helpers/cli.js";
import { MINI_KB } from "../helpers/fixtures.js";

for (const b of BROWSERS) if (b.skipReason !== null) process.stderr.write(`${b.skipReason}\n`);

const TURNS = 50;
const QUESTIONS = [
  "how do I lock my card?",
  "and will my refund still arrive?",
  "how long do refunds take?",
  "and how do I unfreeze it?",
];
const CASE_ID = "en-long-050";

let dir: string;
let cleanup: () => Promise<void>;

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir("long-conversation"));
  const turns = Array.from({ length: TURNS }, (_, i) => ({
    user: `${QUESTIONS[i % 4]} (${i})`,
    ...(i % 5 === 0 ? { must_cite_one_of: [i % 2 === 0 ? "card-freeze" : "refund-timelines"], expect: "answer" } : {}),
    ...(i > 0 ? { context: [{ role: "assistant", content: `reply before turn ${i}` }] } : {}),
  }));
  const cases = path.join(dir, "cases.jsonl");
  await writeFile(cases, JSON.stringify({ id: CASE_ID, locale: "en", kind: "golden", turns }) + "\n");
  const label = await runCli(
    [
      "label",
      cases,
      "--kb",
      MINI_KB,
      "--store",
      "memory",
      "--config",
      JSON.stringify({ retrieval: { embedder: "builtin" } }),
      "--out",
      `html:${path.join(dir, "label.html")}`,
    ],
    {
      timeoutMs: 300_000,
    },
  );
  expect(label.exitCode, label.stderr).toBe(0);
  const report = await runCli(
    [
      "eval",
      "--kb",
      MINI_KB,
      "--cases",
      cases,
      "--store",
      "memory",
      "--config",
      '{"retrieval":{"embedder":"builtin"}}',
      "--out",
      `html:${path.join(dir, "report.html")}`,
      "--out",
      `json:${path.join(dir, "report.json")}`,
    ],
    { timeoutMs: 300_000 },
  );
  expect(report.exitCode, report.stderr).toBe(0);
}, 600_000);

afterAll(async () => cleanup());

/** Whether anything is wider than the window (a layout that broke). */
const overflows = (page: BrowserPage) =>
  page.evaluate(() => {
    const d = (globalThis as unknown as { document: { documentElement: { scrollWidth: number; clientWidth: number } } })
      .document.documentElement;
    return d.scrollWidth > d.clientWidth;
  });

for (const target of BROWSERS) {
  describe.skipIf(target.skipReason !== null)(`a 50-turn conversation in ${target.label}`, () => {
    let driver: BrowserDriver;
    beforeAll(async () => {
      driver = await launchDriver(target);
    }, 60_000);
    afterAll(async () => driver?.close());

    it("the labelling page walks it one turn at a time, the earlier turns folded, nothing wider than the window", async () => {
      const page = await driver.open(path.join(dir, "label.html"));
      expect(await page.attribute("#app", "data-state")).toBe("ready");
      for (let turn = 0; turn < TURNS; turn++) {
        expect(await page.attribute("#turn", "data-turn")).toBe(String(turn));
        expect(await page.text("#turn h2")).toBe(`${CASE_ID} \u00b7 turn #${turn} (turns #0\u2013#${TURNS - 1})`);
        // Shown: the last three earlier turns and this one (each with the reply before it); the rest folded, not lost.
        const shown = await page.evalAll("#turn .convo > .msg", (els) => els.map((e) => e.textContent));
        const from = Math.max(0, turn - 3);
        const expected: string[] = [];
        for (let i = from; i <= turn; i++) {
          if (i > 0) expected.push(`assistantreply before turn ${i}`);
          expected.push(`user #${i}${QUESTIONS[i % 4]} (${i})`);
        }
        expect(shown).toEqual(expected);
        const folded = await page.evalAll("#turn .convo details.earlier .msg[data-role=user]", (els) => els.length);
        expect(folded).toBe(from);
        if (turn === TURNS - 1 || turn % 10 === 0) expect(await overflows(page)).toBe(false);
        if (turn < TURNS - 1) await page.press("n");
      }
      // Back one at a time.
      await page.press("p");
      await page.press("p");
      expect(await page.attribute("#turn", "data-turn")).toBe(String(TURNS - 3));
      // The folded turns open on a click.
      await page.click("#turn details.earlier > summary");
      expect(await page.evalAll("#turn details.earlier[open]", (els) => els.length)).toBe(1);
      expect(page.events).toEqual([]);
      await page.close();
    });

    it("the HTML report lists the 50 turns, opens turn #49, and draws the position buckets with n", async () => {
      const report = JSON.parse(await readFile(path.join(dir, "report.json"), "utf8"));
      expect(Object.keys(report.splits.position)).toEqual(["1", "2", "3", "4-5", "6-10", "11+"]);
      const page = await driver.open(path.join(dir, "report.html"));
      expect(await page.attribute("#app", "data-state")).toBe("ready");
      await page.click('button[data-tab="conversation"]');
      const heads = await page.evalAll('table.summary[data-split="position"] thead th', (ths) =>
        ths.map((t) => t.textContent),
      );
      expect(heads).toEqual([
        "metric",
        "turn #0",
        "turn #1",
        "turn #2",
        "turn #3\u20134",
        "turn #5\u20139",
        "turn #10+",
      ]);
      // #10+ holds the labelled turns #10, #15, …, #45: n = 8.
      expect(
        await page.evalAll(
          'table.summary[data-split="position"] td[data-key="retrieval_hit_at_k"][data-group="11+"] .n',
          (els) => els.map((e) => e.textContent),
        ),
      ).toEqual(["n=8"]);
      expect(await overflows(page)).toBe(false);
      await page.click('button[data-tab="turns"]');
      expect(await page.text('[data-field="count"]')).toBe(`${TURNS} of ${TURNS} turns`);
      await page.click(`table.turns tbody tr[data-turn="${CASE_ID}#49"]`);
      expect(await page.text(".turnview")).toContain(`${QUESTIONS[49 % 4]} (49)`);
      expect(await overflows(page)).toBe(false);
      // One turn at a time through the conversation: previous twice, then next.
      expect(await page.evalAll("[data-nav=next]", (els) => els.length)).toBe(0); // #49 is the last turn
      await page.click("[data-nav=previous]");
      await page.click("[data-nav=previous]");
      expect(await page.text(".turnview")).toContain(`${QUESTIONS[47 % 4]} (47)`);
      expect(await page.text("[data-nav=next]")).toBe(`next turn ${CASE_ID}#48 \u2192`);
      await page.click("[data-nav=next]");
      expect(await page.text(".turnview")).toContain(`${QUESTIONS[48 % 4]} (48)`);
      expect(await overflows(page)).toBe(false);
      expect(page.events).toEqual([]);
      await page.close();
    });
  });
}
