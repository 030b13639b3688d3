/**
 * The script of the report and compare pages (docs/html-report.md), bundled
 * into their one inline script by scripts/build-browser.ts
 * (../client-bundle.generated.ts; the CSP pins its SHA-256). It unpacks the
 * page's data (../page-data.ts) and lays out what the report holds: every
 * number, interval, p and verdict comes from the data, worded by the server
 * side (../report-page.ts); the page tests and computes nothing itself.
 */
import type { PageData } from "../page-data.js";
import { comparePage } from "./compare.js";
import { startPage } from "./dom.js";
import { reportPage } from "./pages.js";
import { DATA, setData } from "./registry.js";

// ------------------------------------------------------------ start: unpack the data, then draw
// The data element holds the page's JSON, gzip-compressed, in base64 (docs/html-report.md, "Size").
// It is decoded with the browser's own DecompressionStream and read with JSON.parse: never as HTML.
const TOO_OLD =
  "This browser is too old to open this report: the report's data is compressed, and this browser has no DecompressionStream to unpack it. Open the file in Chromium 80 or later, Firefox 113 or later, or Safari 16.4 or later.";

startPage(
  TOO_OLD,
  (data) => {
    setData(data as PageData);
    if (DATA.kind === "compare") comparePage(DATA);
    else reportPage(DATA.run);
  },
  (reason) =>
    "This report's embedded data could not be unpacked (" +
    reason +
    "): the file may be truncated or damaged. Write it again with retrace.",
);
