/**
 * Graded relevance and judged@k on the HTML report (docs/metrics.md), in
 * Chromium and Firefox (test/helpers/browser.ts): a `--graph` run of
 * test/fixtures/graphs/kb-agent.mjs over a copy of kb-mini with a third
 * English card and a hand-made case file (the same data as
 * test/cli/graded-relevance.int.test.ts). The page shows judged@3 among the
 * aggregates with its n, the judgments section (which nDCG, the holes), and
 * the graded turn's nDCG@3 in the turn table — the hand-computed 0.797, not
 * the binary 0.631.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BROWSERS, launchDriver, type BrowserDriver } from "../helpers/browser.js";
import { ROOT, runCli } from "../helpers/cli.js";
import { GRADED_CASES, writeGradedKb } from "../helpers/fixtures.js";

for (const b of BROWSERS) if (b.skipReason !== null) process.stderr.write(`${b.skipReason}\n`);
const noBrowser = BROWSERS.every((b) => b.skipReason !== null);

const GRAPH = path.join(ROOT, "test", "fixtures", "graphs", "kb-agent.mjs");
let dir: string;
let judged: { mean: number; n: number };
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "retrace-graded-html-"));
  if (noBrowser) return;
  const { kb, cases } = await writeGradedKb(dir, GRADED_CASES);
  const r = await runCli(
    [
      "eval",
      "--graph",
      GRAPH,
      "--kb",
      kb,
      "--cases",
      cases,
      "-k",
      "3",
      "--json",
      "--out",
      `html:${path.join(dir, "graded.html")}`,
    ],
    { env: { KB_AGENT_KB: kb } },
  );
  expect(r.stderr).not.toMatch(/unexpected error/);
  expect(r.exitCode).toBe(0);
  judged = (JSON.parse(r.stdout) as { aggregates: Record<string, { mean: number; n: number }> }).aggregates
    .judged_at_k!;
}, 120_000);
afterAll(() => rm(dir, { recursive: true, force: true }));

describe.each(BROWSERS)("graded nDCG and judged@k on the HTML report, in $label", (target) => {
  let driver: BrowserDriver | undefined;
  beforeAll(async () => {
    if (target.skipReason === null) driver = await launchDriver(target);
  }, 120_000);
  afterAll(async () => {
    await driver?.close();
  });

  it.skipIf(target.skipReason !== null)(
    "shows judged@3 with its n, the judgments section, and the graded nDCG@3 of a turn",
    async () => {
      const page = await driver!.open(path.join(dir, "graded.html"));
      // judged@3 by hand: (3/3 + 2/2 + 1/3) / 3 = 0.778 over the 3 turns with judgments.
      expect(judged.n).toBe(3);
      expect(await page.text('td[data-split="all"][data-key="judged_at_k"] .mean')).toBe("0.778");
      expect(await page.text('td[data-split="all"][data-key="judged_at_k"] .n')).toBe("n=3");
      const section = (await page.text('[data-section="judgments"]')) ?? "";
      expect(section).toContain(
        "nDCG@3: graded gains (the turn's relevant) on 2 turns of 3 scored turns (1 relevance-only: scored for nDCG only)",
      );
      expect(section).toContain("en-judged-001#0 judged 0.333 unjudged [card-freeze, refund-timelines]");
      // The turn table's nDCG column: the graded value. By hand, ranking [card-replace 1, card-freeze 3, refund-timelines 0]:
      // DCG = 1 + 3/log2 3 = 2.8928, IDCG = 3 + 1/log2 3 = 3.6309 → 0.797 (binary over the contract: 0.631).
      const cols = await page.evalAll("table.turns thead th", (ths) => ths.map((th) => th.getAttribute("data-col")));
      const row = await page.evalAll('table.turns tbody tr[data-turn="en-graded-001#0"] td', (tds) =>
        tds.map((td) => td.textContent),
      );
      expect(row[cols.indexOf("ndcg")]).toBe("0.797");
      const relOnly = await page.evalAll('table.turns tbody tr[data-turn="en-graded-001#1"] td', (tds) =>
        tds.map((td) => td.textContent),
      );
      expect(relOnly[cols.indexOf("ndcg")]).toBe("0.797"); // gains [1, 3] in that order: the same DCG and IDCG
      expect(page.events).toEqual([]);
      await page.close();
    },
    120_000,
  );
});
