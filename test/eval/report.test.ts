import { describe, expect, it } from "vitest";
import { gate } from "../../src/eval/gate/gate.js";
import {
  metricLabel,
  missedTurns,
  renderJUnit,
  renderMarkdown,
  renderTable,
  reportToJSON,
  vacuousText,
  xmlEscape,
} from "../../src/eval/report/render.js";
import { parseAndFillReport } from "../../src/eval/report/derived-on-read.js";
import type { Aggregate, Report } from "../../src/eval/report/types.js";
import { fixtureReport, storelessReport } from "./report-fixture.js";

const ANSI = /\x1b\[[0-9;]*m/;

function fmtAgg(a: Aggregate): string {
  const ci = a.ci95 === undefined ? "(no CI)" : `[${a.ci95[0].toFixed(3)}, ${a.ci95[1].toFixed(3)}]`;
  const cases = a.nCases === undefined ? "" : ` (${a.nCases} case${a.nCases === 1 ? "" : "s"})`;
  const chance = a.chance === undefined ? "" : ` chance ${a.chance.toFixed(3)}`;
  return `${a.mean.toFixed(3)} ${ci} n=${a.n}${cases}${chance}`;
}

/** Every aggregate of the report (overall and every split group) as the renderers must print it. */
function allAggregateTexts(r: Report): string[] {
  const groups = [r.aggregates, ...Object.values(r.splits.kind), ...Object.values(r.splits.locale)];
  return groups.flatMap((g) => Object.values(g).map(fmtAgg));
}

/**
 * A crude XML well-formedness check: tags balance, attribute values are quoted and
 * hold no raw `<` or stray `&`, text holds no raw `<` or stray `&`, one root element.
 * Returns the element names in document order.
 */
function checkXml(xml: string): string[] {
  const names: string[] = [];
  const stack: string[] = [];
  let roots = 0;
  const body = xml.replace(/^<\?xml [^?]*\?>\n/, "");
  const entity = /&(?!(amp|lt|gt|quot|apos|#\d+|#x[0-9a-fA-F]+);)/;
  for (const tok of body.match(/<[^>]*>|[^<]+/g) ?? []) {
    if (!tok.startsWith("<")) {
      if (entity.test(tok)) throw new Error(`stray & in text: ${tok}`);
      if (stack.length === 0 && tok.trim() !== "") throw new Error(`text outside the root: ${tok}`);
      continue;
    }
    const close = /^<\/([A-Za-z_][\w.-]*)\s*>$/.exec(tok);
    if (close) {
      const open = stack.pop();
      if (open !== close[1]) throw new Error(`</${close[1]}> closes <${open}>`);
      continue;
    }
    const m = /^<([A-Za-z_][\w.-]*)((?:\s+[A-Za-z_][\w.-]*="[^"<]*")*)\s*(\/?)>$/.exec(tok);
    if (!m) throw new Error(`malformed tag: ${tok}`);
    for (const v of (m[2] ?? "").match(/"[^"]*"/g) ?? [])
      if (entity.test(v)) throw new Error(`stray & in attribute: ${v}`);
    names.push(m[1] as string);
    if (stack.length === 0) roots++;
    if (m[3] !== "/") stack.push(m[1] as string);
  }
  if (stack.length > 0) throw new Error(`unclosed: ${stack.join(",")}`);
  if (roots !== 1) throw new Error(`${roots} root elements`);
  return names;
}

function attr(tag: string, name: string): string | undefined {
  return new RegExp(`\\s${name}="([^"]*)"`).exec(tag)?.[1];
}

describe("reportToJSON", () => {
  it("is the report itself, versioned, and round-trips", async () => {
    const r = await fixtureReport();
    const text = reportToJSON(r);
    const parsed = JSON.parse(text) as Report;
    expect(parsed.schemaVersion).toBe(5);
    expect(parsed).toEqual(JSON.parse(JSON.stringify(r)));
    expect(text.endsWith("\n")).toBe(true);
  });
});

describe("labels and vacuous text", () => {
  it("labels metrics with k and marks recall as a lower bound", () => {
    expect(metricLabel("retrieval_hit_at_k", 5)).toBe("hit@5");
    expect(metricLabel("retrieval_recall_at_k", 5)).toBe("recall@5 (lower bound)");
    expect(metricLabel("retrieval_ndcg_at_k", 10)).toBe("nDCG@10");
    expect(metricLabel("citation_coverage", 5)).toBe("citation_coverage");
  });
  it("renders reasons as 'not measured (...)', and 'not run: ...' as is", () => {
    expect(vacuousText("no store")).toBe("not measured (no store)");
    expect(vacuousText("not run: no judge configured")).toBe("not run: no judge configured");
  });
  it("finds the missed turns: gold-bearing, hit@k = 0", async () => {
    expect(missedTurns(await fixtureReport()).map((t) => `${t.caseId}#${t.turn}`)).toEqual(["g2#1"]);
    expect(missedTurns(await storelessReport())).toEqual([]);
  });
});

describe("renderTable", () => {
  it("prints the embedder's fit apart from the store's write from timings.setup, and nothing without it", async () => {
    const r = await fixtureReport();
    expect(renderTable(r, { color: false })).not.toMatch(/^setup:/m);
    r.timings = {
      ...r.timings!,
      setup: { embedder: { kind: "lsa-fit", ms: 1510 }, store: { status: "ingested", writeMs: 250 } },
    };
    expect(renderTable(r, { color: false, width: 0 })).toMatch(
      /^setup: LSA fit 1\.51 s; store write 0\.25 s \(ingested: embed \+ write\)$/m,
    );
    r.timings = { ...r.timings, setup: { embedder: { kind: "lsa-fit", ms: 1510, chanceMs: 700 }, store: null } };
    expect(renderTable(r, { color: false, width: 0 })).toMatch(
      /^setup: LSA fit 1\.51 s \(chance baseline 0\.70 s\); no store write \(memory\)$/m,
    );
    r.timings = { ...r.timings, setup: { embedder: { kind: "lsa-load", ms: 20 }, store: null } };
    expect(renderTable(r, { color: false, width: 0 })).toMatch(
      /^setup: LSA state loaded 0\.02 s; no store write \(memory\)$/m,
    );
  });

  it("shows every aggregate (overall, golden/adversarial, each locale) with its n and interval", async () => {
    const r = await fixtureReport();
    const out = renderTable(r, { color: false });
    for (const text of allAggregateTexts(r)) expect(out).toContain(text);
    // Spot-check the hand-computed ones: hit@3 0.75 over n=4, refusal 6/7 over n=7.
    expect(out).toMatch(/^hit@3 +0\.750 \[\d\.\d{3}, \d\.\d{3}\] n=4 /m);
    expect(out).toMatch(/^refusal_correctness +0\.857 \[\d\.\d{3}, \d\.\d{3}\] n=7 /m);
    // Groups with no score for a key show n=0, not a number.
    expect(out).toMatch(/^citation_coverage .* — n=0$/m);
    expect(out).toMatch(/^metric +all +golden +adversarial$/m);
    expect(out).toMatch(/^metric +en +es-419 +pt-BR$/m);
  });

  it("names the embedder with its description, k, store and hashes", async () => {
    const out = renderTable(await fixtureReport(), { color: false });
    expect(out).toContain("embedder: builtin-hash-ngram-384 — character n-gram hashing: lexical-fuzzy, not semantic");
    expect(out.split("\n")[0]).toBe(
      "retrace  k=3  store=local  mode=hybrid  rerank=off  dataset=ds-1111  kb=kb-2222  1.2 s",
    );
    expect(out).toContain("turns: 7 (golden 5, adversarial 2); gold-bearing: 5");
  });

  it("labels recall@k a lower bound and states the interval method", async () => {
    const out = renderTable(await fixtureReport(), { color: false });
    expect(out).toMatch(/^recall@3 \(lower bound\) +0\.625/m);
    expect(out).toContain("recall@k is a conservative lower bound");
    expect(out).toContain("2000 resamples, seed 42");
  });

  it("lists the missed turns with case id, turn, query, gold, top-k and gold positions", async () => {
    const out = renderTable(await fixtureReport(), { color: false });
    expect(out).toContain("missed turns (no gold card in the top-3): 1");
    expect(out).toContain('  g2#1 es-419 golden  "reembolso <b>&\\"ya\\""');
    expect(out).toContain("    gold=[c] top3=[d, e, f]");
    expect(out).toContain("    gold by stage: c: bm25 —, fused —");
  });

  it("shows locale deltas with their p-values and verdicts", async () => {
    const out = renderTable(await fixtureReport(), { color: false });
    expect(out).toMatch(
      /^ {2}hit@3 locale es-419 −1\.000 vs en \(0\.000 n=1 \(1 case\) vs 1\.000 n=2 \(1 case\)\) p=1\.000 adj=1\.000 m=3 not significant$/m,
    );
    expect(out).toMatch(
      /^split deltas \(.*unit: case; Holm–Bonferroni within each metric.*adjusted p < 0\.05; intervals are unadjusted 95%\):$/m,
    );
  });

  it("store-less: vacuous metrics read 'not measured (no store)' in every column, never a number", async () => {
    const r = await storelessReport();
    const out = renderTable(r, { color: false });
    for (const label of ["hit@3", "recall@3 \\(lower bound\\)", "nDCG@3", "MRR@3", "P@3", "citation_correctness"]) {
      expect(out).toMatch(
        new RegExp(
          `^${label} +not measured \\(no store\\) +not measured \\(no store\\) +not measured \\(no store\\)$`,
          "m",
        ),
      );
    }
    expect(out).toMatch(/^groundedness +not run: no judge configured/m);
    expect(out).toContain("embedder: none (no retrieval ran)");
    expect(out).toContain("missed turns: not measured (no store)");
    // Rows in the canonical order even though the vacuous keys are listed separately.
    const rows = out
      .split("\n")
      .filter((l) => /^(hit|citation|refusal|groundedness)/.test(l))
      .slice(0, 5);
    expect(rows.map((l) => l.split(" ")[0])).toEqual([
      "hit@3",
      "citation_coverage",
      "citation_correctness",
      "refusal_correctness",
      "groundedness",
    ]);
  });

  it("shows the gate result and reasons", async () => {
    const r = await fixtureReport();
    expect(renderTable(r, { color: false })).toMatch(/gate: not evaluated\n$/);
    r.gate = gate(r, { minHit: 0.9 });
    const out = renderTable(r, { color: false });
    expect(out).toContain(
      "gate: FAIL (1 failure)\n  - [floor] retrieval_hit_at_k 0.750 (n=4) is below the floor 0.900\n",
    );
    r.gate = gate(r, {});
    expect(renderTable(r, { color: false })).toMatch(/gate: PASS \(no floor or baseline check was set\)\n$/);
    r.gate = gate(r, { minHit: { en: 0.9 } });
    expect(renderTable(r, { color: false })).toMatch(
      /gate: PASS\n {2}passed checks \(1\): --gate min-hit=en=0\.900 retrieval_hit_at_k\[en\]\n$/,
    );
  });

  it("uses ANSI colour only when asked", async () => {
    const r = await fixtureReport();
    r.gate = gate(r, { minHit: 0.9 });
    expect(renderTable(r, { color: false })).not.toMatch(ANSI);
    const colored = renderTable(r, { color: true });
    expect(colored).toMatch(ANSI);
    expect(colored).toContain("\x1b[31mFAIL\x1b[0m");
    // Same content once the codes are stripped.
    expect(colored.replace(/\x1b\[[0-9;]*m/g, "")).toBe(renderTable(r, { color: false }));
  });
});

describe("renderMarkdown", () => {
  it("renders the same numbers with n and interval, vacuous keys and missed turns", async () => {
    const r = await fixtureReport();
    r.gate = gate(r, { minHit: 0.9 });
    const md = renderMarkdown(r);
    expect(md).toContain("| hit@3 | 0.750 | [");
    expect(md).toMatch(/^\| hit@3 \| 0\.750 \| \[\d\.\d{3}, \d\.\d{3}\] \| 4 \| 3 \| {2}\|$/m);
    expect(md).toContain("| metric | mean | 95% CI (cases resampled) | n turns | n cases | chance |");
    expect(md).toContain("| groundedness | not run: no judge configured |  | 0 | 0 |  |");
    // Overall: one row per key with mean, interval, n turns and n cases in their own columns.
    for (const [key, a] of Object.entries(r.aggregates)) {
      const ci = a.ci95 === undefined ? "(no CI)" : `[${a.ci95[0].toFixed(3)}, ${a.ci95[1].toFixed(3)}]`;
      expect(md).toContain(`| ${a.mean.toFixed(3)} | ${ci} | ${a.n} | ${a.nCases} |`);
      expect(key).not.toBe("groundedness");
    }
    // Split cells use the same "mean [lo, hi] n=N" text as the table.
    const splitGroups = [...Object.values(r.splits.kind), ...Object.values(r.splits.locale)];
    for (const text of splitGroups.flatMap((g) => Object.values(g).map(fmtAgg))) {
      if (!md.includes(text)) expect.fail(`markdown lacks ${text}`);
    }
    expect(md).toContain("## Missed turns");
    // The query is escaped for markdown/HTML; the pipe of the table is intact.
    expect(md).toContain(
      '| `g2#1` | es-419 | golden | reembolso &lt;b&gt;&amp;"ya" | [c] | [d, e, f] | c: bm25 —, fused — |',
    );
    expect(md).toContain("**FAIL** (1 failure)");
    expect(md).toContain("recall@3 (lower bound)");
    expect(md).toContain("builtin-hash-ngram-384 — character n-gram hashing");
  });

  it("escapes pipes and shows newlines as \\n in table cells (the row stays one row)", async () => {
    const r = await fixtureReport();
    const t = r.turns.find((x) => x.caseId === "g2" && x.turn === 1);
    if (t === undefined) throw new Error("fixture changed");
    t.user = "a | b\nc";
    // Source `b\\nc`: an escaped backslash then `n`, which renders as the text `b\nc`.
    expect(renderMarkdown(r)).toContain("| a \\| b\\\\nc |");
  });

  it("store-less: says retrieval was not measured", async () => {
    const md = renderMarkdown(await storelessReport());
    expect(md).toContain("| hit@3 | not measured (no store) |  | 0 |");
    expect(md).toContain("- `retrieval_hit_at_k`: not measured (no store)");
    expect(md).toContain("Retrieval was not measured (no store).");
  });
});

describe("gate rendering", () => {
  it("markdown lists every check with its verdict; the table names the baseline tolerance and its source", async () => {
    const r = await fixtureReport();
    const { baselineFromReport } = await import("../../src/eval/gate/baseline.js");
    r.gate = gate(r, { minHit: { en: 0.9, "es-419": 0.5 } }, baselineFromReport(r));
    const md = renderMarkdown(r);
    expect(md).toContain("| check | scope | verdict | reason |");
    expect(md).toContain(
      "| --gate min-hit=es-419=0.500 | es-419 | fail | retrieval_hit_at_k[es-419] 0.000 (n=1) is below the floor 0.500 |",
    );
    expect(md).toContain("| --gate min-hit=en=0.900 | en | pass |");
    expect(md).toContain("| --gate max-drop=0.000 | pt-BR | pass |");
    const table = renderTable(r, { color: false });
    expect(table).toContain(
      "  baseline tolerance: 0 (default 0: same dataset, KB, k, configuration and store kind (deterministic pipeline))\n",
    );
    expect(table).toMatch(/passed checks \(17\): .*… and 11 more \(every check is in the JSON report's gate\.checks\)/);
  });
});

describe("renderJUnit", () => {
  /** The <testsuite> element named `name`, with its body. */
  const suite = (xml: string, name: string) =>
    new RegExp(`<testsuite name="${name.replace(/\./g, "\\.")}"[\\s\\S]*?</testsuite>`).exec(xml)?.[0] ?? "";

  it("is well-formed: a gate suite (one testcase per check) and a turn suite (one per gold-bearing turn)", async () => {
    const r = await fixtureReport();
    r.gate = gate(r, { minHit: { all: 0.9, en: 0.9 } }); // all 0.75 fails, en 1.0 passes
    const xml = renderJUnit(r);
    expect(xml.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites')).toBe(true);
    const names = checkXml(xml);
    // 2 gate checks + gold-bearing turns g1#0, g1#1, g2#1, adv1#0, g3#0 → 7 testcases (g2#0 and adv1#1 have no gold).
    expect(names.filter((n) => n === "testcase")).toHaveLength(7);
    expect(names.filter((n) => n === "failure")).toHaveLength(1);
    expect(names.filter((n) => n === "skipped")).toHaveLength(1);
    const suites = /<testsuites[^>]*>/.exec(xml)?.[0] ?? "";
    expect([attr(suites, "tests"), attr(suites, "failures"), attr(suites, "skipped")]).toEqual(["7", "1", "1"]);
    const failure = /<failure[^>]*>/.exec(suite(xml, "retrace.gate"))?.[0] ?? "";
    expect(attr(failure, "message")).toBe("retrieval_hit_at_k 0.750 (n=4) is below the floor 0.900");
  });

  it("a passing gate has no <failure>: the missed turn goes to system-out, escaped", async () => {
    const r = await fixtureReport();
    r.gate = gate(r, {});
    const xml = renderJUnit(r);
    checkXml(xml);
    expect(xml).not.toContain("<failure");
    const tc = /<testcase[^>]*g2#1[^>]*>[\s\S]*?<\/testcase>/.exec(xml)?.[0] ?? "";
    expect(attr(tc, "name")).toBe("g2#1: reembolso &lt;b&gt;&amp;&quot;ya&quot;");
    expect(attr(tc, "classname")).toBe("retrace.es-419.golden");
    expect(tc).toContain(
      "<system-out>miss (not gated): hit=0 recall=0 ndcg=0 mrr=0 precision=0 gold=[c] top3=[d,e,f]\nquery: reembolso &lt;b&gt;&amp;&quot;ya&quot;\n",
    );
    expect(xml).toContain('<property name="missedTurns" value="1"/>');
    // Not a single raw special character from the query survives.
    expect(xml).not.toContain('<b>&"');
  });

  it("a failed --gate max-flips check fails exactly the flipped turns and the check", async () => {
    const r = await fixtureReport();
    const { baselineFromReport } = await import("../../src/eval/gate/baseline.js");
    const b = baselineFromReport(r);
    b.perTurn["g2#1"] = { ...b.perTurn["g2#1"], retrieval_hit_at_k: 1 };
    r.gate = gate(r, { maxDrop: 1, maxFlips: 0 }, b);
    const xml = renderJUnit(r);
    checkXml(xml);
    const failing = [...xml.matchAll(/<testcase([^>]*)>\s*<failure/g)].map((m) => attr(m[1] ?? "", "name"));
    expect(failing).toEqual(["--gate max-flips=0: retrieval_hit_at_k", "g2#1: reembolso &lt;b&gt;&amp;&quot;ya&quot;"]);
    // passing with one flip allowed: no failure anywhere
    r.gate = gate(r, { maxDrop: 1, maxFlips: 1 }, b);
    expect(renderJUnit(r)).not.toContain("<failure");
  });

  it("marks a turn whose retrieval did not run as skipped, not failed", async () => {
    const xml = renderJUnit(await storelessReport());
    checkXml(xml);
    expect((xml.match(/<skipped message="not measured \(no store\)"\/>/g) ?? []).length).toBe(5);
    expect(xml).not.toContain("<failure");
  });

  it("xmlEscape escapes the five specials and shows characters XML 1.0 forbids as \\uXXXX text", () => {
    expect(xmlEscape(`<a href="x">&'`)).toBe("&lt;a href=&quot;x&quot;&gt;&amp;&apos;");
    expect(xmlEscape("a\u0000b\u001Fc\td\re")).toBe("a\\u0000b\\u001fc\td&#13;e");
    expect(xmlEscape("\uD800x")).toBe("\uFFFDx"); // lone surrogate
    expect(xmlEscape("😀")).toBe("😀"); // a proper pair is kept
  });
});

describe("one report, many renderings", () => {
  it("renderers do not mutate the report", async () => {
    const r = await fixtureReport();
    const copy = structuredClone(r);
    renderTable(r, { color: true });
    renderMarkdown(r);
    renderJUnit(r);
    reportToJSON(r);
    expect(r).toEqual(copy);
  });

  it("a changed aggregate shows up in every rendering (nothing is recomputed)", async () => {
    const r = await fixtureReport();
    r.aggregates.retrieval_hit_at_k = { mean: 0.123456, n: 77, ci95: [0.1, 0.2] };
    expect(renderTable(r, { color: false })).toContain("0.123 [0.100, 0.200] n=77");
    expect(renderMarkdown(r)).toContain("| hit@3 | 0.123 | [0.100, 0.200] | 77 |");
    expect(reportToJSON(r)).toContain('"n": 77');
  });
});

describe("delta verdicts (docs/statistics.md)", () => {
  const base = {
    key: "retrieval_ndcg_at_k",
    split: "locale",
    reference: "en",
    nGroup: 53,
    nReference: 104,
    nCasesGroup: 20,
    nCasesReference: 39,
    familySize: 3,
  };
  const deltas = [
    // Unadjusted interval excludes 0 (raw p < 0.05) but the Holm-adjusted p does not pass: the row says why.
    {
      ...base,
      group: "es-419",
      meanGroup: 0.698,
      meanReference: 0.803,
      diff: -0.105,
      ci95: [-0.204, -0.014] as [number, number],
      pValue: 0.021,
      pAdjusted: 0.063,
      significant: false,
    },
    {
      ...base,
      group: "pt-BR",
      meanGroup: 0.6,
      meanReference: 0.803,
      diff: -0.203,
      ci95: [-0.3, -0.1] as [number, number],
      pValue: 0.001,
      pAdjusted: 0.003,
      significant: true,
    },
    {
      ...base,
      group: "xx",
      meanGroup: 0.8,
      meanReference: 0.803,
      diff: -0.003,
      ci95: [-0.1, 0.09] as [number, number],
      pValue: 0.9,
      pAdjusted: 1,
      significant: false,
    },
  ];

  it("table: raw p, adjusted p and family size; 'not significant after Holm' with the reason when the unadjusted CI excludes 0", async () => {
    // A report written before deltas carried their verdict: worded when it is read (src/eval/report/derived-on-read.ts).
    const r = parseAndFillReport(JSON.parse(JSON.stringify({ ...(await fixtureReport()), deltas })), "older.json");
    const out = renderTable(r, { color: false });
    expect(out).toContain(
      "nDCG@3 locale es-419 −0.105 vs en (0.698 n=53 (20 cases) vs 0.803 n=104 (39 cases)) CI [−0.204, −0.014] p=0.021 adj=0.063 m=3 not significant after Holm (the unadjusted 95% CI excludes 0, raw p=0.021, but adjusted p=0.063 in a family of 3)",
    );
    expect(out).toMatch(/pt-BR −0\.203 .* CI \[−0\.300, −0\.100\] p=0\.001 adj=0\.003 m=3 significant$/m);
    expect(out).toMatch(/xx −0\.003 .* CI \[−0\.100, \+0\.090\] p=0\.900 adj=1\.000 m=3 not significant$/m);
  });

  it("markdown: one column each for raw p, adjusted p and family size", async () => {
    // A report written before deltas carried their verdict: worded when it is read (src/eval/report/derived-on-read.ts).
    const r = parseAndFillReport(JSON.parse(JSON.stringify({ ...(await fixtureReport()), deltas })), "older.json");
    const md = renderMarkdown(r);
    expect(md).toContain(
      "| metric | split | group | vs | diff | 95% CI | n turns | n cases | raw p | adjusted p | family size | verdict |",
    );
    expect(md).toContain(
      "| nDCG@3 | locale | pt-BR | en | −0.203 | [−0.300, −0.100] | 53 vs 104 | 20 vs 39 | 0.001 | 0.003 | 3 | significant |",
    );
    expect(md).toContain(
      "| 0.021 | 0.063 | 3 | not significant after Holm (the unadjusted 95% CI excludes 0, raw p=0.021, but adjusted p=0.063 in a family of 3) |",
    );
  });
});
