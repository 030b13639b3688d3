/**
 * Output options write into what the user names (docs/reliability.md,
 * "Outputs"), through the real bin on a saved report (`retrace report
 * --md/--html`, no Chroma): a FIFO gets the bytes and stays a FIFO, a
 * symlink's target is written and the link stays a link, `-` and
 * /dev/stdout are stdout, /dev/full is exit 3 with one message, nothing on
 * stdout and the other file not written; a directory is refused (exit 2)
 * before the report is read.
 */
import { spawn, spawnSync } from "node:child_process";
import { lstat, readdir, readFile, readlink, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderMarkdown, reportToJSON } from "../../src/eval/report/render.js";
import type { Report } from "../../src/eval/report/types.js";
import { tempDir } from "../helpers/chroma.js";
import { runCli } from "../helpers/cli.js";
import { fixtureReport } from "../eval/report-fixture.js";

let dir: string;
let cleanup: () => Promise<void>;
let report: Report;
let markdown: string;
const at = (name: string) => path.join(dir, name);

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir("outputs"));
  report = await fixtureReport();
  markdown = renderMarkdown(report);
  await writeFile(at("run.json"), reportToJSON(report));
});
afterAll(() => cleanup());

describe("retrace report --out (markdown, html) into what the user names", () => {
  it("a FIFO: the reader gets the markdown, the FIFO stays a FIFO", async () => {
    expect(spawnSync("mkfifo", [at("md.fifo")]).status).toBe(0);
    const reader = spawn("cat", [at("md.fifo")], { stdio: ["ignore", "pipe", "inherit"] });
    let read = "";
    reader.stdout.setEncoding("utf8");
    reader.stdout.on("data", (d: string) => (read += d));
    const closed = new Promise((r) => reader.on("close", r));
    const r = await runCli(["report", at("run.json"), "--out", `markdown:${at("md.fifo")}`]);
    await closed;
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toBe("");
    expect(read).toBe(markdown);
    expect((await lstat(at("md.fifo"))).isFIFO()).toBe(true);
  });

  it("a symlink and a dangling symlink: the targets are written, the links stay links", async () => {
    await writeFile(at("real.md"), "old");
    await symlink("real.md", at("link.md"));
    await symlink(at("not-yet.html"), at("dangling.html"));
    const r = await runCli([
      "report",
      at("run.json"),
      "--out",
      `markdown:${at("link.md")}`,
      "--out",
      `html:${at("dangling.html")}`,
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect((await lstat(at("link.md"))).isSymbolicLink()).toBe(true);
    expect(await readlink(at("link.md"))).toBe("real.md");
    expect(await readFile(at("real.md"), "utf8")).toBe(markdown);
    expect((await lstat(at("dangling.html"))).isSymbolicLink()).toBe(true);
    expect((await readFile(at("not-yet.html"), "utf8")).startsWith("<!DOCTYPE html>")).toBe(true);
  });

  it("`-` and /dev/stdout write the markdown on stdout", async () => {
    for (const name of ["-", "/dev/stdout"]) {
      const r = await runCli(["report", at("run.json"), "--out", `markdown:${name}`]);
      expect(r.exitCode, r.stderr).toBe(0);
      expect(r.stdout).toBe(markdown);
    }
  });

  it("/dev/full: exit 3, `could not write /dev/full: no space left on device`, nothing on stdout, the device untouched", async () => {
    const r = await runCli(["report", at("run.json"), "--out", "markdown:/dev/full"]);
    expect(r.exitCode).toBe(3);
    expect(r.stdout).toBe("");
    expect(r.stderr.trim()).toBe("retrace: could not write /dev/full: no space left on device");
    expect((await lstat("/dev/full")).isCharacterDevice()).toBe(true);
  });

  it("a directory: exit 2 before anything is read, naming the option and the path; the other output is not written", async () => {
    const r = await runCli(["report", at("run.json"), "--out", `html:${at("never.html")}`, "--out", `markdown:${dir}`]);
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr.trim()).toBe(
      `retrace: Expected \`--out markdown:\` to be a path retrace can write (${dir} is a directory), got ${JSON.stringify(dir)}`,
    );
    await expect(lstat(at("never.html"))).rejects.toThrow(/ENOENT/);
  });

  it("/dev/full beside a file: exit 3, the file not written, no temporary file left, nothing on stdout", async () => {
    const r = await runCli([
      "report",
      at("run.json"),
      "--out",
      `html:${at("held-back.html")}`,
      "--out",
      "markdown:/dev/full",
      "--table",
    ]);
    expect(r.exitCode).toBe(3);
    expect(r.stdout).toBe("");
    expect(r.stderr.trim()).toBe("retrace: could not write /dev/full: no space left on device");
    await expect(lstat(at("held-back.html"))).rejects.toThrow(/ENOENT/);
    expect((await readdir(dir)).filter((f) => f.endsWith(".tmp"))).toEqual([]);
  });
});
