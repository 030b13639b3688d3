// A plain .mjs consumer of the installed package (no TypeScript loader):
// a HybridRetriever over the exact in-memory dense index and BM25, one query,
// scored with the exported metric functions. Prints JSON for the test to check.
import { HashingEmbedder, HybridRetriever, InMemoryDenseIndex } from "retrace-eval/retrieval";
import { hitAtK, ndcgAtK, recallAtK } from "retrace-eval/metrics";
import * as root from "retrace-eval";

const chunks = [
  {
    id: "card-freeze#1",
    parentId: "card-freeze",
    locale: "en",
    title: "Freeze your card",
    section: "How",
    text: "Freeze your card from the app: open Cards, choose the card and tap Freeze. Unfreeze it the same way.",
  },
  {
    id: "card-freeze#2",
    parentId: "card-freeze",
    locale: "en",
    title: "Freeze your card",
    section: "When",
    text: "Freeze the card when you cannot find it; nobody can pay with a frozen card.",
  },
  {
    id: "refund-timelines#1",
    parentId: "refund-timelines",
    locale: "en",
    title: "Refund timelines",
    section: "How long",
    text: "Refunds reach your account in five to ten business days after the merchant sends them.",
  },
  {
    id: "duplicate-charges#1",
    parentId: "duplicate-charges",
    locale: "en",
    title: "Duplicate charges",
    section: "Charged twice",
    text: "If you were charged twice for one order, the second charge is usually a pending authorisation that drops off.",
  },
];
const embedder = new HashingEmbedder();
const dense = await InMemoryDenseIndex.fromChunks(chunks, embedder);
const retriever = new HybridRetriever({ chunks, embedder, dense });
const trace = await retriever.retrieve("how can I freeze my card?", { k: 2, locale: "en" });
const gold = ["card-freeze"];
process.stdout.write(
  JSON.stringify({
    retrievedIds: trace.retrievedIds,
    stages: Object.keys(trace.stages),
    hit: hitAtK(trace.retrievedIds, gold, 2),
    recall: recallAtK(trace.retrievedIds, gold, 2),
    ndcg: ndcgAtK(trace.retrievedIds, gold, 2),
    rootExportsRetrieveNode: typeof root.retrieveNode,
    rootExportsOpenSystem: typeof root.openSystem,
  }),
);
