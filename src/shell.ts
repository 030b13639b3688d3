/**
 * Command lines retrace prints for the user to run next ("Next: npx retrace …",
 * npx so that a project's own install runs them):
 * each argument quoted for a POSIX shell only when it needs it, so a printed
 * line can be pasted as it is, paths with spaces included.
 */

/** Control characters (C0, DEL, C1) and the Unicode line and paragraph separators. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

/**
 * An argument with a control character, in bash's `$'…'` quoting: a line
 * break is written `\n`, never as a line break, so a path holding one
 * (`--cases $'x\n::warning::…'`) cannot start a line of its own in a hint —
 * where a CI runner would read it as a workflow command (docs/ci.md).
 */
function ansiQuoted(a: string): string {
  let out = "";
  for (const ch of a) {
    const c = ch.codePointAt(0) as number;
    if (ch === "\\" || ch === "'") out += `\\${ch}`;
    else if (ch === "\n") out += "\\n";
    else if (ch === "\t") out += "\\t";
    else if (ch === "\r") out += "\\r";
    else if (CONTROL.test(ch))
      out += c <= 0xff ? `\\x${c.toString(16).padStart(2, "0")}` : `\\u${c.toString(16).padStart(4, "0")}`;
    else out += ch;
  }
  return `$'${out}'`;
}

/** `npx retrace check --kb 'my kb' --cases cases.jsonl` from its arguments. */
export function shellLine(args: readonly string[]): string {
  return args
    .map((a) => (/^[\w@%+=:,./#-]+$/.test(a) ? a : CONTROL.test(a) ? ansiQuoted(a) : `'${a.replace(/'/g, `'\\''`)}'`))
    .join(" ");
}
