/** The JSON rendering of a Report (docs/architecture.md §7). */
import type { Report } from "../types.js";

/** The report as JSON text (carries `version`), pretty-printed, newline-terminated. */
export function reportToJSON(report: Report): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}

/**
 * Pieces are cut once they hold at least this many characters: 32 Ki, so
 * that a piece (and its UTF-8 bytes) stays under V8's large-object size
 * (128 KiB) and is freed by the young generation's collections; pieces of
 * 1 MiB went to the large-object space, which only a full collection
 * frees, and a 500 MB report's pieces piled up there until one ran
 * (docs/recorded-traces.md, "Scale").
 */
const PIECE_CHARS = 1 << 15;

/** `JSON.stringify(value, null, 2)` as it appears `depth` (1 or 2) levels deep (each line break indented by 2 × depth spaces). */
function nested(value: unknown, depth: 1 | 2): string | undefined {
  if (value === undefined || typeof value === "function" || typeof value === "symbol") return undefined; // left out, as JSON.stringify does
  if (typeof (value as { toJSON?: unknown } | null)?.toJSON === "function") {
    // toJSON may answer undefined (left out) and is called with the key: stringified as it stands, then re-indented.
    const text = JSON.stringify(value, null, 2) as string | undefined;
    return text === undefined ? undefined : text.replace(/\n/g, `\n${" ".repeat(2 * depth)}`);
  }
  // Stringified inside `depth` arrays, the value comes out indented as it is in the report; slicing the arrays' own
  // brackets off is a pass less over a turn's text than re-indenting each line (a million-span run writes 200,000 turns).
  const text = JSON.stringify(depth === 1 ? [value] : [[value]], null, 2);
  const open = depth === 1 ? 4 : 10; // "[\n  " or "[\n  [\n    "
  const close = depth === 1 ? 2 : 6; // "\n]" or "\n  ]\n]"
  return text.slice(open, text.length - close);
}

/**
 * `reportToJSON(report)` in pieces, for writing a large report without its
 * whole text in memory (a `--traces` run of a million spans: about 475 MB):
 * the concatenated pieces are exactly `reportToJSON(report)`. The top-level
 * properties are serialized one by one and a top-level array (`turns`)
 * element by element.
 *
 * Every piece but the first starts with `,\n` — the comma that separates
 * two top-level properties or two elements of a top-level array, outside any
 * string — which is what lets each piece be redacted on its own with the
 * same result as the whole text (src/redact.ts `redactSecretPieces`).
 */
export function* reportJSONPieces(report: Report): Generator<string> {
  const obj = report as unknown as Record<string, unknown>;
  let buf = "{";
  let first = true;
  // Cut before `sep` (which starts with ",\n") when the piece is full.
  const add = (sep: string, text: string): string | undefined => {
    let out: string | undefined;
    if (sep.startsWith(",\n") && buf.length >= PIECE_CHARS) {
      out = buf;
      buf = "";
    }
    buf += sep + text;
    return out;
  };
  for (const key of Object.keys(obj)) {
    const value = obj[key];
    const head = `${JSON.stringify(key)}: `;
    const sep = first ? "\n  " : ",\n  ";
    if (Array.isArray(value) && value.length > 0 && typeof (value as { toJSON?: unknown }).toJSON !== "function") {
      first = false;
      const cut = add(sep, `${head}[`);
      if (cut !== undefined) yield cut;
      for (let i = 0; i < value.length; i++) {
        const text = nested(value[i], 2) ?? "null";
        const piece = add(i === 0 ? "\n    " : ",\n    ", text);
        if (piece !== undefined) yield piece;
      }
      buf += "\n  ]";
      continue;
    }
    const text = nested(value, 1);
    if (text === undefined) continue; // undefined, a function: left out, as JSON.stringify does
    first = false;
    const cut = add(sep, head + text);
    if (cut !== undefined) yield cut;
  }
  yield first ? "{}\n" : `${buf}\n}\n`;
}
