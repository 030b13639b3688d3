/**
 * The code blocks of README.md and docs/**\/*.md that import the package,
 * for the pack test (test/package/pack.int.test.ts) to compile against the
 * packed tarball, and run where they are complete programs.
 *
 * A block is taken when its fence language is ts / typescript / js /
 * javascript / mjs and it imports a module named `retrace-eval`,
 * `retrace-eval/…`, `retrace` or `retrace/…` (the last two are wrong names:
 * taking them makes a block that uses one fail instead of being skipped).
 * What is done with it is said by an HTML comment on the nearest non-blank
 * line above the opening fence (invisible on GitHub):
 *
 *   (none)                      compile: a complete module, type-checked with
 *                               `tsc --strict` but not run (it needs a server,
 *                               a dataset, your agent file…);
 *   <!-- snippet: run -->       compile, then run with node: it must exit 0;
 *   <!-- snippet: fragment -->  an excerpt that does not compile on its own
 *                               (names defined elsewhere): only its import
 *                               declarations of the package are type-checked,
 *                               so a wrong path or a renamed export still fails.
 *
 * A marker with another value, or one not followed by a fence, is an error.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";

export type SnippetMode = "compile" | "run" | "fragment";
export const SNIPPET_MODES: readonly SnippetMode[] = ["compile", "run", "fragment"];

export interface DocSnippet {
  /** The markdown file, relative to the repository root, with forward slashes. */
  doc: string;
  /** 1-based line of the opening fence. */
  line: number;
  mode: SnippetMode;
  /** The block's text, without the fences. */
  code: string;
  /** What the consumer project type-checks: the block itself, or for a fragment its package imports only. */
  source: string;
  /** File name in the consumer project, e.g. `snippets/docs-evaluate-your-graph-L118.ts`. */
  file: string;
}

const LANGS: Record<string, "ts" | "mjs"> = { ts: "ts", typescript: "ts", js: "mjs", javascript: "mjs", mjs: "mjs" };
const MARKER = /^\s*<!--\s*snippet:\s*(\S*)\s*-->\s*$/;
const PACKAGE_SPECIFIER = /^retrace(?:-eval)?(?:\/|$)/;

function fenceOpen(line: string): { fence: string; info: string } | null {
  const m = /^ {0,3}(`{3,}|~{3,})(.*)$/.exec(line);
  if (m === null) return null;
  if (m[1]!.startsWith("`") && m[2]!.includes("`")) return null;
  return { fence: m[1]!, info: m[2]!.trim() };
}

function isFenceClose(line: string, fence: string): boolean {
  const m = /^ {0,3}(`{3,}|~{3,})\s*$/.exec(line);
  return m !== null && m[1]![0] === fence[0] && m[1]!.length >= fence.length;
}

/** The module specifiers a block imports (static imports, re-exports, dynamic `import("…")` with a literal). */
export function importedModules(code: string): string[] {
  const sf = ts.createSourceFile("block.ts", code, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const out: string[] = [];
  const visit = (node: ts.Node): void => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier !== undefined &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      out.push(node.moduleSpecifier.text);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] !== undefined &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      out.push(node.arguments[0].text);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

/** A fragment's import declarations of the package, as a module of their own. */
export function packageImportsOnly(code: string): string {
  const sf = ts.createSourceFile("block.ts", code, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const imports = sf.statements.filter(
    (s): s is ts.ImportDeclaration =>
      ts.isImportDeclaration(s) &&
      ts.isStringLiteral(s.moduleSpecifier) &&
      PACKAGE_SPECIFIER.test(s.moduleSpecifier.text),
  );
  return `${imports.map((s) => s.getText(sf)).join("\n")}\nexport {};\n`;
}

/** The package-importing blocks of one markdown text (`doc` names it in messages and file names). */
export function extractSnippets(markdown: string, doc: string): DocSnippet[] {
  const lines = markdown.split(/\r?\n/);
  const out: DocSnippet[] = [];
  let pending: { mode: string; line: number } | null = null;
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i]!;
    const marker = MARKER.exec(text);
    if (marker !== null) {
      if (pending !== null)
        throw new Error(`${doc}:${pending.line}: <!-- snippet: ${pending.mode} --> is not followed by a code block`);
      pending = { mode: marker[1]!, line: i + 1 };
      continue;
    }
    const open = fenceOpen(text);
    if (open === null) {
      if (pending !== null && text.trim() !== "")
        throw new Error(`${doc}:${pending.line}: <!-- snippet: ${pending.mode} --> is not followed by a code block`);
      continue;
    }
    let end = i + 1;
    while (end < lines.length && !isFenceClose(lines[end]!, open.fence)) end++;
    const code = lines.slice(i + 1, end).join("\n") + "\n";
    const lang = LANGS[open.info.split(/\s+/)[0]!.toLowerCase()];
    const marked = pending;
    pending = null;
    if (marked !== null && !SNIPPET_MODES.includes(marked.mode as SnippetMode)) {
      throw new Error(
        `${doc}:${marked.line}: unknown snippet mode "${marked.mode}" (expected ${SNIPPET_MODES.join(", ")})`,
      );
    }
    const imports = lang === undefined ? [] : importedModules(code);
    if (lang !== undefined && imports.some((m) => PACKAGE_SPECIFIER.test(m))) {
      const mode = (marked?.mode ?? "compile") as SnippetMode;
      const base = doc.replace(/\.md$/, "").replace(/[^A-Za-z0-9]+/g, "-");
      out.push({
        doc,
        line: i + 1,
        mode,
        code,
        source: mode === "fragment" ? packageImportsOnly(code) : code,
        file: `snippets/${base}-L${i + 1}.${mode === "fragment" ? "ts" : lang}`,
      });
    } else if (marked !== null) {
      throw new Error(
        `${doc}:${marked.line}: <!-- snippet: ${marked.mode} --> marks a block that does not import the package`,
      );
    }
    i = end;
  }
  if (pending !== null)
    throw new Error(`${doc}:${pending.line}: <!-- snippet: ${pending.mode} --> is not followed by a code block`);
  return out;
}

/** The markdown files whose blocks are checked: README.md and every .md under docs/. */
export function docFiles(root: string): string[] {
  const found = ["README.md"];
  const walk = (dir: string): void => {
    for (const e of readdirSync(path.join(root, dir), { withFileTypes: true }).sort((a, b) =>
      a.name < b.name ? -1 : 1,
    )) {
      const rel = `${dir}/${e.name}`;
      if (e.isDirectory()) walk(rel);
      else if (e.name.endsWith(".md")) found.push(rel);
    }
  };
  walk("docs");
  return found;
}

/** Every package-importing block of README.md and docs/. */
export function docSnippets(root: string): DocSnippet[] {
  return docFiles(root).flatMap((doc) => extractSnippets(readFileSync(path.join(root, doc), "utf8"), doc));
}
