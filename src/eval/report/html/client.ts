/**
 * The inline stylesheet and script of retrace's report and compare pages
 * (docs/html-report.md). The script is typed TypeScript (./browser/report.ts,
 * checked with DOM types by tsconfig.browser.json) bundled by
 * scripts/build-browser.ts into ./client-bundle.generated.ts; it unpacks the
 * page's data element (JSON, gzip, base64) with the browser's
 * DecompressionStream — or says the browser is too old — and builds the DOM
 * with createElement/textContent only: no innerHTML, no inline handlers, no
 * network. Each is one string, so its SHA-256 in the page's CSP is that of
 * the exact text shipped.
 */
export { CLIENT_JS } from "./client-bundle.generated.js";

export const CLIENT_CSS = String.raw`
:root { --fg:#1d2330; --muted:#5b6475; --line:#d9dde5; --bg:#ffffff; --soft:#f4f6f9; --hit:#1a7f37; --miss:#c62828; --gold:#a15c00; --goldbg:#fff4d6; --accent:#2457c5; }
* { box-sizing: border-box; }
body { margin:0; font: 13px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", sans-serif; color:var(--fg); background:var(--bg); }
header.top { padding:10px 18px 0; border-bottom:1px solid var(--line); background:var(--soft); }
header.top h1 { font-size:17px; margin:0 0 2px; }
header.top .runline { color:var(--muted); font-size:12px; margin-bottom:6px; overflow-wrap:anywhere; }
nav.tabs { display:flex; gap:2px; }
nav.tabs button { border:1px solid var(--line); border-bottom:none; background:#e9ecf2; padding:6px 14px; font:inherit; cursor:pointer; border-radius:6px 6px 0 0; color:var(--fg); }
nav.tabs button.active { background:var(--bg); font-weight:600; position:relative; top:1px; }
main { padding:12px 18px 40px; }
section.panel { display:none; }
section.panel.active { display:block; }
h2 { font-size:15px; margin:16px 0 6px; }
h3 { font-size:13px; margin:12px 0 4px; }
table { border-collapse:collapse; margin:4px 0 8px; }
th, td { border:1px solid var(--line); padding:3px 7px; text-align:left; vertical-align:top; }
th { background:var(--soft); font-weight:600; }
td.num, th.num { text-align:right; font-variant-numeric:tabular-nums; }
table.summary td.num { white-space:nowrap; }
table.summary td .ci, table.summary td .n, table.summary td .extra { display:inline; margin-left:0.45em; }
td.doctext { white-space:pre-wrap; overflow-wrap:anywhere; max-width:860px; font-size:12px; }
table.deltas td.num, table.comparison td.num { white-space:nowrap; }
.mean { font-weight:600; font-variant-numeric:tabular-nums; }
.ci, .n, .extra { color:var(--muted); font-size:11px; font-variant-numeric:tabular-nums; display:block; }
.vac { color:#8a6d00; font-style:italic; }
.muted { color:var(--muted); }
.note { color:var(--muted); font-size:12px; margin:2px 0; max-width:1100px; }
#app[data-state=loading] > p { margin:24px 18px; }
p.fatal { margin:24px 18px; font-size:15px; font-weight:600; color:var(--miss); max-width:760px; }
.hit { color:var(--hit); font-weight:600; }
.miss { color:var(--miss); font-weight:600; }
.charts { display:flex; flex-wrap:wrap; gap:14px; }
.chart { border:1px solid var(--line); border-radius:6px; padding:6px 8px; background:#fff; }
.chart .title { font-weight:600; font-size:12px; margin-bottom:2px; }
svg text { font: 11px system-ui, sans-serif; fill: var(--fg); }
svg .axis { stroke:#9aa3b2; stroke-width:1; }
svg .grid { stroke:#e6e9ef; stroke-width:1; }
svg .ci { stroke:var(--accent); stroke-width:3; stroke-linecap:round; opacity:.45; }
svg .dot { fill:var(--accent); }
svg .bar { fill:#7d9be0; }
svg .barlabel { font-size:11px; }
.filters { display:flex; gap:10px; align-items:center; flex-wrap:wrap; margin:6px 0; }
.filters label { color:var(--muted); }
.filters select, .filters input { font:inherit; padding:3px 5px; }
.filters input[type=search] { width:260px; }
table.turns { width:100%; table-layout:fixed; }
table.turns th { cursor:pointer; user-select:none; white-space:nowrap; overflow:hidden; text-overflow:ellipsis; }
table.turns th.sorted::after { content:" \25BE"; }
table.turns th.sorted.asc::after { content:" \25B4"; }
table.turns td { white-space:nowrap; overflow:hidden; text-overflow:ellipsis; }
table.turns tbody tr { cursor:pointer; }
table.turns tbody tr:hover { background:#eef3ff; }
button.link { border:none; background:none; color:var(--accent); cursor:pointer; font:inherit; padding:0; text-decoration:underline; }
.turnhead { display:flex; gap:12px; align-items:baseline; flex-wrap:wrap; }
.turnhead h2 { margin:4px 0; }
.badge { border-radius:10px; padding:1px 8px; font-size:11px; font-weight:600; border:1px solid var(--line); background:var(--soft); }
.badge.miss { background:#fde8e8; border-color:#f1b5b5; }
.badge.hit { background:#e3f4e8; border-color:#a9dcb7; }
.convo { border-left:3px solid var(--line); padding-left:10px; max-width:1100px; }
.msg { margin:4px 0; white-space:pre-wrap; overflow-wrap:anywhere; }
.msg .who { font-weight:600; color:var(--muted); margin-right:6px; }
.msg.current { background:#eef3ff; padding:3px 6px; border-radius:4px; }
.query { font-family: ui-monospace, "DejaVu Sans Mono", monospace; background:var(--soft); padding:4px 8px; border-radius:4px; white-space:pre-wrap; overflow-wrap:anywhere; max-width:1100px; }
.stages { display:flex; flex-wrap:wrap; gap:10px; align-items:flex-start; }
.stages table { font-size:12px; }
.stages caption { text-align:left; font-weight:600; padding:2px 0; }
tr.gold td { background:var(--goldbg); }
td.goldmark { color:var(--gold); font-weight:700; }
td.cut { color:var(--miss); font-weight:600; }
.answer { white-space:pre-wrap; overflow-wrap:anywhere; max-width:1100px; background:var(--soft); padding:6px 8px; border-radius:4px; }
.cols { display:grid; grid-template-columns: 1fr 1fr; gap:16px; }
.cols > div { min-width:0; }
.cols .stages table { font-size:11px; }
td.comment { font-size:11px; color:var(--muted); overflow-wrap:anywhere; max-width:640px; }
details pre { white-space:pre-wrap; overflow-wrap:anywhere; font-size:11px; }
pre.notes { white-space:pre-wrap; overflow-wrap:anywhere; font-size:12px; background:var(--soft); padding:6px 8px; border-radius:4px; max-width:1100px; }
.step { border-left:3px solid var(--line); padding:2px 0 4px 10px; margin:6px 0; }
.step.scored { border-left-color:var(--accent); }
.step.unscored { opacity:.8; }
.step h4 { font-size:12px; margin:2px 0 4px; }
td.unknown { color:var(--miss); }
.queries3 { display:grid; grid-template-columns: repeat(3, minmax(0, 1fr)); gap:10px; max-width:1100px; }
.queries3 > div { border:1px solid var(--line); border-radius:6px; padding:4px 8px; min-width:0; }
.queries3 h4 { font-size:12px; margin:2px 0 4px; }
.queries3 .query { max-width:none; }
.queries3 .rank { margin:4px 0 0; font-variant-numeric:tabular-nums; }
.legend { display:flex; gap:12px; flex-wrap:wrap; font-size:12px; margin:2px 0 6px; }
.legend span.sw { display:inline-block; width:12px; height:3px; margin-right:4px; vertical-align:middle; }
`;
