/**
 * Text from input never drives the terminal (docs/reliability.md, "Control
 * and bidi characters are shown, not obeyed"). Importable from every layer,
 * like redact.ts.
 *
 * `escapeControlChars` is the one function applied at the message boundary
 * (the CLI's `out` / `err`, the logger): every control character but tab
 * and newline — C0 (NUL, BEL, ESC, CR, …), DEL, C1 (U+0080–U+009F) — and
 * every bidirectional formatting character (U+061C, U+200E, U+200F,
 * U+202A–U+202E, U+2066–U+2069), plus the line and paragraph separators
 * U+2028 / U+2029, is written as its `\uXXXX` escape (`\u001b`, `\u202e`),
 * so a hostile id or message is seen, not obeyed. Inside a JSON string the
 * escape means the same character, so JSON output keeps its meaning. A line
 * that would be a CI workflow command (`::warning::`) gets a backslash in
 * front (`defuseWorkflowCommands`), so a line break in a path or message
 * cannot inject one.
 */

/** The characters shown as escapes (see the module comment); tab (U+0009) and newline (U+000A) are kept. */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * A line a CI runner would read as a command: GitHub Actions' workflow
 * commands (`::warning::…`, `::add-mask::…`) and their legacy form
 * (`##[error]…`), at the start of a line (after blanks).
 */
const WORKFLOW_COMMAND_LINE = /^([ \t]*)(::|##\[)/gm;

/** The SGR colour codes the table renderer writes itself (src/eval/report/render/table-grid.ts), which `keepColor` lets through. */
const SGR = /\u001b\[(?:0|1|2|31|32|33)m/y;

const escapeOf = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;

/**
 * `text` with every control and bidi character written as its `\uXXXX`
 * escape (tab and newline kept). `keepColor`: the colour codes retrace's
 * own table writes (`ESC[0m`, `ESC[1m`, `ESC[2m`, `ESC[31m`, `ESC[32m`,
 * `ESC[33m`) pass unchanged; any other escape sequence is escaped.
 */
export function escapeControlChars(
  text: string,
  options: { keepColor?: boolean; workflowCommands?: boolean } = {},
): string {
  const escaped =
    options.keepColor !== true
      ? text.replace(CONTROL, escapeOf)
      : text.replace(CONTROL, (c, offset: number) => {
          if (c === "\u001b") {
            SGR.lastIndex = offset;
            if (SGR.test(text)) return c;
          }
          return escapeOf(c);
        });
  return options.workflowCommands === true ? escaped : defuseWorkflowCommands(escaped);
}

/**
 * `text` with every line that a CI runner would take for a command
 * (`::warning::…`, `::error file=…::…`, `##[error]…`) preceded by a
 * backslash, so that a user's value holding a line break (a `--cases` path,
 * a graph's error message) cannot inject one: applied by
 * `escapeControlChars` at every message boundary. retrace's own annotations
 * (src/eval/gate/github.ts, their data escaped by GitHub's rules) are the
 * only lines written as commands (`workflowCommands: true`).
 */
export function defuseWorkflowCommands(text: string): string {
  return text.replace(WORKFLOW_COMMAND_LINE, "$1\\$2");
}

/**
 * `text` shown on one line, for an id or a value inside a line of text
 * (`top5=[a,b]`, `unknown ids: [x]`): a line break as `\n` (`\r\n` too), a
 * tab as `\t`, every other control and bidi character as `\uXXXX`
 * (escapeControlChars), so an id with a line break reads as one id.
 */
export function oneLineText(text: string): string {
  return escapeControlChars(text.replace(/\r\n/g, "\n")).replace(/\n/g, "\\n").replace(/\t/g, "\\t");
}
