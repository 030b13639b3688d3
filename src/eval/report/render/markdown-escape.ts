/**
 * Markdown from text retrace did not write (docs/reliability.md, "Hostile
 * ids in every output"): case queries, card and retrieved ids, a graph's
 * error text, split names. Every markdown renderer (the report,
 * src/eval/report/render/markdown.ts; the PR comment and so the step
 * summary, src/eval/report/render/pr-comment.ts) puts such text through one of
 * these, so it shows as the text it is and never becomes markdown or HTML:
 *
 * - `mdText`: a table cell, list item or heading; one line
 *   (a line break is shown as `\n`), control and bidi characters as `\uXXXX`
 *   (src/control-chars.ts), `\` `` ` `` `|` escaped with a backslash, `](`,
 *   `][` and `]:` broken (`]\(`), and `& < >` as entities, so no code span,
 *   link, image, reference definition, autolink, raw HTML or table break can
 *   start in it (emphasis, cosmetic, can);
 * - `mdCode`: an inline code span whose backtick fence is longer than any
 *   run of backticks inside (CommonMark), pipes escaped for GFM tables;
 * - `mdFence`: a fenced code block whose fence is longer than any run of
 *   backticks in its lines, so no line can close it.
 */
import { escapeControlChars, oneLineText } from "../../../control-chars.js";

/** Control and bidi characters as `\uXXXX`, line breaks and tabs as `\n` and `\t`: one visible line (src/control-chars.ts). */
const oneLine = oneLineText;

/** Text for a markdown table cell, list item or heading (see the module comment); `max` cuts it with `…`. */
export function mdText(s: string, max?: number): string {
  let t = oneLine(s);
  if (max !== undefined && t.length > max) t = `${t.slice(0, max - 1)}…`;
  return t
    .replace(/[\\`|]/g, "\\$&")
    .replace(/\](?=[([:])/g, "]\\") // no inline link, image, full reference or reference definition: `](`, `][`, `]:` broken
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;");
}

/** The longest run of backticks in `s`. */
function longestBacktickRun(s: string): number {
  let best = 0;
  for (const m of s.matchAll(/`+/g)) best = Math.max(best, m[0].length);
  return best;
}

/** `s` as an inline code span (see the module comment); `max` cuts it with `…`. */
export function mdCode(s: string, max?: number): string {
  let t = oneLine(s);
  if (max !== undefined && t.length > max) t = `${t.slice(0, max - 1)}…`;
  t = t.replace(/\|/g, "\\|"); // GFM splits table cells before code spans; `\|` shows as `|` inside the span
  const fence = "`".repeat(longestBacktickRun(t) + 1);
  const pad = t.startsWith("`") || t.endsWith("`") || t === "" ? " " : "";
  return `${fence}${pad}${t}${pad}${fence}`;
}

/** `lines` as a fenced code block (see the module comment), control and bidi characters as `\uXXXX`, each line kept a line. */
export function mdFence(lines: readonly string[]): string[] {
  const body = lines.flatMap((l) => escapeControlChars(l.replace(/\r\n?/g, "\n")).split("\n"));
  const fence = "`".repeat(Math.max(3, longestBacktickRun(body.join("\n")) + 1));
  return [fence, ...body, fence];
}
