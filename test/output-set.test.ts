/**
 * A run's outputs as one set (src/output-set.ts; docs/reliability.md,
 * "Outputs"): `checkOutputs` refuses bad paths and two options naming one
 * file (exit 2, nothing written); `writeOutputs` stages every file, streams
 * into devices and FIFOs, then publishes the files — a failure before
 * publishing (a device that is full, a full tmpfs) leaves every file of the
 * set unwritten (old contents kept), no temporary file and no folder it made.
 */
import { spawn, spawnSync } from "node:child_process";
import { lstat, mkdir, readdir, readFile, readlink, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OutputWriteError } from "../src/atomic.js";
import { exitCodeOf, InvalidArgumentError } from "../src/errors.js";
import { checkOutputs, writeOutputs } from "../src/output-set.js";
import { tempDir } from "./helpers/chroma.js";
import { mountSmallTmpfs, unmountTmpfs } from "./helpers/fixtures.js";

let dir: string;
let cleanup: () => Promise<void>;
const at = (...p: string[]) => path.join(dir, ...p);

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir("output-set"));
});
afterAll(() => cleanup());

async function failure(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error("expected a rejection");
}

/** Every file under `d` (relative paths), temporary files included. */
async function tree(d: string): Promise<string[]> {
  return (await readdir(d, { recursive: true })).map(String).sort();
}

const exists = (p: string) =>
  lstat(p).then(
    () => true,
    () => false,
  );

describe("writeOutputs", () => {
  it("writes every file, creating missing folders, following a symlink (the link stays), streaming into a FIFO", async () => {
    const d = at("ok");
    await mkdir(d);
    await writeFile(path.join(d, "real.md"), "old");
    await symlink("real.md", path.join(d, "link.md"));
    expect(spawnSync("mkfifo", [path.join(d, "pipe")]).status).toBe(0);
    const reader = spawn("cat", [path.join(d, "pipe")], { stdio: ["ignore", "pipe", "inherit"] });
    let read = "";
    reader.stdout.setEncoding("utf8");
    reader.stdout.on("data", (c: string) => (read += c));
    const closed = new Promise((r) => reader.on("close", r));
    await writeOutputs([
      { option: "--report-json", path: path.join(d, "new", "deep", "r.json"), data: "{}\n" },
      { option: "--out", path: path.join(d, "link.md"), data: "# md\n" },
      { option: "--junit", path: path.join(d, "pipe"), data: "<xml/>\n" },
    ]);
    await closed;
    expect(await readFile(path.join(d, "new", "deep", "r.json"), "utf8")).toBe("{}\n");
    expect(await readlink(path.join(d, "link.md"))).toBe("real.md");
    expect(await readFile(path.join(d, "real.md"), "utf8")).toBe("# md\n");
    expect(read).toBe("<xml/>\n");
    expect((await lstat(path.join(d, "pipe"))).isFIFO()).toBe(true);
    expect((await tree(d)).filter((f) => f.endsWith(".tmp"))).toEqual([]);
  });

  it("a device that fails (/dev/full): exit 3 naming it, no file of the set written, old contents kept, no temporary file, no folder it made", async () => {
    const d = at("full-device");
    await mkdir(d);
    await writeFile(path.join(d, "kept.md"), "old markdown");
    const e = await failure(
      writeOutputs([
        { option: "--out", path: path.join(d, "kept.md"), data: "new markdown" },
        { option: "--junit", path: path.join(d, "made", "for", "j.xml"), data: "<xml/>" },
        { option: "--report-json", path: "/dev/full", data: "x".repeat(10_000) },
      ]),
    );
    expect(e).toBeInstanceOf(OutputWriteError);
    expect(exitCodeOf(e)).toBe(3);
    expect((e as Error).message).toBe("could not write /dev/full: no space left on device");
    expect(await readFile(path.join(d, "kept.md"), "utf8")).toBe("old markdown");
    expect(await tree(d)).toEqual(["kept.md"]); // no j.xml, no made/for/, no .tmp
    expect((await lstat("/dev/full")).isCharacterDevice()).toBe(true);
  });

  it("a path under a regular file: exit 3, and the file staged before it is not published", async () => {
    const d = at("enotdir");
    await mkdir(d);
    await writeFile(path.join(d, "a-file"), "");
    const e = await failure(
      writeOutputs([
        { option: "--out", path: path.join(d, "first.md"), data: "md" },
        { option: "--html", path: path.join(d, "a-file", "x.html"), data: "html" },
      ]),
    );
    expect(exitCodeOf(e)).toBe(3);
    expect((e as Error).message).toBe(
      `could not write ${path.join(d, "a-file", "x.html")}: a component of the path is not a directory`,
    );
    expect(await tree(d)).toEqual(["a-file"]);
  });

  it("text is written with the values of the credential variables of the environment redacted (the file boundary, docs/reliability.md)", async () => {
    const key = "sk-live-Pq93vX7nLmT2";
    const before = process.env.MY_SERVICE_API_KEY;
    process.env.MY_SERVICE_API_KEY = key;
    try {
      await writeOutputs([
        { option: "--out", path: at("redacted", "r.md"), data: `model said: 401 Incorrect API key provided: ${key}.` },
      ]);
    } finally {
      if (before === undefined) delete process.env.MY_SERVICE_API_KEY;
      else process.env.MY_SERVICE_API_KEY = before;
    }
    expect(await readFile(at("redacted", "r.md"), "utf8")).toBe("model said: 401 Incorrect API key provided: ***.");
  });

  it("an empty path: exit 2 naming the option, nothing written", async () => {
    const d = at("empty");
    await mkdir(d);
    const e = await failure(
      writeOutputs([
        { option: "--out", path: path.join(d, "a.md"), data: "x" },
        { option: "--report-json", path: "", data: "{}" },
      ]),
    );
    expect(InvalidArgumentError.isInstance(e)).toBe(true);
    expect((e as Error).message).toBe('Expected `--report-json` to be a file path, got ""');
    expect(await tree(d)).toEqual([]);
  });
});

describe("writeOutputs: a full file system (tmpfs, root only)", () => {
  it("ENOSPC while staging: exit 3, the other outputs (on another file system too) unwritten, old file intact, no temporary file", async (ctx) => {
    const mnt = at("small");
    await mountSmallTmpfs(mnt, "64k", ctx);
    try {
      const other = at("beside-small");
      await mkdir(other);
      await writeFile(path.join(mnt, "report.json"), "old report");
      await checkOutputs([{ option: "--report-json", path: path.join(mnt, "report.json") }]); // not full yet: the preflight passes
      const e = await failure(
        writeOutputs([
          { option: "--out", path: path.join(other, "r.md"), data: "md" },
          { option: "--report-json", path: path.join(mnt, "report.json"), data: "w".repeat(200_000) },
        ]),
      );
      expect(e).toBeInstanceOf(OutputWriteError);
      expect((e as Error).message).toBe(`could not write ${path.join(mnt, "report.json")}: no space left on device`);
      expect(await readFile(path.join(mnt, "report.json"), "utf8")).toBe("old report");
      expect(await tree(mnt)).toEqual(["report.json"]);
      expect(await tree(other)).toEqual([]);
    } finally {
      unmountTmpfs(mnt);
    }
  });
});

describe("checkOutputs", () => {
  const refused = async (specs: Parameters<typeof checkOutputs>[0]) => {
    const e = await failure(checkOutputs(specs));
    expect(InvalidArgumentError.isInstance(e)).toBe(true);
    expect(exitCodeOf(e)).toBe(2);
    return (e as Error).message;
  };

  it("accepts new paths, existing files, stdout once, and writes nothing", async () => {
    const d = at("check-ok");
    await mkdir(d);
    await checkOutputs([
      { option: "--out", path: path.join(d, "new", "r.md") },
      { option: "--report-json", path: "-" },
    ]);
    expect(await tree(d)).toEqual([]);
    expect(await exists(path.join(d, "new"))).toBe(false);
  });

  it("refuses a second document on stdout (issue 49): `-` and /dev/stdout, or stdout already taken by --json", async () => {
    const two = await checkOutputs([
      { option: "--report-json", path: "-" },
      { option: "--junit", path: "/dev/stdout" },
    ]).catch((e: unknown) => e as Error);
    expect(two).toBeInstanceOf(Error);
    expect((two as Error).message).toContain("`--junit` to be a path other than stdout");
    const taken = await checkOutputs([{ option: "--out json:", path: "-" }], { stdout: "--json" }).catch(
      (e: unknown) => e as Error,
    );
    expect((taken as Error).message).toContain("--json prints its document there already");
  });

  it("refuses a directory, a path under a file and an empty path, naming the option and the path", async () => {
    const d = at("check-bad");
    await mkdir(d);
    await writeFile(path.join(d, "f"), "");
    expect(await refused([{ option: "--out", path: d }])).toBe(
      `Expected \`--out\` to be a path retrace can write (${d} is a directory), got ${JSON.stringify(d)}`,
    );
    expect(await refused([{ option: "--junit", path: path.join(d, "f", "j.xml") }])).toContain(
      `${path.join(d, "f")} is not a directory`,
    );
    expect(await refused([{ option: "--report-json", path: "" }])).toBe(
      'Expected `--report-json` to be a file path, got ""',
    );
  });

  it("refuses two options that lead to one file (also through a symlink)", async () => {
    const d = at("check-twice");
    await mkdir(d);
    await symlink("same.md", path.join(d, "alias.md"));
    const msg = await refused([
      { option: "--out", path: path.join(d, "same.md") },
      { option: "--report-json", path: path.join(d, "alias.md") },
    ]);
    expect(msg).toBe(
      `Expected \`--report-json\` to be a file no other output option names (--out writes ${path.join(d, "same.md")} too), got ${JSON.stringify(path.join(d, "alias.md"))}`,
    );
  });
});
