/**
 * Text that fits a terminal of `width` columns (the CLI's `--width`,
 * docs/gates-and-exit-codes.md "Terminal width"): a longer line is wrapped at
 * spaces, its continuation lines indented two more than the line itself; a
 * word longer than the room left is split. Widths are terminal columns as
 * `string-width` counts them: a full-width character (Japanese, Chinese,
 * Korean, most emoji) takes 2, a combining mark 0, an ANSI colour code
 * nothing (a painted line keeps its codes; the terminal carries the style
 * across the break). A word wider than a line is cut by `wrap-ansi`, which
 * never splits a full-width character across two lines. Pure: the same text
 * and width always give the same lines.
 */
import stringWidth from "string-width";
import wrapAnsi from "wrap-ansi";

/** Visible width of `s` in terminal columns (string-width: full-width characters 2, colour codes 0). */
export function visibleLength(s: string): number {
  return stringWidth(s);
}

/** `s` padded with spaces on the right to `width` visible columns (never cut). */
export function padVisible(s: string, width: number): string {
  return s + " ".repeat(Math.max(0, width - stringWidth(s)));
}

/** `s` cut into pieces of at most `size` columns (wrap-ansi's hard wrap; colour codes kept with their characters). */
function splitVisible(s: string, size: number): string[] {
  return wrapAnsi(s, size, { hard: true, trim: false, wordWrap: false }).split("\n");
}

/**
 * One line as lines of at most `width` visible characters (width ≥ 1). The
 * continuation indent is `indent` when given, else the line's own leading
 * spaces plus two; it never takes more than half the width.
 */
export function wrapLine(line: string, width: number, indent?: number): string[] {
  if (visibleLength(line) <= width) return [line];
  // A colour code that closes after padding (`mean  \x1b[0m`) moves before the spaces, so it stays with its word.
  if (line.includes("\x1b")) line = line.replace(/( +)((?:\x1b\[[0-9;]*m)+)(?= |$)/g, "$2$1");
  const lead = /^ */.exec(line)![0].length;
  const cont = " ".repeat(Math.min(indent ?? lead + 2, Math.floor(width / 2)));
  const first = " ".repeat(Math.min(lead, Math.floor(width / 2)));
  // Words with the run of spaces before each (kept inside a line, dropped at a break).
  const parts = line.slice(lead).split(/( +)/);
  const lines: string[] = [];
  let current = first;
  let used = first.length;
  let empty = true; // nothing but the indent on the current line
  const room = () => width - used;
  const newLine = () => {
    lines.push(current);
    current = cont;
    used = cont.length;
    empty = true;
  };
  for (let i = 0; i < parts.length; i += 2) {
    const word = parts[i]!;
    const space = i > 0 ? parts[i - 1]! : "";
    if (word === "") {
      if (i === parts.length - 1) break; // trailing spaces
      continue;
    }
    const w = visibleLength(word);
    if (!empty && space.length + w <= room()) {
      current += space + word;
      used += space.length + w;
      continue;
    }
    if (!empty) newLine();
    if (w <= room()) {
      current += word;
      used += w;
      empty = false;
      continue;
    }
    // A word wider than a whole line: split it, each piece as wide as its line allows.
    let rest = word;
    for (;;) {
      const [piece, ...more] = splitVisible(rest, Math.max(1, room()));
      current += piece!;
      used += visibleLength(piece!);
      empty = false;
      if (more.length === 0) break;
      rest = more.join("");
      newLine();
    }
  }
  lines.push(current);
  return lines;
}

/** Every line of `text` wrapped to `width` (0, negative or Infinity: unchanged). Keeps a final newline. */
export function fitText(text: string, width: number): string {
  if (!(width > 0) || !Number.isFinite(width)) return text;
  const end = text.endsWith("\n");
  const body = end ? text.slice(0, -1) : text;
  const out = body.split("\n").flatMap((l) => wrapLine(l, width));
  return `${out.join("\n")}${end ? "\n" : ""}`;
}
