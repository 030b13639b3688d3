/**
 * The inline stylesheet and script of the labelling page (docs/labelling.md),
 * under the same rules as the report's (src/eval/report/html/client.ts): the
 * script is typed TypeScript (./browser/label.ts) bundled by
 * scripts/build-browser.ts into ./client-bundle.generated.ts; one string
 * each, so the CSP pins their SHA-256. The person's work is kept in
 * localStorage under a key holding the page's pool hash; Export downloads the
 * labelled cases as a data: URL (nothing leaves the browser).
 */
export { LABEL_JS } from "./client-bundle.generated.js";

export const LABEL_CSS = String.raw`
:root { --fg:#1d2330; --muted:#5b6475; --line:#d9dde5; --bg:#ffffff; --soft:#f4f6f9; --accent:#2457c5; --ok:#1a7f37; --warn:#a15c00; }
* { box-sizing: border-box; }
body { margin:0; font: 13px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", sans-serif; color:var(--fg); background:var(--bg); }
header.top { padding:8px 18px; border-bottom:1px solid var(--line); background:var(--soft); display:flex; gap:14px; align-items:center; flex-wrap:wrap; }
header.top h1 { font-size:16px; margin:0; }
.muted { color:var(--muted); }
.note { color:var(--muted); font-size:12px; margin:2px 0; }
p.fatal { margin:24px 18px; font-size:15px; font-weight:600; color:#c62828; max-width:760px; }
#app[data-state=loading] > p { margin:24px 18px; }
.layout { display:grid; grid-template-columns: 260px 1fr; min-height: calc(100vh - 48px); }
nav.cases { border-right:1px solid var(--line); padding:8px; overflow:auto; }
nav.cases button { display:block; width:100%; text-align:left; border:1px solid transparent; background:none; padding:4px 6px; font:inherit; cursor:pointer; border-radius:4px; overflow-wrap:anywhere; }
nav.cases button.current { border-color:var(--accent); background:#eef3ff; }
nav.cases button[hidden] { display:none; }
nav.cases .first { display:block; overflow:hidden; text-overflow:ellipsis; white-space:nowrap; }
nav.cases .cid { display:block; font-size:11px; color:var(--muted); overflow-wrap:anywhere; }
nav.cases .prog { display:block; font-size:11px; color:var(--muted); }
nav.cases .prog .ndcg-only { color:var(--warn); }
nav.cases button.done .prog { color:var(--ok); }
main { padding:10px 18px 40px; min-width:0; }
h2 { font-size:15px; margin:4px 0 6px; }
.convo { border-left:3px solid var(--line); padding-left:10px; max-width:1100px; }
.msg { margin:4px 0; white-space:pre-wrap; overflow-wrap:anywhere; }
.msg .who { font-weight:600; color:var(--muted); margin-right:6px; }
.msg.current { background:#eef3ff; padding:3px 6px; border-radius:4px; }
.msg.assistant { color:var(--muted); }
.convo details.earlier > summary { cursor:pointer; color:var(--muted); }
.searched { margin:2px 0; }
.searched .sys { font-family:inherit; font-weight:600; color:var(--muted); margin-right:6px; }
.gold { font-size:12px; margin:4px 0; }
.gold.relevance-only { color:var(--warn); font-weight:600; }
.query { font-family: ui-monospace, "DejaVu Sans Mono", monospace; background:var(--soft); padding:3px 8px; border-radius:4px; white-space:pre-wrap; overflow-wrap:anywhere; max-width:1100px; }
.keys { font-size:12px; color:var(--muted); margin:6px 0; }
kbd { border:1px solid var(--line); border-bottom-width:2px; border-radius:3px; padding:0 4px; font-size:11px; background:#fff; }
.expect.refuse { color:#c62828; font-weight:600; }
.card { border:1px solid var(--line); border-radius:6px; padding:6px 10px; margin:8px 0; max-width:1100px; }
.card.focus { border-color:var(--accent); box-shadow:0 0 0 2px #c9d7f6; }
.card .head { display:flex; gap:8px; align-items:baseline; flex-wrap:wrap; }
.card .title { font-weight:600; overflow-wrap:anywhere; }
.card .cid { color:var(--muted); font-size:11px; overflow-wrap:anywhere; }
.rank { font-size:11px; border:1px solid var(--line); border-radius:8px; padding:0 6px; background:var(--soft); }
.grades button, .cite { font:inherit; border:1px solid var(--line); background:#fff; border-radius:4px; padding:0 7px; cursor:pointer; margin-right:2px; }
.grades button.on { background:var(--accent); color:#fff; border-color:var(--accent); }
.cite.on { background:var(--ok); color:#fff; border-color:var(--ok); }
.suggest { font-size:12px; color:var(--warn); }
.suggest.confirmed { color:var(--muted); }
.passage { white-space:pre-wrap; overflow-wrap:anywhere; font-size:12px; margin:4px 0 0; }
mark { background:#fff1a8; color:inherit; }
input[type=search] { font:inherit; padding:3px 6px; width:220px; }
button.action { font:inherit; padding:3px 10px; cursor:pointer; }
`;
