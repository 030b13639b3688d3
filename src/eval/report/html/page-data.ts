/**
 * The data the report and compare pages embed, as their browser script
 * (./browser/report.ts) reads it: the server side builds it against these
 * types (./report-page.ts `ReportPageData`, ./compare-page.ts
 * `ComparePageData`), so the page and the renderers cannot drift apart
 * unnoticed. Types only.
 */
import type { FunnelStageDiff } from "../funnel-stats.js";
import type { FunnelStage } from "../types.js";
import type { RegistryPageData, ReportPageData, RunPageData } from "./report-page.js";

export type { ReportPageData };

/** One paired comparison of a metric, as the compare page reads it (../comparison.ts `KeyComparison`). */
export interface PageKeyComparison {
  key: string;
  turns: "all" | "holdout";
  n: number;
  nCases: number;
  meanA: number;
  meanB: number;
  diff: number;
  ci95: [number, number] | null;
  unit: string;
  pValue: number;
  pAdjusted: number;
  familySize: number;
  significant: boolean;
  verdict: string;
}

/** A turn the compare page lists, with its index in A's and in B's embedded turns. */
export interface PageFlip {
  id: string;
  direction: string;
  a: number;
  b: number;
}

/** A turn whose hit@k held but whose recall@k or nDCG@k moved (../comparison.ts `MovedTurn`, its figures and wording as the comparison computed them). */
export interface PageShift extends Omit<PageFlip, "direction"> {
  hit: number;
  recall: number;
  ndcg: number;
  largest: number;
  change: "drop" | "gain";
}

/** The compare page's data (`renderHtmlComparison`). */
export interface ComparePageData {
  kind: "compare";
  registry: RegistryPageData;
  a: RunPageData;
  b: RunPageData;
  comparisons: PageKeyComparison[];
  method: { unit: string; seed: number; samples: number; test: string; correction: string };
  note: readonly string[];
  flips: PageFlip[];
  /** The comparison's flip counts (src/eval/gate/compare.ts), printed as they are. */
  flipCounts: { hitToMiss: number; missToHit: number };
  shiftThreshold: number;
  shifts: PageShift[];
  funnels: { a: FunnelStage[]; b: FunnelStage[]; diff: FunnelStageDiff[] } | null;
}

/** What the report script receives. */
export type PageData = ReportPageData | ComparePageData;
