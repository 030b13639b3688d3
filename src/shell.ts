/**
 * Command lines retrace prints for the user to run next ("Next: npx retrace …",
 * npx so that a project's own install runs them):
 * each argument quoted for a POSIX shell only when it needs it, so a printed
 * line can be pasted as it is, paths with spaces included.
 */

/** `npx retrace check --kb 'my kb' --cases cases.jsonl` from its arguments. */
export function shellLine(args: readonly string[]): string {
  return args.map((a) => (/^[\w@%+=:,./#-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(" ");
}
