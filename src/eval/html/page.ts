/**
 * The shell every HTML page of retrace shares (docs/html-report.md): one
 * self-contained document, the data embedded as JSON in a
 * `<script type="application/json">` (never parsed as HTML: `<`, `>`, `&`,
 * U+2028 and U+2029 are written as \u escapes), one inline script and one
 * inline style allowed by a Content-Security-Policy that lists their SHA-256
 * hashes and nothing else (no network, no other script, no inline handler).
 */
import { createHash } from "node:crypto";
import { CLIENT_CSS, CLIENT_JS } from "./client.js";

/** Escapes text for HTML character data and attribute values. */
export function escapeHtml(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;");
}

/**
 * JSON safe inside a `<script type="application/json">` element: the HTML
 * parser can never see `</script>` or `<!--` in it, and JSON.parse of the
 * element's text gives back exactly `value`.
 */
export function embedJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, "\\u003c")
    .replace(/>/g, "\\u003e")
    .replace(/&/g, "\\u0026")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
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

/** A complete page: `data` is what the client script renders (`data.kind` selects the page). */
export function renderPage(title: string, data: unknown): string {
  return [
    "<!DOCTYPE html>",
    '<html lang="en">',
    "<head>",
    '<meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${escapeHtml(contentSecurityPolicy(CLIENT_JS, CLIENT_CSS))}">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeHtml(title)}</title>`,
    `<style>${CLIENT_CSS}</style>`,
    "</head>",
    "<body>",
    '<noscript><p>This report is drawn by its own inline script; enable JavaScript for this file.</p></noscript>',
    '<div id="app"></div>',
    `<script type="application/json" id="retrace-data">${embedJson(data)}</script>`,
    `<script>${CLIENT_JS}</script>`,
    "</body>",
    "</html>",
    "",
  ].join("\n");
}
