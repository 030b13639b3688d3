/**
 * The answerer's figures on one part of the committed split (docs/holdout.md),
 * offline: every case of the part through the store-backed graph (real
 * HybridRetriever, in-memory dense index, built-in embedder, rule-based
 * answerer). Not a `*.bench.ts` file: run it by hand.
 *
 *   npx tsx bench/answerer-part.ts            # tune: totals AND every wrong turn (what tuning may look at)
 *   npx tsx bench/answerer-part.ts holdout    # holdout: totals only, never the turns (measured once, at the end)
 */
import path from "node:path";
import { HumanMessage } from "@langchain/core/messages";
import { buildGraph } from "../src/graph/build.js";
import { loadKnowledgeBase } from "../src/kb/cards.js";
import { loadCases } from "../src/kb/cases.js";
import { chunkKnowledgeBase } from "../src/kb/chunk.js";
import { defaultSplitFile, loadSplit, type SplitPart } from "../src/kb/split.js";
import { InMemoryDenseIndex } from "../src/retrieval/dense.js";
import { HashingEmbedder } from "../src/retrieval/embedders/builtin.js";
import { HybridRetriever } from "../src/retrieval/hybrid.js";

const part = (process.argv[2] ?? "tune") as SplitPart;
const kbDir = "kb";
const kb = await loadKnowledgeBase(kbDir);
const cases = await loadCases(path.join(kbDir, "eval", "cases.jsonl"), kb);
const split = await loadSplit(defaultSplitFile(kbDir), cases);
if (split === null) throw new Error("no split file");
const chunks = chunkKnowledgeBase(kb);
const embedder = new HashingEmbedder();
const retriever = new HybridRetriever({
  chunks,
  embedder,
  dense: await InMemoryDenseIndex.fromChunks(chunks, embedder),
});
const graph = buildGraph({ store: retriever, cards: kb });

const tally = new Map<string, [number, number]>();
const add = (key: string, ok: boolean) => {
  const t = tally.get(key) ?? [0, 0];
  tally.set(key, [t[0] + (ok ? 1 : 0), t[1] + 1]);
};
const wrong: string[] = [];
/** The cases that existed before the split (the rules had been fitted on all of them); later ones were written fresh. */
const ORIGINAL_CASES = 85;
const fresh = new Set(cases.slice(ORIGINAL_CASES).map((c) => c.id));
for (const c of cases) {
  if (split.partOf.get(c.id) !== part) continue;
  for (const [i, t] of c.turns.entries()) {
    const s = (await graph.invoke(
      { messages: [new HumanMessage(t.user)], locale: c.locale },
      { configurable: { thread_id: c.id } },
    )) as {
      refused: boolean;
      citedIds: string[];
    };
    const ok = s.refused === (t.expect === "refuse");
    add(`refusal ${c.locale} ${c.kind} expect=${t.expect}`, ok);
    if (c.kind === "adversarial" && t.expect === "refuse")
      add(`refusal adversarial expect=refuse, ${fresh.has(c.id) ? "fresh cases" : "pre-split cases"}`, ok);
    const gold = t.must_cite_one_of ?? [];
    if (t.expect === "answer" && gold.length > 0)
      add(
        `cites gold ${c.locale}`,
        s.citedIds.some((id) => gold.includes(id)),
      );
    if (!ok) wrong.push(`${c.id}#${i} expect=${t.expect} refused=${s.refused} ${JSON.stringify(t.user)}`);
  }
}
process.stdout.write(`part ${part}\n`);
for (const [k, [ok, n]] of [...tally].sort()) process.stdout.write(`  ${k}: ${ok}/${n}\n`);
if (part === "tune") for (const w of wrong) process.stdout.write(`  WRONG ${w}\n`);
