/**
 * Fail before the sweep, lose nothing (docs/reliability.md, "Outputs"),
 * through the real bin, offline (`--store memory --embedder builtin` on the
 * mini KB, and `eval --graph` over test/fixtures/graphs/fanout-agent.mjs):
 *
 * - a bad output path — under a regular file, a directory, `""`, the
 *   baseline of --update-baseline in a directory — is exit 2 naming the
 *   option and the path, before the store starts or the graph is loaded
 *   (shown with a Chroma URL on a closed port, which would be exit 3, and a
 *   graph module that does not exist), with nothing written and nothing on
 *   stdout; every command that writes files checks them the same way;
 * - a write that fails at the end — `/dev/full`, a full tmpfs (root only) —
 *   is exit 3 (`could not write …: no space left on device`), and the run's
 *   other outputs are not written, no temporary file is left, stdout stays
 *   empty.
 */
import { lstat, mkdir, readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reportToJSON } from "../../src/eval/report/render.js";
import { closedPort, tempDir } from "../helpers/chroma.js";
import { ROOT, runCli } from "../helpers/cli.js";
import { MINI_KB, mountSmallTmpfs, unmountTmpfs } from "../helpers/fixtures.js";
import { fixtureReport } from "../eval/report-fixture.js";

let dir: string;
let cleanup: () => Promise<void>;
let closed: number;
const at = (...p: string[]) => path.join(dir, ...p);

const EVAL = ["eval", "--kb", MINI_KB, "--store", "memory", "--config", '{"retrieval":{"embedder":"builtin"}}'];
const GRAPHS = path.join(ROOT, "test", "fixtures", "graphs");
const GRAPH_EVAL = [
  "eval",
  "--graph",
  path.join(GRAPHS, "fanout-agent.mjs"),
  "--kb",
  MINI_KB,
  "--cases",
  path.join(GRAPHS, "fanout-cases.jsonl"),
  "-k",
  "3",
  "--case",
  "en-lock-001",
  "--case",
  "es-lock-001",
];

const exists = (p: string) =>
  lstat(p).then(
    () => true,
    () => false,
  );
/** Every entry under `d`, temporary files included. */
const tree = async (d: string) => (await readdir(d, { recursive: true })).map(String).sort();
/** `Expected \`OPTION\` to be a path retrace can write (WHY), got "PATH"` as the one stderr line. */
const refusal = (option: string, why: string, p: string) =>
  `retrace: Expected \`${option}\` to be a path retrace can write (${why}), got ${JSON.stringify(p)}`;

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir("output-preflight"));
  closed = await closedPort();
  await writeFile(at("a-file"), "");
  await mkdir(at("a-dir"));
  await writeFile(at("run.json"), reportToJSON(await fixtureReport()));
});
afterAll(() => cleanup());

describe("retrace eval: output paths checked before the store starts (exit 2)", () => {
  it.each([
    [
      "a path under a regular file",
      "--out json:",
      () => at("a-file", "r.json"),
      () => `${at("a-file")} is not a directory`,
    ],
    ["a directory", "--out", () => at("a-dir"), () => `${at("a-dir")} is a directory`],
    [
      "a folder where no file can be created",
      "--out junit:",
      () => "/proc/j.xml",
      () => "cannot create a file in /proc: no such file or directory",
    ],
  ])(
    "%s: exit 2 naming %s and the path; the closed-port store is never asked; nothing written",
    async (_what, option, p, why) => {
      const out = at(`never-${option.replace(/\W/g, "")}.html`);
      const [flag, prefix = ""] = option.split(" ");
      const r = await runCli([
        ...EVAL,
        "--store",
        `http://127.0.0.1:${closed}`,
        "--out",
        `html:${out}`,
        flag as string,
        `${prefix}${p()}`,
      ]);
      expect(r.exitCode, r.stderr).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr.trim()).toBe(refusal(option, why(), p()));
      expect(await exists(out)).toBe(false);
    },
  );

  it("an empty path (--out json:): exit 2 naming the option", async () => {
    const r = await runCli([...EVAL, "--out", at("never-empty.md"), "--out", "json:"]);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr.trim()).toBe('retrace: Expected `--out json:` to be a file path, got ""');
    expect(await exists(at("never-empty.md"))).toBe(false);
  });

  it("--update-baseline into a directory: exit 2 naming --update-baseline, before the store", async () => {
    const r = await runCli([
      ...EVAL,
      "--store",
      `http://127.0.0.1:${closed}`,
      "--update-baseline",
      "--baseline",
      at("a-dir"),
    ]);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr.trim()).toBe(refusal("--update-baseline", `${at("a-dir")} is a directory`, at("a-dir")));
  });

  it("two options naming one file: exit 2", async () => {
    const r = await runCli([...EVAL, "--out", at("same.txt"), "--out", `junit:${at("same.txt")}`]);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr.trim()).toBe(
      `retrace: Expected \`--out junit:\` to be a file no other output option names (--out writes ${at("same.txt")} too), got ${JSON.stringify(at("same.txt"))}`,
    );
  });
});

describe("retrace eval: a write that fails at the end (exit 3) writes none of the run's files", () => {
  it("/dev/full as --out json:: exit 3, the markdown, junit and html files not written, no temporary file, nothing on stdout", async () => {
    const d = at("eval-full");
    await mkdir(d);
    const r = await runCli([
      ...EVAL,
      "--out",
      path.join(d, "r.md"),
      "--out",
      `junit:${path.join(d, "j.xml")}`,
      "--out",
      `html:${path.join(d, "new", "r.html")}`,
      "--out",
      "json:/dev/full",
    ]);
    expect(r.exitCode, r.stderr).toBe(3);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/eval: 5\/5 cases/); // the sweep ran: the failure came at the end
    expect(r.stderr.trim().split("\n").at(-1)).toBe("retrace: could not write /dev/full: no space left on device");
    expect(await tree(d)).toEqual([]);
    expect((await lstat("/dev/full")).isCharacterDevice()).toBe(true);
  });

  it("a full tmpfs (root only): exit 3, no space left, the files on the other file system not written", async (ctx) => {
    const mnt = at("small");
    await mountSmallTmpfs(mnt, "64k", ctx);
    try {
      const d = at("beside-tmpfs");
      await mkdir(d);
      await writeFile(path.join(mnt, "r.json"), "old report");
      // The HTML page (~50 KB) and the report JSON (~35 KB) do not both fit in 64 KB; the preflight passes (the tmpfs is not full yet).
      const r = await runCli([
        ...EVAL,
        "--out",
        path.join(d, "r.md"),
        "--out",
        `junit:${path.join(d, "j.xml")}`,
        "--out",
        `json:${path.join(mnt, "r.json")}`,
        "--out",
        `html:${path.join(mnt, "r.html")}`,
      ]);
      expect(r.exitCode, r.stderr).toBe(3);
      expect(r.stdout).toBe("");
      expect(r.stderr.trim().split("\n").at(-1)).toMatch(
        new RegExp(`^retrace: could not write ${mnt}/r\\.(json|html): no space left on device$`),
      );
      expect(await tree(d)).toEqual([]);
      expect(await tree(mnt)).toEqual(["r.json"]);
    } finally {
      unmountTmpfs(mnt);
    }
  });
});

describe("retrace eval --graph: the same, before the graph is loaded", () => {
  it("a directory as --out: exit 2 naming it, not the graph module (which does not exist)", async () => {
    const r = await runCli([
      "eval",
      "--graph",
      at("no-such-graph.mjs"),
      "--kb",
      MINI_KB,
      "--out",
      at("a-dir"),
      "--out",
      `json:${at("never-graph.json")}`,
    ]);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr.trim()).toBe(refusal("--out", `${at("a-dir")} is a directory`, at("a-dir")));
    expect(await exists(at("never-graph.json"))).toBe(false);
  });

  it("--update-baseline under a regular file: exit 2 naming --update-baseline", async () => {
    const p = at("a-file", "baseline.json");
    const r = await runCli([...GRAPH_EVAL, "--update-baseline", "--baseline", p]);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr.trim()).toBe(refusal("--update-baseline", `${at("a-file")} is not a directory`, p));
  });

  it("/dev/full as --out json:: exit 3, the markdown and junit files not written, nothing on stdout", async () => {
    const d = at("graph-full");
    await mkdir(d);
    const r = await runCli([
      ...GRAPH_EVAL,
      "--out",
      path.join(d, "g.md"),
      "--out",
      `junit:${path.join(d, "g.xml")}`,
      "--out",
      "json:/dev/full",
    ]);
    expect(r.exitCode, r.stderr).toBe(3);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/eval: 2\/2 cases/);
    expect(r.stderr.trim().split("\n").at(-1)).toBe("retrace: could not write /dev/full: no space left on device");
    expect(await tree(d)).toEqual([]);
  });

  it("a full tmpfs (root only): exit 3, the other outputs not written", async (ctx) => {
    const mnt = at("small-graph");
    await mountSmallTmpfs(mnt, "4k", ctx);
    try {
      const d = at("beside-small-graph");
      await mkdir(d);
      // One 4 KB page: the report JSON of two cases (over 4 KB) does not fit.
      const r = await runCli([
        ...GRAPH_EVAL,
        "--out",
        path.join(d, "g.md"),
        "--out",
        `json:${path.join(mnt, "g.json")}`,
      ]);
      expect(r.exitCode, r.stderr).toBe(3);
      expect(r.stdout).toBe("");
      expect(r.stderr.trim().split("\n").at(-1)).toBe(
        `retrace: could not write ${mnt}/g.json: no space left on device`,
      );
      expect(await tree(d)).toEqual([]);
      expect(await tree(mnt)).toEqual([]);
    } finally {
      unmountTmpfs(mnt);
    }
  });
});

describe("every command that writes files checks them before its work (exit 2, nothing on stdout)", () => {
  it.each([
    ["merge", () => ["merge", at("run.json"), "--out", `junit:${at("a-dir")}`], "--out junit:", () => at("a-dir")],
    [
      "compare",
      () => ["compare", at("run.json"), at("run.json"), "--out", `html:${at("a-dir")}`],
      "--out html:",
      () => at("a-dir"),
    ],
    [
      "report",
      () => ["report", at("run.json"), "--out", `markdown:${at("a-dir")}`],
      "--out markdown:",
      () => at("a-dir"),
    ],
    [
      "report --out trec:",
      () => ["report", at("run.json"), "--out", `trec:${at("a-file")}`],
      "--out trec:",
      () => at("a-file", "run.txt"),
    ],
    [
      "tune (closed-port store)",
      () => ["tune", "--kb", MINI_KB, "--store", `http://127.0.0.1:${closed}`, "--out", at("a-dir")],
      "--out",
      () => at("a-dir"),
    ],
    [
      "beir --run-out (closed-port store)",
      () => ["beir", at("no-such-dataset"), "--store", `http://127.0.0.1:${closed}`, "--run-out", at("a-file")],
      "--run-out",
      () => at("a-file", "bm25.trec"),
    ],
  ])("%s", async (_name, args, option, p) => {
    const r = await runCli(args());
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stdout).toBe("");
    const why = p() === at("a-dir") ? `${at("a-dir")} is a directory` : `${at("a-file")} is not a directory`;
    expect(r.stderr.trim()).toBe(refusal(option, why, p()));
  });
});
