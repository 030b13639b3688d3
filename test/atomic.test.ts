/**
 * writeFileAtomic writes into what it is given (docs/reliability.md,
 * "Outputs"): regular files and new paths atomically, symlinks followed (the
 * link stays a link), devices, FIFOs, sockets and file descriptors streamed
 * into and never replaced; a failure is OutputWriteError (exit 3) and leaves
 * no temporary file. checkWritable is the exit-2 preflight.
 */
import { spawn, spawnSync } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import { chmod, lstat, mkdir, readdir, readFile, readlink, stat, symlink, writeFile } from "node:fs/promises";
import net from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkWritable, fdOfPath, OutputWriteError, writeFileAtomic } from "../src/atomic.js";
import { exitCodeOf, InvalidArgumentError } from "../src/errors.js";
import { tempDir } from "./helpers/chroma.js";
import { IS_ROOT, mountSmallTmpfs, unmountTmpfs } from "./helpers/fixtures.js";

let dir: string;
let cleanup: () => Promise<void>;
const at = (...p: string[]) => path.join(dir, ...p);

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir("atomic"));
});
afterAll(() => cleanup());

/** Temporary files of writeFileAtomic / checkWritable left in `d`. */
async function leftovers(d: string): Promise<string[]> {
  return (await readdir(d)).filter((f) => f.endsWith(".tmp"));
}

async function failure(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error("expected a rejection");
}

/** Runs `cat <fifo>` (the reader) and resolves with what it read. */
function readFifo(fifo: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn("cat", [fifo], { stdio: ["ignore", "pipe", "inherit"] });
    const chunks: Buffer[] = [];
    child.stdout.on("data", (c: Buffer) => chunks.push(c));
    child.on("error", reject);
    child.on("close", () => resolve(Buffer.concat(chunks)));
  });
}

function mkfifo(p: string): void {
  const r = spawnSync("mkfifo", [p]);
  if (r.status !== 0) throw new Error(`mkfifo ${p} failed: ${r.stderr}`);
}

describe("writeFileAtomic: regular files and new paths", () => {
  it("replaces a regular file atomically, keeping its permission bits and leaving no temporary file", async () => {
    await writeFile(at("plain.json"), "old");
    await chmod(at("plain.json"), 0o640);
    await writeFileAtomic(at("plain.json"), "new ✓");
    expect(await readFile(at("plain.json"), "utf8")).toBe("new ✓");
    const st = await lstat(at("plain.json"));
    expect(st.isFile()).toBe(true);
    expect(st.mode & 0o777).toBe(0o640);
    expect(await leftovers(dir)).toEqual([]);
  });

  it("creates a new path, its missing folders included", async () => {
    await writeFileAtomic(at("new", "deep", "r.md"), "# r\n");
    expect(await readFile(at("new", "deep", "r.md"), "utf8")).toBe("# r\n");
  });

  it("writes bytes (Uint8Array) as given", async () => {
    await writeFileAtomic(at("bytes.bin"), new Uint8Array([0, 255, 10]));
    expect([...(await readFile(at("bytes.bin")))]).toEqual([0, 255, 10]);
  });

  it("an empty path is a usage error (exit 2)", async () => {
    const e = await failure(writeFileAtomic("", "x"));
    expect(InvalidArgumentError.isInstance(e)).toBe(true);
  });
});

describe("writeFileAtomic: symlinks are followed, the link stays a link", () => {
  it("a symlink to a file: the target is rewritten, the link untouched", async () => {
    await mkdir(at("targets"), { recursive: true });
    await writeFile(at("targets", "real.json"), "old");
    await symlink(path.join("targets", "real.json"), at("link.json")); // relative link
    await writeFileAtomic(at("link.json"), "through the link");
    expect((await lstat(at("link.json"))).isSymbolicLink()).toBe(true);
    expect(await readlink(at("link.json"))).toBe(path.join("targets", "real.json"));
    expect(await readFile(at("targets", "real.json"), "utf8")).toBe("through the link");
    expect(await leftovers(at("targets"))).toEqual([]);
    expect(await leftovers(dir)).toEqual([]);
  });

  it("a chain of symlinks through a symlinked folder", async () => {
    await mkdir(at("artifacts-real"), { recursive: true });
    await symlink(at("artifacts-real"), at("artifacts")); // a symlinked artifacts folder
    await symlink("report.json", at("artifacts-real", "latest.json"));
    await symlink(at("artifacts", "latest.json"), at("chain.json"));
    await writeFileAtomic(at("chain.json"), "chained");
    expect((await lstat(at("chain.json"))).isSymbolicLink()).toBe(true);
    expect((await lstat(at("artifacts-real", "latest.json"))).isSymbolicLink()).toBe(true);
    expect(await readFile(at("artifacts-real", "report.json"), "utf8")).toBe("chained");
  });

  it("a dangling symlink: its target is created, the link stays a link", async () => {
    await symlink(at("not-yet", "made.json"), at("dangling.json"));
    await writeFileAtomic(at("dangling.json"), "created");
    expect((await lstat(at("dangling.json"))).isSymbolicLink()).toBe(true);
    expect(await readFile(at("not-yet", "made.json"), "utf8")).toBe("created");
  });

  it("a symlink to a directory is an OutputWriteError (exit 3) naming the path; nothing is written", async () => {
    await mkdir(at("a-dir"), { recursive: true });
    await symlink(at("a-dir"), at("dir-link"));
    const e = await failure(writeFileAtomic(at("dir-link"), "x"));
    expect(e).toBeInstanceOf(OutputWriteError);
    expect(exitCodeOf(e)).toBe(3);
    expect((e as Error).message).toBe(`could not write ${at("dir-link")} (→ ${at("a-dir")}): is a directory`);
    expect((await lstat(at("dir-link"))).isSymbolicLink()).toBe(true);
    expect(await readdir(at("a-dir"))).toEqual([]);
  });

  it("a directory itself is an OutputWriteError (EISDIR)", async () => {
    const e = await failure(writeFileAtomic(at("a-dir"), "x"));
    expect(e).toBeInstanceOf(OutputWriteError);
    expect((e as OutputWriteError).errno).toBe("EISDIR");
  });

  it("a symlink loop is an OutputWriteError (ELOOP)", async () => {
    await symlink(at("loop-b"), at("loop-a"));
    await symlink(at("loop-a"), at("loop-b"));
    const e = await failure(writeFileAtomic(at("loop-a"), "x"));
    expect((e as OutputWriteError).errno).toBe("ELOOP");
  });
});

describe("writeFileAtomic: FIFOs, sockets and descriptors are streamed into", () => {
  it("a FIFO: the concurrent reader gets every byte, the FIFO stays a FIFO", async () => {
    mkfifo(at("pipe"));
    const data = "x".repeat(300_000) + "end\n"; // larger than a pipe buffer
    const reading = readFifo(at("pipe"));
    await writeFileAtomic(at("pipe"), data);
    expect((await reading).toString("utf8")).toBe(data);
    expect((await lstat(at("pipe"))).isFIFO()).toBe(true);
    expect(await leftovers(dir)).toEqual([]);
  });

  it("a symlink to a FIFO: streamed into the FIFO, the link stays a link", async () => {
    mkfifo(at("pipe2"));
    await symlink(at("pipe2"), at("pipe-link"));
    const reading = readFifo(at("pipe-link"));
    await writeFileAtomic(at("pipe-link"), "via link\n");
    expect((await reading).toString("utf8")).toBe("via link\n");
    expect((await lstat(at("pipe-link"))).isSymbolicLink()).toBe(true);
    expect((await lstat(at("pipe2"))).isFIFO()).toBe(true);
  });

  it("a FIFO whose reader goes away: OutputWriteError with EPIPE", async () => {
    mkfifo(at("pipe3"));
    const reader = spawn("head", ["-c", "10", at("pipe3")], { stdio: "ignore" });
    const closed = new Promise((r) => reader.on("close", r));
    const e = await failure(writeFileAtomic(at("pipe3"), "y".repeat(4_000_000)));
    await closed;
    expect(e).toBeInstanceOf(OutputWriteError);
    expect((e as OutputWriteError).errno).toBe("EPIPE");
    expect((e as Error).message).toMatch(/^could not write .*pipe3: the reader closed the pipe \(EPIPE\)$/);
    expect((await lstat(at("pipe3"))).isFIFO()).toBe(true);
  });

  it("a Unix socket: the listener receives the bytes, the socket stays a socket", async () => {
    const sock = at("out.sock");
    const chunks: Buffer[] = [];
    let ended!: () => void;
    const got = new Promise<void>((r) => (ended = r));
    const server = net.createServer((c) => {
      c.on("data", (d: Buffer) => chunks.push(d));
      c.on("end", () => ended());
    });
    await new Promise<void>((r) => server.listen(sock, r));
    try {
      await writeFileAtomic(sock, "over the socket\n");
      await got;
      expect(Buffer.concat(chunks).toString("utf8")).toBe("over the socket\n");
      expect((await lstat(sock)).isSocket()).toBe(true);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it("/dev/fd/N and /proc/self/fd/N write into the open descriptor (the file is not replaced)", async () => {
    await writeFile(at("fd-target.txt"), "");
    const before = (await stat(at("fd-target.txt"))).ino;
    const fd = openSync(at("fd-target.txt"), "w");
    try {
      await writeFileAtomic(`/dev/fd/${fd}`, "one ");
      await writeFileAtomic(`/proc/self/fd/${fd}`, "two");
    } finally {
      closeSync(fd);
    }
    expect(await readFile(at("fd-target.txt"), "utf8")).toBe("one two");
    expect((await stat(at("fd-target.txt"))).ino).toBe(before);
  });

  it("`-`, /dev/stdout and /dev/stderr name the standard descriptors", () => {
    expect(fdOfPath("-")).toBe(1);
    expect(fdOfPath("/dev/stdout")).toBe(1);
    expect(fdOfPath("/dev/stderr")).toBe(2);
    expect(fdOfPath(`/proc/${process.pid}/fd/7`)).toBe(7);
    expect(fdOfPath("/proc/1/fd/7")).toBe(process.pid === 1 ? 7 : undefined);
    expect(fdOfPath("./-")).toBeUndefined();
  });

  it("/dev/full: OutputWriteError ENOSPC, exit 3, the device untouched, no temporary file", async () => {
    const e = await failure(writeFileAtomic("/dev/full", "z".repeat(100_000)));
    expect(e).toBeInstanceOf(OutputWriteError);
    expect(exitCodeOf(e)).toBe(3);
    expect((e as Error).message).toBe("could not write /dev/full: no space left on device");
    expect((await lstat("/dev/full")).isCharacterDevice()).toBe(true);
    expect(await leftovers("/dev")).toEqual([]);
  });
});

describe("writeFileAtomic: device nodes made with mknod (root only)", () => {
  // mknod needs root (CAP_MKNOD) and a file system mounted without nodev.
  const made = (() => {
    if (!IS_ROOT) return "not running as root";
    return undefined;
  })();

  it("a null device: written, still a character device; a full device: ENOSPC, no temporary file", async (ctx) => {
    if (made !== undefined) {
      console.log(`skipped: mknod test: ${made}`);
      ctx.skip();
    }
    await mkdir(at("dev"), { recursive: true });
    const mk = (name: string, minor: string) => spawnSync("mknod", [at("dev", name), "c", "1", minor]);
    const r = mk("null", "3");
    if (r.status !== 0) {
      console.log(`skipped: mknod failed: ${r.stderr.toString().trim()}`);
      ctx.skip();
    }
    mk("full", "7");
    try {
      await writeFileAtomic(at("dev", "null"), "discarded");
    } catch (e) {
      if ((e as OutputWriteError).errno === "EACCES") {
        console.log(`skipped: device nodes cannot be opened here (nodev mount?)`);
        ctx.skip();
      }
      throw e;
    }
    expect((await lstat(at("dev", "null"))).isCharacterDevice()).toBe(true);
    await symlink(at("dev", "null"), at("dev", "null-link"));
    await writeFileAtomic(at("dev", "null-link"), "discarded");
    expect((await lstat(at("dev", "null-link"))).isSymbolicLink()).toBe(true);
    expect((await lstat(at("dev", "null"))).isCharacterDevice()).toBe(true);

    const e = await failure(writeFileAtomic(at("dev", "full"), "z".repeat(10_000)));
    expect((e as Error).message).toBe(`could not write ${at("dev", "full")}: no space left on device`);
    expect((await lstat(at("dev", "full"))).isCharacterDevice()).toBe(true);
    expect(await leftovers(at("dev"))).toEqual([]);
  });
});

describe("writeFileAtomic: a full file system (tmpfs, root only)", () => {
  it("ENOSPC on the atomic path: exit 3, the old file intact, the temporary file removed", async (ctx) => {
    const mnt = at("small");
    await mountSmallTmpfs(mnt, "64k", ctx);
    try {
      await writeFile(path.join(mnt, "report.json"), "old report");
      const e = await failure(writeFileAtomic(path.join(mnt, "report.json"), "w".repeat(200_000)));
      expect(e).toBeInstanceOf(OutputWriteError);
      expect((e as Error).message).toBe(`could not write ${path.join(mnt, "report.json")}: no space left on device`);
      expect(await readFile(path.join(mnt, "report.json"), "utf8")).toBe("old report");
      expect(await leftovers(mnt)).toEqual([]);
    } finally {
      unmountTmpfs(mnt);
    }
  });
});

describe("checkWritable: the exit-2 preflight of an output option", () => {
  const refused = async (p: string, option: string) => {
    const e = await failure(checkWritable(p, option));
    expect(InvalidArgumentError.isInstance(e)).toBe(true);
    expect(exitCodeOf(e)).toBe(2);
    return (e as Error).message;
  };

  it("accepts an existing file, a new path (missing folders included), symlinks, a dangling symlink, a FIFO, a device, stdout", async () => {
    await writeFile(at("ok.json"), "");
    await checkWritable(at("ok.json"), "--report-json");
    await checkWritable(at("to", "be", "made.json"), "--report-json");
    await checkWritable(at("link.json"), "--out");
    await symlink(at("later", "x.json"), at("dangling2.json"));
    await checkWritable(at("dangling2.json"), "--out");
    mkfifo(at("pipe4"));
    await checkWritable(at("pipe4"), "--junit");
    await checkWritable("/dev/null", "--junit");
    await checkWritable("-", "--report-json");
    await checkWritable("/dev/stdout", "--report-json");
    expect(await leftovers(dir)).toEqual([]);
    expect((await lstat(at("pipe4"))).isFIFO()).toBe(true);
  });

  it("refuses an empty path, naming the option", async () => {
    expect(await refused("", "--report-json")).toBe('Expected `--report-json` to be a file path, got ""');
  });

  it("refuses a directory and a symlink to one, naming the option and the path", async () => {
    expect(await refused(at("a-dir"), "--out")).toBe(
      `Expected \`--out\` to be a path retrace can write (${at("a-dir")} is a directory), got ${JSON.stringify(at("a-dir"))}`,
    );
    expect(await refused(at("dir-link"), "--html")).toMatch(
      /^Expected `--html` to be a path retrace can write \(.*a-dir is a directory\), got ".*dir-link"$/,
    );
  });

  it("refuses a path below a regular file", async () => {
    expect(await refused(at("ok.json", "x.json"), "--junit")).toContain(`${at("ok.json")} is not a directory`);
  });

  it("refuses a folder where files cannot be created", async () => {
    // /proc refuses new files even for root (access() alone would say yes to root).
    expect(await refused("/proc/retrace-report.json", "--report-json")).toMatch(
      /^Expected `--report-json` to be a path retrace can write \(cannot create a file in \/proc: .*\), got "\/proc\/retrace-report.json"$/,
    );
  });

  it("refuses a read-only file and folder (not as root)", async (ctx) => {
    if (IS_ROOT) {
      console.log("skipped: permission bits do not stop root (the /proc case covers an unwritable folder)");
      ctx.skip();
    }
    await mkdir(at("ro"), { recursive: true });
    await writeFile(at("ro", "f.json"), "");
    await chmod(at("ro", "f.json"), 0o444);
    await chmod(at("ro"), 0o555);
    try {
      expect(await refused(at("ro", "f.json"), "--out")).toContain("permission denied");
      expect(await refused(at("ro", "new.json"), "--out")).toContain(
        `cannot create a file in ${at("ro")}: permission denied`,
      );
    } finally {
      await chmod(at("ro"), 0o755);
    }
  });
});
