/**
 * The script of the labelling page (docs/labelling.md), bundled into its one
 * inline script by scripts/build-browser.ts (../client-bundle.generated.ts;
 * the CSP pins its SHA-256), under the report page's rules
 * (src/eval/report/html/browser/dom.ts): the data is unpacked from the page's
 * gzip+base64 element and read with JSON.parse; the DOM is built with
 * createElement/textContent only (no innerHTML, no inline handlers, no
 * network). The person's work is kept in localStorage under a key holding the
 * page's pool hash; Export downloads the labelled cases as a data: URL
 * (nothing leaves the browser).
 */
import { byId, el, startPage } from "../../report/html/browser/dom.js";
import type { LabelPageData } from "../pool.js";
import { accept, gradeTurn, nextTurn, restNotRelevant, step, toggleCite, toggleRefuse } from "./actions.js";
import { drawPage } from "./draw.js";
import { doExport } from "./export.js";
import { applySearch, matches, searchBox } from "./search.js";
import { caseAt, DATA, go, load, onRedraw, redraw, setData, storageOk } from "./state.js";

function onKey(e: KeyboardEvent): void {
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  const search = searchBox();
  if (e.target === search) {
    if (e.key === "Escape") {
      search.blur();
    }
    if (e.key === "Enter") {
      const q = search.value.trim().toLowerCase();
      for (let i = 0; i < DATA.cases.length; i++)
        if (matches(caseAt(i), q)) {
          search.blur();
          go(i, 0, 0);
          break;
        }
    }
    return;
  }
  const k = e.key;
  if (k === "0" || k === "1" || k === "2" || k === "3") gradeTurn(Number(k));
  else if (k === "c") toggleCite();
  else if (k === "x") restNotRelevant();
  else if (k === "r") toggleRefuse();
  else if (k === "a") accept();
  else if (k === "j") step(1);
  else if (k === "k") step(-1);
  else if (k === "n") nextTurn(1, false);
  else if (k === "p") nextTurn(-1, false);
  else if (k === "/") search.focus();
  else return;
  e.preventDefault();
}

function page(): void {
  const app = byId("app");
  app.textContent = "";
  const exportB = el("button", { type: "button", id: "export", cls: "action", text: "Export labelled cases" });
  exportB.addEventListener("click", doExport);
  const search = el("input", {
    type: "search",
    id: "search",
    placeholder: "search cases (/)",
    "aria-label": "search cases",
  });
  search.addEventListener("input", applySearch);
  app.appendChild(
    el("header", { cls: "top" }, [
      el("h1", { text: DATA.title }),
      el("span", {
        cls: "muted",
        text:
          "pool: top " +
          DATA.depth +
          " of " +
          DATA.systems.join(", ") +
          (DATA.judge !== null ? " \u00b7 judge " + DATA.judge : ""),
      }),
      el("span", { id: "progress" }),
      el("span", { id: "kappa", cls: "muted" }),
      search,
      exportB,
      el("a", { id: "export-link", cls: "muted" }),
      storageOk
        ? null
        : el("span", { cls: "note", text: "This browser keeps no storage for this file: export before closing it." }),
    ]),
  );
  app.appendChild(
    el("div", { cls: "layout" }, [
      el("nav", { cls: "cases", id: "cases", "aria-label": "cases" }),
      el("main", { id: "turn" }),
    ]),
  );
  document.addEventListener("keydown", onKey);
  redraw();
}

// ------------------------------------------------------------ start: unpack the data, then draw (as the report page)
const TOO_OLD =
  "This browser is too old to open this page: its data is compressed, and this browser has no DecompressionStream to unpack it. Open the file in Chromium 80 or later, Firefox 113 or later, or Safari 16.4 or later.";

startPage(
  TOO_OLD,
  (data) => {
    setData(data as LabelPageData);
    onRedraw(drawPage);
    load();
    page();
  },
  (reason) =>
    "This page's embedded data could not be unpacked (" +
    reason +
    "): the file may be truncated or damaged. Write it again with retrace label.",
);
