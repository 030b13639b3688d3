/**
 * Hostile ids in every output (docs/reliability.md), through the real bin:
 * a `--graph` whose retriever returns an id holding a line break, a code
 * fence, `<img src=…>`, a table row, a link, a terminal colour escape and
 * U+202E (test/fixtures/graphs/hostile-id-agent.mjs). In the markdown
 * report, the GitHub step summary and the PR comment it is text: no fence
 * it does not close, no raw HTML or link outside code, no extra table cell;
 * in the JUnit XML it is well-formed text; on stdout and stderr (also of
 * `retrace trace`) no raw control or bidi character, the id on one line; in the report JSON it round-trips exactly; and
 * `retrace export --trec` refuses it (exit 2, naming the turn, no file).
 */
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "../helpers/chroma.js";
import { ROOT, runCli, type CliResult } from "../helpers/cli.js";
import { MINI_KB } from "../helpers/fixtures.js";

const GRAPH = path.join(ROOT, "test", "fixtures", "graphs", "hostile-id-agent.mjs");
// As in the fixture (not imported from it: the expected value is written here).
const HOSTILE =
  "evil\n```\n<img src=http://127.0.0.1:9/p.png>\n```\n| x | y |\n[link](http://127.0.0.1:9) \u001b[31mred\u202eright";
// The id as one visible line: line breaks as \n, ESC and U+202E as \uXXXX.
const SHOWN =
  "evil\\n```\\n<img src=http://127.0.0.1:9/p.png>\\n```\\n| x | y |\\n[link](http://127.0.0.1:9) \\u001b[31mred\\u202eright";
const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

let tmp: { dir: string; cleanup: () => Promise<void> };
let run: CliResult;
const at = (f: string) => path.join(tmp.dir, f);
beforeAll(async () => {
  tmp = await tempDir("hostile-ids");
  run = await runCli(
    [
      "eval",
      "--graph",
      GRAPH,
      "--kb",
      MINI_KB,
      "-k",
      "3",
      "--github",
      "--gate",
      "min-hit=1",
      "--out",
      at("r.md"),
      "--out",
      `junit:${at("r.xml")}`,
      "--out",
      `json:${at("r.json")}`,
      "--out",
      `html:${at("r.html")}`,
      "--out",
      `pr-comment:${at("pr.md")}`,
    ],
    { env: { GITHUB_STEP_SUMMARY: at("summary.md") }, timeoutMs: 90_000 },
  );
}, 120_000);
afterAll(() => tmp.cleanup());

/**
 * Checks a markdown document the way CommonMark/GFM reads it: fenced blocks
 * close only with a fence at least as long; outside them, no raw HTML tag,
 * (but the PR comment's own `<sub>`), no inline link or image, no
 * unbalanced code span; each table row has the
 * header's number of cells (unescaped pipes). Returns the fenced lines.
 */
function checkMarkdown(text: string, file: string): string[] {
  const fenced: string[] = [];
  let fence: string | null = null;
  let cells: number | null = null;
  const pipes = (l: string) => l.replace(/\\./g, "").split("|").length;
  for (const line of text.split("\n")) {
    const f = /^(`{3,})\s*$/.exec(line)?.[1];
    if (fence !== null) {
      if (f !== undefined && f.length >= fence.length) fence = null;
      else fenced.push(line);
      continue;
    }
    if (f !== undefined) {
      fence = f;
      continue;
    }
    const plain = line.replace(/\\./g, "").replace(/<\/?sub>/g, ""); // backslash escapes are text; <sub> is the PR comment's own footer
    expect(plain, `${file}: raw HTML in ${line}`).not.toMatch(/<[a-zA-Z/!]/);
    expect(plain, `${file}: a link or image in ${line}`).not.toMatch(/\]\(/);
    // Code spans are our own (mdCode): an even number of backtick runs of each length on the line.
    const runs = plain.match(/`+/g) ?? [];
    for (const len of new Set(runs.map((r) => r.length)))
      expect(runs.filter((r) => r.length === len).length % 2, `${file}: unbalanced code span in ${line}`).toBe(0);
    if (line.startsWith("|")) {
      if (cells === null) cells = pipes(line);
      else expect(pipes(line), `${file}: a row with other cells than its header: ${line}`).toBe(cells);
    } else cells = null;
  }
  expect(fence, `${file}: a fence left open`).toBeNull();
  return fenced;
}

describe("an id that is hostile markdown, HTML and terminal text", () => {
  it("the run itself: exit 1 (the --min-hit floor), every output written", () => {
    expect(run.exitCode, run.stderr).toBe(1);
    for (const f of ["r.md", "r.xml", "r.json", "r.html", "pr.md", "summary.md"])
      expect(existsSync(at(f)), f).toBe(true);
  });

  it("markdown report and step summary: the id is text, inside the fence of the graph's notes and in the missed-turns table", async () => {
    for (const f of ["r.md", "summary.md"]) {
      const text = await readFile(at(f), "utf8");
      const fenced = checkMarkdown(text, f);
      expect(
        fenced.some((l) => l.includes(`(e.g. ${SHOWN})`)),
        f,
      ).toBe(true);
      // In the table cell: backslashes, backticks, pipes escaped, `](` broken, < and > as entities, \n and \u shown.
      expect(text, f).toContain(
        "[evil\\\\n\\`\\`\\`\\\\n&lt;img src=http://127.0.0.1:9/p.png&gt;\\\\n\\`\\`\\`\\\\n\\| x \\| y \\|\\\\n[link]\\(http://127.0.0.1:9) \\\\u001b[31mred\\\\u202eright",
      );
      expect(text, f).not.toMatch(RAW);
    }
  });

  it("PR comment: the same checks", async () => {
    const text = await readFile(at("pr.md"), "utf8");
    checkMarkdown(text, "pr.md");
    expect(text).not.toMatch(RAW);
  });

  it("JUnit XML: the id as text (no raw tag, ESC as \\u001b, line breaks kept as character references in attributes)", async () => {
    const xml = await readFile(at("r.xml"), "utf8");
    expect(xml).not.toMatch(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/); // not allowed in XML 1.0
    expect(xml).not.toContain("<img");
    // Between tags only entities (no stray & or <).
    for (const text of xml.match(/>[^<]*</g) ?? []) expect(text).not.toMatch(/&(?!(amp|lt|gt|quot|apos|#\d+);)/);
    expect(xml).toContain(
      "top3=[evil\\n```\\n&lt;img src=http://127.0.0.1:9/p.png&gt;\\n```\\n| x | y |\\n[link](http://127.0.0.1:9) \\u001b[31mred\\u202eright,card-freeze",
    );
  });

  it("stdout and stderr: no raw control or bidi character; the id shown on one line", async () => {
    expect(run.stdout).not.toMatch(RAW);
    expect(run.stderr).not.toMatch(RAW);
    // The first screen names the missed turns; their top-k lists are in the full table (report --table, eval --verbose).
    const full = await runCli(["report", at("r.json"), "--table"]);
    expect(full.stdout).not.toMatch(RAW);
    expect(full.stdout).toContain(`top3=[${SHOWN}, card-freeze, es-congelar-tarjeta]`);
  });

  it("retrace trace --graph: each id on one line, no raw control or bidi character", async () => {
    const r = await runCli(["trace", "en-freeze-001", "--graph", GRAPH, "--kb", MINI_KB, "-k", "3"], {
      timeoutMs: 60_000,
    });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).not.toMatch(RAW);
    expect(r.stdout).toContain(`unknown ids (no card of the KB or catalog; misses): ${SHOWN}\n`);
    expect(r.stdout).toContain(`final top-3: [${SHOWN}, card-freeze, es-congelar-tarjeta]`);
    expect(r.stdout).toContain(`      1  ${SHOWN}\n`);
  });

  it("report JSON: the id round-trips exactly", async () => {
    const report = JSON.parse(await readFile(at("r.json"), "utf8")) as { turns: { retrievedIds: string[] | null }[] };
    expect(report.turns[0]!.retrievedIds![0]).toBe(HOSTILE);
  });

  it("retrace report --trec: refused with exit 2 naming the turn (TREC fields are whitespace-separated), no file written", async () => {
    const r = await runCli(["report", at("r.json"), "--out", `trec:${at("trec")}`]);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toContain(
      "Expected `card id retrieved at en-freeze-001#0` to be a non-empty id without whitespace (TREC fields are whitespace-separated)",
    );
    expect(existsSync(at("trec/run.txt"))).toBe(false);
    expect(existsSync(at("trec/qrels.txt"))).toBe(false);
  });
});
