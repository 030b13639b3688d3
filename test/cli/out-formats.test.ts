/**
 * The one output registry (src/cli/out-formats.ts, docs/cli.md "Outputs"):
 * every format's module renders exactly the subjects its row names; the docs'
 * table is the registry's; a prefix that is no format of the command is
 * exit 2 with a did-you-mean and writes nothing (before: `--out
 * htm:report.html` exited 0 and wrote a file literally named
 * `htm:report.html`); `report --out` writes every report format `eval --out`
 * has; `label` and `compare` take `--out html:` and refuse their old
 * `--html` / `--pr-comment` naming the new spelling.
 */
import { readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formatsOf, OUT_FORMATS, OutFormatError, parseOut } from "../../src/cli/out-formats.js";
import { reportToJSON } from "../../src/eval/report/render.js";
import { tempDir } from "../helpers/chroma.js";
import { ROOT, runCli } from "../helpers/cli.js";
import { fixtureReport } from "../eval/report-fixture.js";

describe("the registry", () => {
  it("each format's module renders exactly the subjects its row names", async () => {
    for (const f of OUT_FORMATS) {
      const mod = await f.load();
      expect(Object.keys(mod.render).sort(), f.name).toEqual([...f.subjects].sort());
    }
  });

  it("docs/cli.md's table of formats is the registry's", async () => {
    const doc = await readFile(path.join(ROOT, "docs", "cli.md"), "utf8");
    const table = doc.slice(doc.indexOf("<!-- out-formats -->"), doc.indexOf("<!-- /out-formats -->"));
    const rows = [...table.matchAll(/^\| `([a-z-]+)` \| ([^|]*) \| ([^|]*) \| ([^|]*) \|$/gm)].map((m) => ({
      name: m[1],
      extensions: m[2]!.trim(),
      subjects: m[3]!.trim(),
      summary: m[4]!.trim(),
    }));
    expect(rows).toEqual(
      OUT_FORMATS.map((f) => ({
        name: f.name,
        extensions: f.extensions.length === 0 ? "—" : f.extensions.map((e) => `\`${e}\``).join(", "),
        subjects: f.subjects.join(", "),
        summary: f.summary,
      })),
    );
  });
});

describe("--out on commands writing one kind of file (tune's configuration, cases)", () => {
  it("takes FORMAT:FILE, or any FILE as its one format; a prefix of another command's format is exit 2", () => {
    expect(parseOut("config:t.json", "tuning", "tune")).toMatchObject({ format: "config", file: "t.json" });
    expect(parseOut("tuned.cfg", "tuning", "tune")).toMatchObject({ format: "config", file: "tuned.cfg" });
    expect(parseOut("cases:c.jsonl", "cases", "cases")).toMatchObject({ format: "cases", file: "c.jsonl" });
    expect(parseOut("-", "cases", "cases")).toMatchObject({ format: "cases", file: "-" });
    expect(() => parseOut("htm:t.json", "tuning", "tune")).toThrow(OutFormatError);
    expect(() => parseOut("html:t.html", "tuning", "tune")).toThrow(/html is not a format of retrace tune/);
    expect(() => parseOut("json:c.jsonl", "cases", "cases")).toThrow(/formats: cases/);
  });

  it("tune --out htm:x and cases synth --out confg:x are exit 2 and write nothing", async () => {
    const { dir, cleanup } = await tempDir("out-one-kind");
    try {
      const tune = await runCli(["tune", "--kb", "no-such-kb", "--out", "htm:x"], { cwd: dir });
      expect(tune.exitCode).toBe(2);
      expect(tune.stderr).toContain('--out "htm:x": unknown format "htm"');
      const synth = await runCli(["cases", "synth", "--kb", "no-such-kb", "--out", "confg:x"], { cwd: dir });
      expect(synth.exitCode).toBe(2);
      expect(synth.stderr).toContain("formats: cases");
      expect(await readdir(dir)).toEqual([]);
    } finally {
      await cleanup();
    }
  });
});

describe("parseOut", () => {
  it("takes a prefix, an alias, or an extension; a report's other files are markdown", () => {
    expect(parseOut("html:r.html", "report", "eval")).toMatchObject({ format: "html", file: "r.html" });
    expect(parseOut("md:r.txt", "report", "eval")).toMatchObject({ format: "markdown", file: "r.txt" });
    expect(parseOut("R.HTM", "report", "eval")).toMatchObject({ format: "html", file: "R.HTM" });
    expect(parseOut("results.xml", "report", "eval")).toMatchObject({ format: "junit" });
    expect(parseOut("notes.txt", "report", "eval")).toMatchObject({ format: "markdown", file: "notes.txt" });
    expect(parseOut("C:\\out\\r.json", "report", "eval")).toMatchObject({ format: "json", file: "C:\\out\\r.json" });
    expect(parseOut("trec:runs/a", "report", "report")).toMatchObject({ format: "trec", file: "runs/a" });
  });

  it.each([
    ["htm:report.html", /unknown format "htm" \(did you mean html:\?\)/],
    ["HTML:report.html", /unknown format "HTML" \(did you mean html:\?\)/],
    ["pdf:report.pdf", /unknown format "pdf"; formats: markdown, junit, json, html, pr-comment, trec/],
    ["jsno:r.json", /did you mean json:\?/],
  ])("%s is refused naming what is accepted", (value, message) => {
    expect(() => parseOut(value, "report", "eval")).toThrow(OutFormatError);
    expect(() => parseOut(value, "report", "eval")).toThrow(message);
  });

  it("a format of another command is refused naming this one's", () => {
    expect(() => parseOut("junit:x.xml", "label", "label")).toThrow(/junit is not a format of retrace label/);
    expect(() => parseOut("phoenix:a.json", "report", "merge")).toThrow(/not a format of retrace merge/);
    expect(parseOut("phoenix:a.json", "report", "eval", ["--traces"])).toMatchObject({ format: "phoenix" });
    expect(() => parseOut("page", "label", "label")).toThrow(/name the format \(FORMAT:FILE, e\.g\. --out html:page\)/);
  });

  it("every command subject has html", () => {
    for (const s of ["report", "comparison", "label"] as const)
      expect(formatsOf(s).map((f) => f.name)).toContain("html");
  });
});

let dir: string;
let cleanup: () => Promise<void>;
const at = (name: string) => path.join(dir, name);

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir("out-formats"));
  await writeFile(at("run.json"), reportToJSON(await fixtureReport()));
});
afterAll(() => cleanup());

describe("a mistyped format through the bin: exit 2, nothing written", () => {
  it.each([
    [["eval", "--out", "htm:report.html"], "did you mean html:?"],
    [["eval", "--out", "HTML:report.html"], "did you mean html:?"],
    [["eval", "--out", "pdf:report.pdf"], 'unknown format "pdf"'],
    [["report", "RUN", "--out", "htm:report.html"], "did you mean html:?"],
    [["compare", "RUN", "RUN", "--out", "htm:c.html"], "did you mean html:?"],
    [["label", "cases.jsonl", "--out", "htm:l.html"], "did you mean html:?"],
    [["merge", "RUN", "--out", "htm:m.html"], "did you mean html:?"],
  ])("%j", async (args, message) => {
    const { dir: cwd, cleanup: done } = await tempDir("out-typo");
    try {
      const r = await runCli(
        args.map((a) => (a === "RUN" ? at("run.json") : a)),
        { cwd },
      );
      expect(r.exitCode).toBe(2);
      expect(r.stderr).toContain(message);
      expect(r.stdout).toBe("");
      expect(await readdir(cwd)).toEqual([]);
    } finally {
      await done();
    }
  });
});

describe("report --out: every report format eval --out has", () => {
  it("writes markdown, junit, json, html, pr-comment and trec from one saved report", async () => {
    const r = await runCli([
      "report",
      at("run.json"),
      "--out",
      `markdown:${at("r.md")}`,
      "--out",
      `junit:${at("r.xml")}`,
      "--out",
      `json:${at("r.json")}`,
      "--out",
      `html:${at("r.html")}`,
      "--out",
      `pr-comment:${at("pr.md")}`,
      "--out",
      `trec:${at("trec")}`,
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(await readFile(at("r.md"), "utf8")).toMatch(/^#/);
    expect(await readFile(at("r.xml"), "utf8")).toMatch(/<testsuite/);
    expect(await readFile(at("r.json"), "utf8")).toBe(await readFile(at("run.json"), "utf8"));
    expect(await readFile(at("r.html"), "utf8")).toMatch(/^<!DOCTYPE html>/);
    expect(await readFile(at("pr.md"), "utf8")).toMatch(/^## retrace report run\.json/);
    expect((await readdir(at("trec"))).sort()).toEqual(["qrels.txt", "run.txt"]);
    expect(r.stderr).toContain("the report's means: ");
  });
});

describe("label and compare: --out html: (their old options are retired spellings)", () => {
  it.each([
    [["label", "cases.jsonl", "--html", "l.html"], "option '--html' is now --out html:l.html"],
    [["compare", "RUN", "RUN", "--html", "c.html"], "option '--html' is now --out html:c.html"],
    [["compare", "RUN", "RUN", "--pr-comment", "c.md"], "option '--pr-comment' is now --out pr-comment:c.md"],
    [["report", "RUN", "--trec", "out"], "option '--trec' is now --out trec:out"],
  ])("%j: exit 2 naming the new spelling", async (args, message) => {
    const r = await runCli(args.map((a) => (a === "RUN" ? at("run.json") : a)));
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(message);
  });

  it("compare writes its page and comment through --out", async () => {
    const r = await runCli([
      "compare",
      at("run.json"),
      at("run.json"),
      "--out",
      `html:${at("c.html")}`,
      "--out",
      `pr-comment:${at("c.md")}`,
      "--out",
      `json:${at("c.json")}`,
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(await readFile(at("c.html"), "utf8")).toMatch(/^<!DOCTYPE html>/);
    expect(await readFile(at("c.md"), "utf8")).toMatch(/^## retrace compare run\.json run\.json/);
    expect(JSON.parse(await readFile(at("c.json"), "utf8"))).toMatchObject({ version: 1, a: at("run.json") });
  });
});
