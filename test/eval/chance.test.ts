import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../src/errors.js";
import { buildReport } from "../../src/eval/report/aggregate.js";
import {
  chanceHit,
  chanceMrr,
  chanceNdcg,
  chancePrecision,
  chanceRecall,
  smallKbWarning,
} from "../../src/eval/measures/chance.js";
import { allEvaluators } from "../../src/eval/measures/evaluators.js";
import { chanceLevel, METRICS } from "../../src/eval/measures/metrics.js";
import { renderMarkdown, renderTable } from "../../src/eval/report/render.js";
import { K, ROWS, runInfo, turnReports } from "./report-fixture.js";

const L3 = Math.log2(3);

describe("chance levels, hand-computed", () => {
  it("hit@k = 1 − C(N−g, k)/C(N, k)", () => {
    expect(chanceHit(10, 1, 5)).toBeCloseTo(0.5, 12); // 1 − 9·8·7·6·5 / (10·9·8·7·6)
    expect(chanceHit(10, 2, 5)).toBeCloseTo(7 / 9, 12); // 1 − C(8,5)/C(10,5) = 1 − 56/252
    expect(chanceHit(3, 1, 5)).toBe(1); // k ≥ N: every card is retrieved
    expect(chanceHit(6, 5, 2)).toBe(1); // fewer non-gold cards than k
  });

  it("recall@k = min(k, N)/N; P@k = min(k, N)·g/(N·k)", () => {
    expect(chanceRecall(10, 1, 5)).toBe(0.5);
    expect(chanceRecall(10, 3, 5)).toBe(0.5);
    expect(chanceRecall(3, 1, 5)).toBe(1);
    expect(chancePrecision(10, 2, 5)).toBeCloseTo(0.2, 12); // 5·2/(10·5)
    expect(chancePrecision(3, 1, 5)).toBeCloseTo(0.2, 12); // 3 cards retrieved, one gold, divided by k = 5
  });

  it("nDCG@k = (g/N)·Σ_{r≤min(k,N)} 1/log2(r+1) / IDCG", () => {
    expect(chanceNdcg(4, 1, 2)).toBeCloseTo((1 / 4) * (1 + 1 / L3), 12);
    expect(chanceNdcg(4, 2, 2)).toBeCloseTo(0.5, 12); // (2/4)(1 + 1/log2 3) / (1 + 1/log2 3)
    expect(chanceNdcg(3, 3, 2)).toBeCloseTo(1, 12); // every card is gold
  });

  it("MRR@k = Σ (1/r)·P(first gold at r)", () => {
    expect(chanceMrr(3, 1, 3)).toBeCloseTo(11 / 18, 12); // (1 + 1/2 + 1/3)/3
    expect(chanceMrr(4, 2, 1)).toBeCloseTo(0.5, 12); // P(gold at rank 1) = 2/4
    expect(chanceMrr(4, 2, 4)).toBeCloseTo(13 / 18, 12); // 1·1/2 + (1/2)·(2/4·2/3) + (1/3)·(2/4·1/3·1)
  });

  it("equals the average of the real metric over every ranking of a small KB (N = 6, g = 2, k = 3)", () => {
    const cards = ["a", "b", "c", "d", "e", "f"];
    const gold = ["b", "e"];
    const perms: string[][] = [];
    const permute = (prefix: string[], rest: string[]) => {
      if (rest.length === 0) perms.push(prefix);
      rest.forEach((x, i) => permute([...prefix, x], [...rest.slice(0, i), ...rest.slice(i + 1)]));
    };
    permute([], cards);
    expect(perms.length).toBe(720);
    for (const m of METRICS) {
      const avg = perms.reduce((s, p) => s + (m.fn(p, gold, 3) as number), 0) / perms.length;
      expect(chanceLevel(m.key, 6, 2, 3)).toBeCloseTo(avg, 12);
    }
  });

  it("no chance level for non-retrieval keys; bad counts are errors", () => {
    expect(chanceLevel("refusal_correctness", 10, 1, 5)).toBeNull();
    expect(() => chanceHit(0, 1, 5)).toThrow(InvalidArgumentError);
    expect(() => chanceHit(3, 4, 5)).toThrow(InvalidArgumentError);
    expect(() => chanceHit(3, 1, 0)).toThrow(InvalidArgumentError);
  });

  it("warns when k is at least a third of a locale's cards", () => {
    expect(smallKbWarning("en", 16, 5)).toBeNull(); // 15 < 16
    expect(smallKbWarning("en", 15, 5)).toMatch(
      /^k=5 is at least a third of the 15 en cards: a random ranking already scores hit@5 = 0\.333/,
    );
    expect(smallKbWarning("en", 3, 5)).toContain("hit@5 = 1.000");
  });
});

describe("chance levels in the report", () => {
  // Fixture (k = 3), hit-bearing turns: g1#0 en g=2, g1#1 en g=1, g2#1 es-419 g=1, adv1#0 pt-BR g=1.
  // Cards: en 4, es-419 10, pt-BR 3.
  //   hit chance: g1#0 1 − C(2,3)/C(4,3) = 1; g1#1 1 − 3·2·1/(4·3·2) = 0.75; g2#1 1 − 9·8·7/(10·9·8) = 0.3; adv1#0 (k ≥ N) 1
  //   → all (1 + 0.75 + 0.3 + 1)/4 = 0.7625; en 0.875; es-419 0.3; pt-BR 1; golden (1 + 0.75 + 0.3)/3
  //   recall chance: 3/4, 3/4, 3/10, 1 → 0.7
  it("puts the turn-averaged chance level beside every retrieval aggregate, and warns for small locales", async () => {
    const evaluators = allEvaluators({ k: K });
    const r = buildReport({
      run: runInfo(),
      turns: await turnReports(ROWS, evaluators),
      evaluators,
      cardsPerLocale: { en: 4, "es-419": 10, "pt-BR": 3 },
    });
    expect(r.aggregates.retrieval_hit_at_k?.chance).toBeCloseTo(0.7625, 12);
    expect(r.aggregates.retrieval_recall_at_k?.chance).toBeCloseTo(0.7, 12);
    expect(r.splits.locale.en?.retrieval_hit_at_k?.chance).toBeCloseTo(0.875, 12);
    expect(r.splits.locale["es-419"]?.retrieval_hit_at_k?.chance).toBeCloseTo(0.3, 12);
    expect(r.splits.locale["pt-BR"]?.retrieval_hit_at_k?.chance).toBe(1);
    expect(r.splits.kind.golden?.retrieval_hit_at_k?.chance).toBeCloseTo(2.05 / 3, 12);
    expect(r.aggregates.refusal_correctness?.chance).toBeUndefined();
    expect(r.chance?.cardsPerLocale).toEqual({ en: 4, "es-419": 10, "pt-BR": 3 });
    expect(r.chance?.warnings.map((w) => w.split(":")[0])).toEqual([
      "k=3 is at least a third of the 4 en cards",
      "k=3 is at least a third of the 3 pt-BR cards",
    ]);

    // 0.7625 is stored just below 0.7625 in binary, so %.3f prints 0.762.
    const table = renderTable(r, { color: false });
    expect(table).toMatch(/^hit@3 +0\.750 \[\d\.\d{3}, \d\.\d{3}\] n=4 \(3 cases\) chance 0\.762/m);
    expect(table).toContain("warning: k=3 is at least a third of the 4 en cards");
    const md = renderMarkdown(r);
    expect(md).toMatch(/^\| hit@3 \| 0\.750 \| \[\d\.\d{3}, \d\.\d{3}\] | 4 \| 3 \| 0\.762 \|$/m);
    expect(md).toContain("## Warnings");
  });
});
