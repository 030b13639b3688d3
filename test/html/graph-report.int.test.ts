/**
 * The HTML report of `retrace eval --graph` in real browsers (Debian's
 * Chromium and firefox-esr, test/helpers/browser.ts): the real bin runs two
 * graphs written the way a user writes one, and each page is opened from disk
 * in each browser and checked against the report JSON.
 * - test/fixtures/graphs/fanout-agent.mjs (a `Send()` fan-out of three
 *   parallel calls to a custom retriever; a router that skips retrieval; a
 *   search node that throws), over a store holding only the `en` documents,
 *   with k = 1: a gold card no call listed is "not retrieved", one a call
 *   listed below k "cut at k", a skipped turn "no retrieval", an error turn
 *   shows its message;
 * - test/fixtures/graphs/steps-agent.mjs (two retrieval steps, child runs,
 *   an unknown id): the unscored step shown as such; its retriever name,
 *   error message and document id are markup that must stay text.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Report, TurnReport } from "../../src/eval/report/types.js";
import { BROWSERS, launchDriver, type BrowserDriver, type BrowserPage } from "../helpers/browser.js";
import { ROOT, runCli } from "../helpers/cli.js";
import { MINI_KB } from "../helpers/fixtures.js";
// @ts-expect-error -- a plain .mjs fixture (a user's graph), no declarations
import { HOSTILE_ERROR, HOSTILE_ID, HOSTILE_RETRIEVER } from "../fixtures/graphs/steps-agent.mjs";

for (const b of BROWSERS) if (b.skipReason !== null) process.stderr.write(`${b.skipReason}\n`);
const noBrowser = BROWSERS.every((b) => b.skipReason !== null);

const GRAPHS = path.join(ROOT, "test", "fixtures", "graphs");
const line = (id: string, locale: string, user: string, gold: string[]) =>
  JSON.stringify({
    id,
    locale,
    kind: "golden",
    turns: [{ user, must_cite_one_of: gold, expect: gold.length > 0 ? "answer" : "refuse" }],
  });
const FANOUT_CASES = [
  // The question's own call lists [refund-timelines, card-freeze]: card-freeze is 2nd, below k = 1.
  line("en-cut-001", "en", "when does a refund arrive for my frozen card?", ["card-freeze"]),
  // The store holds only `en` documents: no call lists es-congelar-tarjeta.
  line("es-lock-001", "es-419", "¿cómo bloqueo mi tarjeta?", ["es-congelar-tarjeta"]),
  line("en-weather-001", "en", "what is the weather like today?", []),
  line("en-skipped-001", "en", "joke aside, how do I freeze my card?", ["card-freeze"]),
  line("en-error-001", "en", "explode the lock on my card", ["card-freeze"]),
];
const HOSTILE_REASON = `turned off <img src=x onerror="window.__pwned='reason'"></script><script>window.__pwned='reason2'</script>`;
const STEPS_CASES = [
  line("en-steps-001", "en", "how do I lock my card?", ["card-freeze"]),
  line("en-explode-001", "en", "explode my card", ["card-freeze"]),
];
const DATA_ELEMENT =
  /<script type="application\/octet-stream" id="retrace-data" data-encoding="gzip\+base64">([^<]*)<\/script>/;
const CSP_META = /<meta http-equiv="Content-Security-Policy" content="[^"]*">\n/;

let dir: string;
let fanout: Report;
let steps: Report;
const turnOf = (r: Report, id: string) => r.turns.find((t) => `${t.caseId}#${t.turn}` === id)!;
/** Every id any captured list of the turn holds (scored and unscored calls, child runs included). */
const listedIds = (t: TurnReport) =>
  new Set([...(t.captured?.stages ?? []), ...(t.captured?.unscored ?? [])].flatMap((s) => s.ids));

async function embedded(
  file: string,
): Promise<{ run: { name: string; report: Report } & Record<string, unknown> } & Record<string, unknown>> {
  const m = DATA_ELEMENT.exec(await readFile(path.join(dir, file), "utf8"));
  expect(m).not.toBeNull();
  return JSON.parse(gunzipSync(Buffer.from(m![1]!, "base64")).toString("utf8"));
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "retrace-graph-html-"));
  if (noBrowser) return;
  await writeFile(path.join(dir, "fanout.jsonl"), `${FANOUT_CASES.join("\n")}\n`);
  await writeFile(path.join(dir, "steps.jsonl"), `${STEPS_CASES.join("\n")}\n`);
  const at = (f: string) => path.join(dir, f);
  const a = await runCli(
    [
      "eval",
      "--graph",
      path.join(GRAPHS, "fanout-agent.mjs"),
      "--kb",
      MINI_KB,
      "--cases",
      at("fanout.jsonl"),
      "-k",
      "1",
      "--gate",
      "max-errors=1",
      "--out",
      `json:${at("fanout.json")}`,
      "--out",
      `html:${at("fanout.html")}`,
    ],
    {
      env: { FANOUT_STORE: "en-only" },
    },
  );
  expect(a.stderr).not.toMatch(/unexpected error/);
  expect(a.exitCode).toBe(0);
  const b = await runCli([
    "eval",
    "--graph",
    path.join(GRAPHS, "steps-agent.mjs"),
    "--kb",
    MINI_KB,
    "--cases",
    at("steps.jsonl"),
    "-k",
    "3",
    "--gate",
    "max-errors=1",
    "--out",
    `json:${at("steps.json")}`,
    "--out",
    `html:${at("steps.html")}`,
  ]);
  expect(b.stderr).not.toMatch(/unexpected error/);
  expect(b.exitCode).toBe(0);
  const c = await runCli(["report", at("fanout.json"), "--out", `html:${at("from-report.html")}`]);
  expect(c.exitCode).toBe(0);
  // The steps page without its CSP meta tag, to check that escaping alone holds.
  const html = await readFile(at("steps.html"), "utf8");
  expect(html).toMatch(CSP_META);
  await writeFile(at("steps-nocsp.html"), html.replace(CSP_META, ""));
  fanout = JSON.parse(await readFile(at("fanout.json"), "utf8")) as Report;
  steps = JSON.parse(await readFile(at("steps.json"), "utf8")) as Report;
  // The shapes a --graph run fills once its counterfactual retrieval runs (`--graph --counterfactual`): the same
  // `queryAttribution` section and per-turn `queries` as retrace's own graph. Written into copies of the report
  // here, rendered by `retrace report`: one off with a reason (hostile text), one on with one attributed turn.
  const cut = turnOf(fanout, "en-cut-001#0");
  const off = {
    ...fanout,
    queryAttribution: {
      enabled: false,
      reason: HOSTILE_REASON,
      turns: 0,
      withStandalone: 0,
      counts: {},
      splits: {},
      means: {},
    },
  };
  const zero = { ok: 0, rewrite_rescued_it: 0, rewrite_not_needed: 0, rewrite_lost_it: 0, retriever_lost_it: 0 };
  const outcome = (query: string, rank: number | null, hit: number) => ({
    query,
    rank,
    scores: { retrieval_hit_at_k: hit },
  });
  const skipped = turnOf(fanout, "en-skipped-001#0");
  const on = {
    ...fanout,
    turns: fanout.turns.map((t) =>
      t === cut
        ? {
            ...t,
            queries: {
              attribution: "rewrite_lost_it",
              graph: outcome(`${t.user} (condensed)`, 2, 0),
              raw: outcome(t.user, 1, 1),
              standalone: outcome(HOSTILE_REASON, 1, 1),
            },
            counterfactualCalls: 2,
          }
        : t === skipped
          ? { ...t, queriesOff: { reason: "no_retrieval", detail: HOSTILE_REASON } }
          : t,
    ),
    queryAttribution: {
      enabled: true,
      turns: 1,
      withStandalone: 1,
      counts: { ...zero, rewrite_lost_it: 1 },
      splits: { position: { "1": { ...zero, rewrite_lost_it: 1 } } },
      means: { graph: { retrieval_hit_at_k: { mean: 0, n: 1, nCases: 1 } } },
      retrieverCalls: 2,
      unattributed: { no_retrieval: 1 },
    },
    // A --repeat run's gate says how baseline drops were tested; the page says it as the table does.
    gate: { ...fanout.gate!, dropTest: { method: "repeat-bootstrap", level: 0.95, description: DROP_TEST } },
  };
  for (const [name, r] of [
    ["attr-off", off],
    ["attr-on", on],
  ] as const) {
    await writeFile(at(`${name}.json`), JSON.stringify(r));
    const x = await runCli(["report", at(`${name}.json`), "--out", `html:${at(`${name}.html`)}`]);
    expect(x.exitCode, x.stderr).toBe(0);
  }
}, 120_000);

afterAll(() => rm(dir, { recursive: true, force: true }));

const DROP_TEST = "one-sided 95% repeat bootstrap of each drop (a written test description)";

describe.skipIf(noBrowser)("retrace eval --graph --html: the file", () => {
  it("embeds the report JSON, and `retrace report` of that JSON gives the same page (only the name shown differs)", async () => {
    const evalPage = await embedded("fanout.html");
    const reportPage = await embedded("from-report.html");
    expect(evalPage.run.report).toEqual(fanout);
    expect([evalPage.run.name, reportPage.run.name]).toEqual(["fanout.html", "fanout.json"]);
    expect({ ...reportPage, run: { ...reportPage.run, name: "" } }).toEqual({
      ...evalPage,
      run: { ...evalPage.run, name: "" },
    });
    const [x, y] = await Promise.all(
      ["fanout.html", "from-report.html"].map((f) => readFile(path.join(dir, f), "utf8")),
    );
    const shell = (s: string) => s.replace(/<title>[^<]*<\/title>/, "").replace(DATA_ELEMENT, "");
    expect(shell(x!)).toBe(shell(y!));
  });

  it("the report JSON holds the turns the page must label (checked here, so the page checks below mean something)", () => {
    // es-lock-001#0: its gold in no captured list at all → not retrieved.
    const es = turnOf(fanout, "es-lock-001#0");
    expect(es.captured?.topLevelRuns).toBe(3);
    expect(listedIds(es).has("es-congelar-tarjeta")).toBe(false);
    // en-cut-001#0: its gold listed 2nd by the question's call, outside the top-1 → cut at k.
    const cut = turnOf(fanout, "en-cut-001#0");
    expect(cut.captured?.stages[0]?.ids).toEqual(["refund-timelines", "card-freeze"]);
    expect(cut.retrievedIds).toEqual(["refund-timelines"]);
    expect(turnOf(fanout, "en-skipped-001#0").noRetrieval).toBe(true);
    expect(turnOf(fanout, "en-error-001#0").error).toBe("the search backend exploded");
    // steps-agent: step 1 (the pre-search) not scored, step 2 (two parallel calls with child runs) scored.
    const s = turnOf(steps, "en-steps-001#0");
    expect(s.captured).toMatchObject({
      topLevelRuns: 3,
      steps: 2,
      retrievers: [HOSTILE_RETRIEVER, HOSTILE_RETRIEVER],
      unknownIds: [HOSTILE_ID],
    });
    expect(s.captured!.unscored!.map((l) => [l.key, l.role, l.step])).toEqual([["KeywordRetriever#5", "final", 1]]);
    expect(new Set(s.captured!.stages.map((l) => l.step))).toEqual(new Set([2]));
    expect(steps.run.graph?.retrievers).toEqual([HOSTILE_RETRIEVER]);
  });
});

describe.each(BROWSERS)("in $label", (target) => {
  let driver: BrowserDriver | undefined;
  const open = (file: string) => driver!.open(path.join(dir, file));
  const openTurn = async (page: BrowserPage, id: string) => {
    await page.click('button[data-tab="turns"]');
    await page.click(`table.turns tbody tr[data-turn="${id}"]`);
  };
  const lostAt = (page: BrowserPage, gold: string) =>
    page.evalAll(`.turnview table.goldranks tr[data-gold="${gold}"] td[data-cut]`, (tds) =>
      tds.map((td) => [td.getAttribute("data-cut"), td.textContent]),
    );

  beforeAll(async () => {
    if (target.skipReason !== null) return;
    driver = await launchDriver(target);
  }, 120_000);
  afterAll(async () => {
    await driver?.close();
  });

  describe.skipIf(target.skipReason !== null)("retrace eval --graph --html", () => {
    it("names the graph, its captured retrievers, the id key and the retrieval-call mode in the header; the funnel names no dense or BM25 branch", async () => {
      const page = await open("fanout.html");
      const header = await page.evalAll('header .runline[data-field="graph"]', (ds) => ds.map((d) => d.textContent));
      const g = fanout.run.graph!;
      expect(header).toContain(`graph: ${g.file}#graph`);
      // The run line names the run's source, not an empty embedder: a graph ran none of retrace's.
      const runLine = await page.text("header .runline:not([data-field])");
      expect(runLine).toContain("source=graph");
      expect(runLine).not.toContain("embedder=");
      expect(header).toContain(
        `captured retriever(s): KeywordRetriever  id key: ${g.idKey}  retrieval call scored: last`,
      );
      expect(header.join("\n")).toMatch(
        /retriever calls: 2 of 2 turns with a retrieval made several \(2 with calls in parallel, 0 with several steps\); scored per turn: the last step/,
      );
      await page.click('button[data-tab="funnel"]');
      const funnel = (await page.text('[data-panel="funnel"]')) ?? "";
      expect(funnel).not.toMatch(/dense|BM25/);
      expect(
        await page.evalAll('[data-panel="funnel"] table.funnel tbody th', (ths) => ths.map((th) => th.textContent)),
      ).toEqual(["scored calls", "final top-k"]);
      // The report's funnel (fanout.funnel), as counts: n counts the gold-bearing turns scored (errors left out), the one that made no retriever run included.
      expect(await page.text('td[data-funnel="all:scored"] .mean')).toBe("1");
      expect(await page.text('td[data-funnel="all:final"] .mean')).toBe("0");
      expect(await page.text('td[data-funnel="all:scored"] .ci')).toBe("of 3 (33.3%)");
      expect(fanout.funnel?.stages.map((s) => [s.stage, s.present, s.n])).toEqual([
        ["scored", 1, 3],
        ["final", 0, 3],
      ]);
      // The errored and no-retrieval turns, counted and listed, with the warnings.
      await page.click('button[data-tab="summary"]');
      const notes = (await page.text('[data-section="graph-notes"]')) ?? "";
      expect(notes).toContain(
        'turn errors (the graph run threw, or was given up at the run.turnTimeout deadline or stalled; not scored, not counted as misses): 1\n  en-error-001#0 en  "the search backend exploded"',
      );
      expect(notes).toContain(
        "no retrieval on a gold-bearing turn (scored as a miss: hit, recall, nDCG 0): 1\n  en-skipped-001#0 en",
      );
      expect(notes).toContain("warning: locale es-419: its turns called a retriever but retrieved no card of es-419");
      expect(page.events).toEqual([]);
      await page.close();
    });

    it("labels a gold card no retriever call listed 'not retrieved', and one a call listed below k 'cut at k'", async () => {
      const page = await open("fanout.html");
      await openTurn(page, "es-lock-001#0");
      expect(await lostAt(page, "es-congelar-tarjeta")).toEqual([
        ["retrieval", "not retrieved (no retriever call listed it)"],
      ]);
      await openTurn(page, "en-cut-001#0");
      expect(await lostAt(page, "card-freeze")).toEqual([["final", "cut at k"]]);
      // The gold table's columns are the captured calls, each with the gold's rank (2nd in the first call).
      const ranks = await page.evalAll('.turnview table.goldranks tr[data-gold="card-freeze"] td[data-stage]', (tds) =>
        tds.map((td) => [td.getAttribute("data-stage"), td.textContent]),
      );
      expect(ranks).toEqual([
        ["KeywordRetriever", "2"],
        ["KeywordRetriever#2", "—"],
        ["KeywordRetriever#3", "—"],
        ["final", "—"],
      ]);
      await openTurn(page, "en-skipped-001#0");
      expect(await lostAt(page, "card-freeze")).toEqual([["retrieval", "no retrieval"]]);
      expect(await page.text('.turnview [data-field="retrieval"]')).toBe(
        "retrieval: no retrieval (the turn made no retriever run); a gold-bearing turn: scored as a miss",
      );
      await openTurn(page, "en-error-001#0");
      expect(await page.text('.turnview [data-field="error"]')).toBe(
        "error: the graph run threw: the search backend exploded",
      );
      expect(page.events).toEqual([]);
      await page.close();
    });

    it("shows the turn's per-call lists under their retrieval step, as the report JSON holds them", async () => {
      const page = await open("fanout.html");
      await openTurn(page, "en-cut-001#0");
      const t = turnOf(fanout, "en-cut-001#0");
      const shown = await page.evalAll(".turnview .calls .step table[data-list]", (ts) =>
        ts.map((tb) => ({
          key: tb.getAttribute("data-list"),
          scored: tb.getAttribute("data-scored"),
          ids: [...tb.querySelectorAll("tbody tr td:nth-child(2)")].map((td) => td.textContent),
        })),
      );
      expect(shown).toEqual(
        t.captured!.stages.map((s) => ({
          key: s.key,
          scored: "true",
          ids: s.ids.map((id) => (id === "card-freeze" ? `★ ${id}` : id)),
        })),
      );
      expect(
        await page.evalAll(".turnview .calls .step", (ss) =>
          ss.map((s) => [
            s.getAttribute("data-step"),
            s.getAttribute("data-scored"),
            s.querySelector("h4")?.textContent,
          ]),
        ),
      ).toEqual([["1", "true", "Step 1 of 1: scored (3 calls overlapping in time)"]]);
      expect(await page.text('.turnview [data-field="retrieval"]')).toBe(
        "retrieval: captured from retriever callbacks: 3 top-level calls in 1 step (calls overlapping in time are one step); scored: 3 (KeywordRetriever, KeywordRetriever, KeywordRetriever)",
      );
      // Not this report's old note about missing per-stage lists.
      expect(await page.text(".turnview")).not.toMatch(/no per-stage lists/);
      expect(page.events).toEqual([]);
      await page.close();
    });

    it("shows which step --retrieval-call scored: the pre-search step not scored, the fan-out step scored with its child runs", async () => {
      const page = await open("steps.html");
      await openTurn(page, "en-steps-001#0");
      const t = turnOf(steps, "en-steps-001#0");
      const blocks = await page.evalAll(".turnview .calls .step", (ss) =>
        ss.map((s) => ({
          step: s.getAttribute("data-step"),
          scored: s.getAttribute("data-scored"),
          lists: [...s.querySelectorAll("table[data-list]")].map(
            (tb) => `${tb.getAttribute("data-role")} ${tb.getAttribute("data-list")}`,
          ),
        })),
      );
      expect(blocks).toEqual([
        { step: "1", scored: "false", lists: t.captured!.unscored!.map((l) => `${l.role} ${l.key}`) },
        { step: "2", scored: "true", lists: t.captured!.stages.map((l) => `${l.role} ${l.key}`) },
      ]);
      expect(blocks[1]!.lists.filter((l) => l.startsWith("child "))).toHaveLength(4);
      expect(await page.text('.turnview .step[data-step="1"] h4')).toBe("Step 1 of 2: not scored (1 call)");
      expect(await page.text('.turnview .step[data-step="2"] h4')).toBe(
        "Step 2 of 2: scored (2 calls overlapping in time)",
      );
      expect(await page.text('.turnview [data-field="unknown-ids"]')).toBe(
        `Unknown ids (no card of the KB or catalog; misses): ${HOSTILE_ID}`,
      );
      expect(page.events).toEqual([]);
      await page.close();
    });

    it("turn view: each scored document with rank, id and text; what --graph does not read instead of 'Citations: none'; each comment once; the turn labelled caseId#N", async () => {
      const page = await open("fanout.html");
      const t = turnOf(fanout, "en-cut-001#0");
      // The JSON holds the scored top-k's documents, in rank order, whose text the graph's answer quotes (its answer node joins the page contents).
      const docs = t.captured!.documents!;
      expect(docs.map((d) => [d.rank, d.id])).toEqual(t.trace!.retrievedIds.map((id, i) => [i + 1, id]));
      for (const d of docs) {
        expect(d.text.length).toBeGreaterThan(0);
        if (d.truncated === undefined) expect(t.answer).toContain(d.text);
      }
      await openTurn(page, "en-cut-001#0");
      const shown = await page.evalAll(".turnview table.documents tbody tr", (trs) =>
        trs.map((tr) => [
          tr.querySelector('[data-field="rank"]')?.textContent,
          tr.querySelector('[data-field="id"]')?.textContent,
          tr.querySelector('[data-field="text"]')?.textContent,
        ]),
      );
      expect(shown).toEqual(
        docs.map((d) => [
          String(d.rank),
          t.gold.includes(d.id) ? `\u2605 ${d.id}` : d.id,
          d.truncated ? `${d.text} \u2026 (cut)` : d.text,
        ]),
      );
      // Citations are not read for --graph: the page says so, and never "Citations: none".
      const view = (await page.text(".turnview")) ?? "";
      expect(view).not.toMatch(/Citations: none/);
      expect(await page.evalAll('.turnview [data-field="citations"]', (ps) => ps.length)).toBe(0);
      expect(await page.text('.turnview [data-field="not-read"]')).toBe(
        "Not read for a --graph run: citations and the answer-side checks (citation_coverage, citation_correctness, refusal_correctness, groundedness without a judge (run.judge of --config)); your graph's citations are not retrace's to interpret.",
      );
      expect(fanout.judge).toBeUndefined();
      expect(t.results.some((x) => x.key.startsWith("citation_") || x.key === "refusal_correctness")).toBe(false);
      // The retrieval evaluator's one comment on its keys, shown once across their rows.
      const comments = await page.evalAll(".turnview table.metrics td.comment", (tds) =>
        tds.map((td) => [td.textContent, td.getAttribute("rowspan")]),
      );
      const distinct = [...new Set(t.results.map((r) => r.comment ?? ""))];
      expect(t.results.length).toBeGreaterThan(distinct.length);
      expect(comments.map((c) => c[0])).toEqual(distinct);
      expect(comments.reduce((n, c) => n + Number(c[1] ?? 1), 0)).toBe(t.results.length);
      expect(
        await page.evalAll(".turnview table.metrics tbody tr", (trs) => trs.map((tr) => tr.getAttribute("data-key"))),
      ).toEqual(t.results.map((r) => r.key));
      // The turn as the report keys it (caseId#N, 0-based), not "user 0".
      expect(await page.text(".turnview .msg.current .who")).toBe(`${t.caseId}#${t.turn} user`);
      expect(view).not.toMatch(/user \d/);
      // A turn with no retriever run has no documents to show.
      await openTurn(page, "en-skipped-001#0");
      expect(await page.evalAll(".turnview table.documents", (ts) => ts.length)).toBe(0);
      expect(page.events).toEqual([]);
      await page.close();
    });

    it("summary: no golden column when every case is golden, no by-locale table for one locale, the missed turns first; the Turns table's top-k column", async () => {
      // steps: every case golden, one locale (en); fanout: every case golden, two locales.
      for (const [file, r] of [
        ["steps.html", steps],
        ["fanout.html", fanout],
      ] as const) {
        const page = await open(file);
        expect(Object.keys(r.splits.kind)).toEqual(["golden"]);
        expect(r.turns.every((t) => t.kind === "golden")).toBe(true);
        expect(
          await page.evalAll('table.summary[data-split="kind"] thead th', (ths) => ths.map((th) => th.textContent)),
        ).toEqual(["metric", "all"]);
        expect(await page.evalAll('[data-panel="summary"] td[data-group="golden"]', (tds) => tds.length)).toBe(0);
        const locales = Object.keys(r.splits.locale);
        const localeTables = await page.evalAll('table.summary[data-split="locale"]', (ts) => ts.length);
        expect(localeTables).toBe(locales.length === 1 ? 0 : 1);
        const repeatsNote = (await page.text('[data-field="summary-repeats"]')) ?? "";
        expect(repeatsNote).toContain("every case is golden");
        expect(repeatsNote.includes(`one locale (${locales[0]})`)).toBe(locales.length === 1);
        // The Summary tab's first block: the missed turns (hit@k 0 in the JSON), in dataset order, with their top-k.
        const first = await page.evalAll('[data-panel="summary"] .summary-block > *', (xs) =>
          xs[0]?.getAttribute("data-section"),
        );
        expect(first).toBe("missed");
        const missed = r.turns.filter(
          (t) => t.results.find((x) => x.key === "retrieval_hit_at_k")?.score === 0 && t.error === undefined,
        );
        const topK = (t: TurnReport) => (t.trace ? t.trace.retrievedIds.join(", ") || "(none)" : "\u2014");
        expect(
          await page.evalAll('[data-section="missed"] tbody tr', (trs) =>
            trs.map((tr) => [tr.getAttribute("data-turn"), tr.querySelector('[data-field="topk"]')?.textContent]),
          ),
        ).toEqual(missed.map((t) => [`${t.caseId}#${t.turn}`, topK(t)]));
        await page.click('button[data-tab="turns"]');
        const rows = await page.evalAll("table.turns tbody tr", (trs) =>
          trs.map((tr) => [tr.getAttribute("data-turn"), tr.querySelector('td[data-col="topk"]')?.textContent]),
        );
        expect(new Map(rows as [string, string][])).toEqual(
          new Map(r.turns.map((t) => [`${t.caseId}#${t.turn}`, topK(t)])),
        );
        expect(page.events).toEqual([]);
        await page.close();
      }
      expect(
        fanout.turns.filter((t) => t.results.find((x) => x.key === "retrieval_hit_at_k")?.score === 0).length,
      ).toBeGreaterThan(0);
    });

    it("says query attribution was off with the report's reason (Conversation tab, turn view), and draws the funnel statistics the report has", async () => {
      const page = await open("fanout.html");
      await page.click('button[data-tab="conversation"]');
      // Today's --graph reports have no queryAttribution section: the page gives the words of the text and markdown reports.
      const offText =
        fanout.queryAttribution === undefined
          ? "off: counterfactual retrieval is not yet implemented for --graph (docs/query-attribution.md)"
          : `off: ${fanout.queryAttribution.reason ?? ""}`;
      expect(fanout.queryAttribution?.enabled ?? false).toBe(false);
      expect(await page.text('[data-field="attribution-off"]')).toBe(`Query attribution ${offText}`);
      expect(await page.evalAll("table.attribution", (t) => t.length)).toBe(0);
      await openTurn(page, "en-cut-001#0");
      expect(await page.text('.turnview [data-field="queries-off"]')).toBe(`Query attribution ${offText}`);
      // The funnel statistics: whatever stages the report measured, with their intervals.
      await page.click('button[data-tab="funnel"]');
      const f = fanout.funnel;
      if (f === undefined)
        expect(await page.text('[data-panel="funnel"] [data-section="funnel-stats"] p.vac')).toMatch(
          /No stage funnel statistics/,
        );
      else {
        const shown = await page.evalAll(
          '[data-panel="funnel"] table.funnelstats td[data-funnel-stat^="all:"]',
          (tds) =>
            tds.map((td) => [
              td.getAttribute("data-funnel-stat"),
              td.querySelector(".mean")?.textContent,
              td.querySelector(".n")?.textContent,
            ]),
        );
        expect(shown).toEqual(f.stages.map((s) => [`all:${s.stage}`, s.share.toFixed(3), `n=${s.n}`]));
      }
      expect(page.events).toEqual([]);
      await page.close();
    });

    it("draws a --graph report's query attribution from the same data shape as retrace's own graph (off with a reason; on: counts and the three queries)", async () => {
      const off = await open("attr-off.html");
      await off.click('button[data-tab="conversation"]');
      expect(await off.text('[data-field="attribution-off"]')).toBe(`Query attribution off: ${HOSTILE_REASON}`);
      expect(await off.evaluate(() => (globalThis as unknown as { __pwned?: unknown }).__pwned)).toBeUndefined();
      expect(off.events).toEqual([]);
      await off.close();
      const on = await open("attr-on.html");
      await on.click('button[data-tab="conversation"]');
      const rows = await on.evalAll("table.attribution tbody tr", (trs) =>
        trs.map((tr) => [
          tr.getAttribute("data-group"),
          tr.querySelector('[data-attr="n"]')?.textContent,
          tr.querySelector('[data-attr="rewrite_lost_it"]')?.textContent,
        ]),
      );
      expect(rows).toEqual([
        ["all", "1", "1"],
        ["1", "1", "1"],
      ]);
      await openTurn(on, "en-cut-001#0");
      const t = turnOf(fanout, "en-cut-001#0");
      const shown = await on.evalAll(".turnview [data-section=queries] [data-query]", (ds) =>
        ds.map((d) => [
          d.getAttribute("data-query"),
          d.querySelector('[data-field="text"]')?.textContent,
          d.querySelector('[data-field="rank"]')?.textContent,
        ]),
      );
      expect(shown).toEqual([
        ["raw", t.user, "1"],
        ["standalone", HOSTILE_REASON, "1"],
        ["graph", `${t.user} (condensed)`, "2"],
      ]);
      expect(await on.text('.turnview [data-field="attribution"]')).toBe("rewrite lost it");
      // The extra calls and the unattributed turns (--graph --counterfactual), a turn it could not attribute and why, and the drop test of the gate.
      await on.click('button[data-tab="conversation"]');
      expect(await on.text('[data-field="attribution-cost"]')).toBe(
        "counterfactual retriever calls: 2; gold-bearing turns not attributed: no retrieval 1",
      );
      await openTurn(on, "en-skipped-001#0");
      expect(await on.text('.turnview [data-field="queries-off"]')).toBe(
        `Not attributed (no retrieval): ${HOSTILE_REASON}`,
      );
      expect(await on.text('[data-field="drop-test"]')).toBe(`baseline drop test: ${DROP_TEST}`);
      expect(await on.evaluate(() => (globalThis as unknown as { __pwned?: unknown }).__pwned)).toBeUndefined();
      expect(on.events).toEqual([]);
      await on.close();
    });

    for (const csp of [true, false]) {
      it(`keeps a graph's retriever names, error messages and document ids as text${csp ? "" : " even without the CSP meta tag (escaping alone holds)"}`, async () => {
        const page = await open(csp ? "steps.html" : "steps-nocsp.html");
        const header = await page.evalAll('header .runline[data-field="graph"]', (ds) => ds.map((d) => d.textContent));
        expect(header.some((h) => h?.includes(`captured retriever(s): ${HOSTILE_RETRIEVER}  id key:`))).toBe(true);
        expect(header.some((h) => h?.includes(HOSTILE_ID))).toBe(true);
        expect(await page.text('[data-section="graph-notes"]')).toContain(JSON.stringify(HOSTILE_ERROR));
        await openTurn(page, "en-explode-001#0");
        expect(await page.text('.turnview [data-field="error"]')).toBe(`error: the graph run threw: ${HOSTILE_ERROR}`);
        await openTurn(page, "en-steps-001#0");
        const captions = await page.evalAll(".turnview .calls caption", (cs) => cs.map((c) => c.textContent));
        expect(captions).toContain(`${HOSTILE_RETRIEVER} (2)`);
        expect(await page.evalAll(".turnview .calls td.unknown", (tds) => tds.map((td) => td.textContent))).toContain(
          `${HOSTILE_ID} ?`,
        );
        const pwned = () => page.evaluate(() => (globalThis as unknown as { __pwned?: unknown }).__pwned);
        expect(await pwned()).toBeUndefined();
        expect(await page.evalAll("img", (imgs) => imgs.length)).toBe(0);
        expect(await page.evalAll("script", (s) => s.length)).toBe(2);
        expect(page.events).toEqual([]);
        await page.close();
      });
    }
  });
});
