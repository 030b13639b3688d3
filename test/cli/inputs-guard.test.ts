/**
 * Nothing the run read is replaced (docs/reliability.md, "Outputs"): an
 * output that resolves to a file the run reads — by path, through a
 * symlink, as a hard link (same device and inode), or anywhere inside the
 * KB folder — is exit 2 before the sweep, naming the option, and the input
 * is left as it was; `--update-baseline` (the command's purpose) still
 * writes the baseline it compares with.
 */
import { link, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reportToJSON } from "../../src/eval/report/render.js";
import { runCli } from "../helpers/cli.js";
import { copyKb } from "../helpers/fixtures.js";
import { fixtureReport } from "../eval/report-fixture.js";

let kb: string;
let cleanup: () => Promise<void>;
const at = (...p: string[]) => path.join(kb, ...p);
const EVAL = () => ["eval", "--kb", kb, "--store", "memory", "--config", '{"retrieval":{"embedder":"builtin"}}'];

beforeAll(async () => {
  ({ dir: kb, cleanup } = await copyKb());
});
afterAll(() => cleanup());

describe("an output naming an input of the run is refused (exit 2, before the sweep)", () => {
  it.each([
    ["the cases file (markdown over it)", ["--out"], () => at("eval", "cases.jsonl")],
    ["a card (HTML over it)", ["--out"], () => `html:${at("cards", "en", "card-freeze.md")}`],
    ["a new file inside the KB folder", ["--out"], () => `junit:${at("cards", "en", "new-card.md")}`],
  ])("%s", async (_name, flag, value) => {
    const before = await readFile(at("eval", "cases.jsonl"), "utf8");
    const card = await readFile(at("cards", "en", "card-freeze.md"), "utf8");
    const r = await runCli([...EVAL(), ...flag, value()]);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/retrace: Expected `--out[^`]*` to be a path that is not an input of the run/);
    expect(r.stderr).not.toMatch(/Scoring|turns scored/);
    expect(r.stdout).toBe("");
    expect(await readFile(at("eval", "cases.jsonl"), "utf8")).toBe(before);
    expect(await readFile(at("cards", "en", "card-freeze.md"), "utf8")).toBe(card);
  });

  it("a symlink and a hard link to the cases file, outside the KB", async () => {
    const outside = path.dirname(kb);
    const sym = path.join(outside, `${path.basename(kb)}-sym.md`);
    const hard = path.join(outside, `${path.basename(kb)}-hard.json`);
    await symlink(at("eval", "cases.jsonl"), sym);
    await link(at("eval", "cases.jsonl"), hard);
    for (const out of [sym, `json:${hard}`]) {
      const r = await runCli([...EVAL(), "--out", out]);
      expect(r.exitCode, r.stderr).toBe(2);
      expect(r.stderr).toContain("not an input of the run");
    }
    const hardR = await runCli([...EVAL(), "--out", `json:${hard}`]);
    expect(hardR.stderr).toContain("hard link");
  });

  it("the baseline being gated (--baseline outside the KB), and --update-baseline still writes it", async () => {
    const baseline = path.join(path.dirname(kb), `${path.basename(kb)}-baseline.json`);
    const w = await runCli([...EVAL(), "--baseline", baseline, "--update-baseline"]);
    expect(w.exitCode, w.stderr).toBe(0);
    const written = await readFile(baseline, "utf8");
    const r = await runCli([...EVAL(), "--baseline", baseline, "--out", `json:${baseline}`]);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toContain("the --baseline input this run reads");
    expect(await readFile(baseline, "utf8")).toBe(written);
  });

  it("retrace report: the report it reads", async () => {
    const file = path.join(path.dirname(kb), `${path.basename(kb)}-run.json`);
    const text = reportToJSON(await fixtureReport());
    await writeFile(file, text);
    const r = await runCli(["report", file, "--out", `html:${file}`]);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toContain("not an input of the run");
    expect(await readFile(file, "utf8")).toBe(text);
  });

  // Wave five declared only what was typed: the project file, and what it sets, were replaced by the report (exit 0).
  it.each([
    [
      "retrace.config.json",
      (dir: string) => ({
        file: path.join(dir, "retrace.config.json"),
        text: `${JSON.stringify({ version: 1, kb: path.relative(dir, kb), store: "memory", retrieval: { embedder: "builtin" } })}\n`,
      }),
    ],
    [
      'package.json holding the "retrace" key',
      (dir: string) => ({
        file: path.join(dir, "package.json"),
        text: `${JSON.stringify({ name: "app", private: true, retrace: { version: 1, kb: path.relative(dir, kb), store: "memory" } })}\n`,
      }),
    ],
  ])("the project file (%s), and the KB it names, with no flag typed", async (_name, make) => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "retrace-project-guard-"));
    try {
      const { file, text } = make(dir);
      await writeFile(file, text);
      const cases = await readFile(at("eval", "cases.jsonl"), "utf8");
      for (const out of [`json:${path.basename(file)}`, path.relative(dir, at("eval", "cases.jsonl"))]) {
        const r = await runCli(["eval", "--out", out], { cwd: dir });
        expect(r.exitCode, r.stderr).toBe(2);
        expect(r.stderr).toContain("not an input of the run");
        expect(r.stdout).toBe("");
      }
      expect(await readFile(file, "utf8")).toBe(text);
      expect(await readFile(at("eval", "cases.jsonl"), "utf8")).toBe(cases);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
