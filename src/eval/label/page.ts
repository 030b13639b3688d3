/**
 * `retrace label --out html:`: the labelling page (docs/labelling.md), one
 * self-contained offline file in the report's shell (../report/html/page.ts:
 * the data embedded as gzip+base64 JSON, one inline script and style pinned by
 * the Content-Security-Policy, no network). Every text of the data — card
 * titles, passages, conversations — reaches the DOM as text only.
 */
import { renderPage, type PageAssets } from "../report/html/page.js";
import { LABEL_CSS, LABEL_JS } from "./client.js";
import type { LabelPageData } from "./pool.js";

export const LABEL_ASSETS: PageAssets = {
  script: LABEL_JS,
  style: LABEL_CSS,
  noscript: "This labelling page is drawn by its own inline script; enable JavaScript for this file.",
  loading: "Unpacking the cases to label\u2026",
};

/** The labelling page of `data`. */
export function renderLabelPage(data: LabelPageData): string {
  return renderPage(`retrace label: ${data.title}`, data, LABEL_ASSETS);
}
