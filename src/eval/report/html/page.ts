/**
 * The shell every HTML page of retrace shares (docs/html-report.md): one
 * self-contained document, the data embedded as gzip-compressed JSON in
 * base64 in a non-executable `<script type="application/octet-stream">`
 * (base64 has no `<`, `>` or `&`, so the HTML parser never sees markup from
 * the data; the page unpacks it with the browser's DecompressionStream and
 * JSON.parse, never as HTML), one inline script and one inline style allowed
 * by a Content-Security-Policy that lists their SHA-256 hashes and nothing
 * else (no network, no other script, no inline handler).
 */
import { createHash } from "node:crypto";
import { gzipSync } from "node:zlib";
import { redactSecrets } from "../../../redact.js";
import { CLIENT_CSS, CLIENT_JS } from "./client.js";

/** Escapes text for HTML character data and attribute values. */
export function escapeHtml(s: string): string {
  return s
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}

/** The zlib level of every page's embedded data (the maximum; fixed so the same data gives the same bytes). */
export const PAGE_GZIP_LEVEL = 9;

/**
 * The RFC 1952 OS byte written into every page's gzip header: 255, "unknown".
 * zlib writes the build platform's code there (3 on Unix, other values on
 * macOS and Windows), which would make the same data give different pages.
 */
export const GZIP_OS_UNKNOWN = 0xff;

/**
 * `value` as JSON (UTF-8), gzip-compressed at PAGE_GZIP_LEVEL, in base64: the
 * text of the page's data element. The gzip header carries no file name, no
 * comment, modification time 0 and OS byte GZIP_OS_UNKNOWN, so the same
 * value always gives the same text with the same zlib build (docs/html-report.md,
 * "Size"). Base64's alphabet (`A–Z a–z 0–9 + / =`) holds no character the
 * HTML parser treats as markup. Every secret of the process is redacted from
 * the JSON before it is compressed (src/redact.ts).
 */
export function embedData(value: unknown): string {
  // Compressed, the data would hide a secret from the file boundary's redaction (src/atomic.ts): redacted here, before (docs/reliability.md).
  const gz = gzipSync(Buffer.from(redactSecrets(JSON.stringify(value)), "utf8"), { level: PAGE_GZIP_LEVEL });
  // Header: ID1 ID2 CM FLG MTIME(4 bytes, little-endian) XFL OS. zlib's default header has FLG 0 and MTIME 0.
  if (gz[3] !== 0 || gz.readUInt32LE(4) !== 0)
    throw new Error("zlib wrote a gzip header with flags or a modification time");
  gz[9] = GZIP_OS_UNKNOWN;
  return gz.toString("base64");
}

function sha256(text: string): string {
  return `'sha256-${createHash("sha256").update(text, "utf8").digest("base64")}'`;
}

/** The Content-Security-Policy of a page whose only script and style are `script` and `style`. */
export function contentSecurityPolicy(script: string, style: string): string {
  return [
    "default-src 'none'",
    `script-src ${sha256(script)}`,
    `style-src ${sha256(style)}`,
    "img-src data:",
    "base-uri 'none'",
    "form-action 'none'",
  ].join("; ");
}

/** The inline script and style of a page, and what it says where scripts are off. */
export interface PageAssets {
  script: string;
  style: string;
  noscript: string;
  loading: string;
}

/** The report and compare pages' assets (./client.ts). */
export const REPORT_ASSETS: PageAssets = {
  script: CLIENT_JS,
  style: CLIENT_CSS,
  noscript: "This report is drawn by its own inline script; enable JavaScript for this file.",
  loading: "Unpacking the report\u2026",
};

/**
 * A complete page: `data` is what the client script renders (`data.kind`
 * selects the page); `assets`, the script and style (default the report's),
 * both pinned by the page's CSP.
 */
export function renderPage(title: string, data: unknown, assets: PageAssets = REPORT_ASSETS): string {
  return [
    "<!DOCTYPE html>",
    '<html lang="en">',
    "<head>",
    '<meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${escapeHtml(contentSecurityPolicy(assets.script, assets.style))}">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeHtml(title)}</title>`,
    `<style>${assets.style}</style>`,
    "</head>",
    "<body>",
    `<noscript><p>${escapeHtml(assets.noscript)}</p></noscript>`,
    `<div id="app" data-state="loading"><p class="note">${escapeHtml(assets.loading)}</p></div>`,
    `<script type="application/octet-stream" id="retrace-data" data-encoding="gzip+base64">${embedData(data)}</script>`,
    `<script>${assets.script}</script>`,
    "</body>",
    "</html>",
    "",
  ].join("\n");
}
