/**
 * The Chroma server lifecycle against real servers: start, heartbeat, stop,
 * failures as ServiceUnavailableError (exit 3), and no orphan process however
 * the parent ends (normal exit, uncaught error, SIGTERM, SIGKILL).
 */
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ServiceUnavailableError } from "../../src/errors.js";
import {
  RETRACE_BINDING_PACKAGE,
  resolveBindingCandidates,
  type BindingCandidate,
} from "../../src/retrieval/chroma-binding.js";
import {
  authHeadersFromEnv,
  connectChroma,
  findFreePort,
  liveLocalChromaCount,
  openStore,
  startLocalChroma,
  type LocalChroma,
} from "../../src/retrieval/chroma-server.js";
import { ROOT } from "../helpers/cli.js";
import { chromaPids, pidAlive, portAcceptsConnections, tempDir, waitFor } from "../helpers/chroma.js";

const require = createRequire(import.meta.url);
let server: LocalChroma;
let tmp: { dir: string; cleanup: () => Promise<void> };

beforeAll(async () => {
  tmp = await tempDir("chroma-server");
  server = await startLocalChroma({ dataDir: path.join(tmp.dir, "main") });
});

afterAll(async () => {
  await server?.stop();
  const leftover = chromaPids(tmp.dir);
  await tmp?.cleanup();
  expect(leftover).toEqual([]); // no Chroma process of this file survives it
});

async function expectUnavailable(p: Promise<unknown>): Promise<ServiceUnavailableError> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(ServiceUnavailableError);
  const err = e as ServiceUnavailableError;
  expect(err.exitCode).toBe(3);
  expect(err.code).toBe("SERVICE_UNAVAILABLE");
  return err;
}

/**
 * A script (TypeScript, through tsx) that starts a server on `dataDir`, prints
 * `READY <pid>`, waits for a line on stdin, then does `then`.
 */
function parentScript(dataDir: string, then: "wait" | "throw" | "exit") {
  const src = path.join(ROOT, "src", "retrieval", "chroma-server.ts");
  const code = `
import { startLocalChroma } from ${JSON.stringify(src)};
const s = await startLocalChroma({ dataDir: ${JSON.stringify(dataDir)} });
process.stdout.write("READY " + s.pid + "\\n");
process.stdin.once("data", () => {
  process.stdin.destroy(); // stdin no longer keeps the loop alive
  const then = ${JSON.stringify(then)};
  if (then === "throw") throw new Error("boom from the parent");
  if (then === "wait") setInterval(() => {}, 1000);
  // "exit": nothing keeps the loop alive any more: a normal end without stop()
});
`;
  return code;
}

async function runParent(then: "wait" | "throw" | "exit") {
  const dataDir = path.join(tmp.dir, `parent-${then}`);
  const file = path.join(tmp.dir, `parent-${then}.mts`);
  await writeFile(file, parentScript(dataDir, then));
  const child = spawn(process.execPath, ["--import", "tsx/esm", file], {
    cwd: ROOT,
    stdio: ["pipe", "pipe", "pipe"],
    env: { ...process.env, RETRACE_LOG: "warn" },
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr.on("data", (d: Buffer) => (err += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
    child.once("close", (code, signal) => r({ code, signal })),
  );
  const ready = await waitFor(() => /READY (\d+)/.test(out), 20_000);
  expect(ready, `parent never became ready; stderr: ${err}`).toBe(true);
  const serverPid = Number(/READY (\d+)/.exec(out)?.[1]);
  expect(pidAlive(serverPid)).toBe(true);
  child.stdin.write("go\n");
  return { child, dataDir, serverPid, exited, stderr: () => err };
}

describe("startLocalChroma", () => {
  it("starts a server from node_modules that answers the heartbeat on loopback", async () => {
    expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
    expect(server.dataDir).toBe(path.join(tmp.dir, "main"));
    // The binding and server it runs on, for the test log (docs/decisions/0005-self-started-chroma.md).
    console.log(
      `Chroma server ${server.serverVersion} on ${server.binding?.package}@${server.binding?.version} (declared by ${server.binding?.declaredBy})`,
    );
    expect(server.binding?.file).toMatch(/\.node$/);
    expect(server.serverVersion).toMatch(/^\d+\.\d+\.\d+/);
    const client = await connectChroma({ url: server.url });
    expect(typeof (await client.heartbeat())).toBe("number");
    expect(chromaPids(server.dataDir)).toEqual([server.pid]);
    expect(server.output()).toContain(server.dataDir);
    expect(liveLocalChromaCount()).toBeGreaterThanOrEqual(1);
  });

  it("refuses a port already in use with ServiceUnavailableError (exit 3), leaving no process", async () => {
    const dataDir = path.join(tmp.dir, "second");
    const err = await expectUnavailable(startLocalChroma({ dataDir, port: server.port }));
    expect(err.message).toContain(`port ${server.port}`);
    expect(err.message).toContain("already in use");
    expect(err.message).toMatch(/What to do/);
    expect(chromaPids(dataDir)).toEqual([]);
  });

  it("reports a missing server binary with ServiceUnavailableError", async () => {
    const err = await expectUnavailable(
      startLocalChroma({ dataDir: path.join(tmp.dir, "nobin"), cliPath: path.join(tmp.dir, "missing", "cli.mjs") }),
    );
    expect(err.message).toContain("not found");
    expect(err.message).toContain("--store memory");
  });

  it("reports a server that dies during startup with its captured output", async () => {
    // A "CLI" that prints and exits at once stands in for a server binding that fails to load.
    const fake = path.join(tmp.dir, "dies.mjs");
    await writeFile(fake, 'console.error("binding failed: GLIBC_2.38 not found"); process.exit(1);\n');
    const err = await expectUnavailable(startLocalChroma({ dataDir: path.join(tmp.dir, "dies"), cliPath: fake }));
    expect(err.message).toContain("exited during startup");
    expect(err.message).toContain("GLIBC_2.38 not found");
  });
});

describe("connectChroma", () => {
  it("fails with ServiceUnavailableError naming the URL when nothing listens", async () => {
    const port = await findFreePort();
    const url = `http://127.0.0.1:${port}`;
    const err = await expectUnavailable(connectChroma({ url }));
    expect(err.message).toContain(`is a Chroma server listening at ${url}?`);
    expect(err.message).toMatch(/ECONNREFUSED|connection failed/);
  });

  it("reads CHROMA_URL when no URL is given, and says to unset it when unreachable", async () => {
    const saved = process.env.CHROMA_URL;
    try {
      process.env.CHROMA_URL = server.url;
      await expect(connectChroma()).resolves.toBeDefined();
      const port = await findFreePort();
      process.env.CHROMA_URL = `http://127.0.0.1:${port}`;
      const err = await expectUnavailable(connectChroma());
      expect(err.message).toContain("unset CHROMA_URL to let retrace start a local one");
      delete process.env.CHROMA_URL;
      await expectUnavailable(connectChroma());
    } finally {
      if (saved === undefined) delete process.env.CHROMA_URL;
      else process.env.CHROMA_URL = saved;
    }
  });

  it("rejects a URL that is not http(s)", async () => {
    const err = await expectUnavailable(connectChroma({ url: "localhost:8000" }));
    expect(err.message).toContain("http or https");
  });

  it("takes auth headers from CHROMA_API_KEY / CHROMA_AUTH_TOKEN", () => {
    expect(authHeadersFromEnv({})).toEqual({});
    expect(authHeadersFromEnv({ CHROMA_API_KEY: "k" })).toEqual({ "x-chroma-token": "k" });
    expect(authHeadersFromEnv({ CHROMA_AUTH_TOKEN: "t" })).toEqual({ authorization: "Bearer t" });
    expect(
      authHeadersFromEnv({ CHROMA_AUTH_TOKEN: "t", CHROMA_AUTH_TOKEN_TRANSPORT_HEADER: "X-Chroma-Token" }),
    ).toEqual({ "x-chroma-token": "t" });
  });
});

describe("openStore", () => {
  it("uses the given URL as a remote store whose close() leaves the server running", async () => {
    const store = await openStore({ url: server.url });
    expect(store.kind).toBe("remote");
    expect(store.url).toBe(server.url);
    await store.close();
    await store.close();
    expect(await portAcceptsConnections(server.port)).toBe(true);
  });

  it("fails with exit 3 when CHROMA_URL points at a dead port, without starting a local server", async () => {
    const saved = process.env.CHROMA_URL;
    const dataDir = path.join(tmp.dir, "never-started");
    try {
      process.env.CHROMA_URL = `http://127.0.0.1:${await findFreePort()}`;
      const err = await expectUnavailable(openStore({ dataDir }));
      expect(err.message).toContain("unset CHROMA_URL");
      expect(chromaPids(dataDir)).toEqual([]);
    } finally {
      if (saved === undefined) delete process.env.CHROMA_URL;
      else process.env.CHROMA_URL = saved;
    }
  });
});

describe("no orphan Chroma process", () => {
  it("the parent's exit stops the server it forgot to stop", async () => {
    const p = await runParent("exit");
    const { code } = await p.exited;
    expect(code).toBe(0);
    expect(await waitFor(() => !pidAlive(p.serverPid), 10_000)).toBe(true);
    expect(chromaPids(p.dataDir)).toEqual([]);
  });

  it("an uncaught error in the parent stops the server", async () => {
    const p = await runParent("throw");
    const { code } = await p.exited;
    expect(code).toBe(1);
    expect(p.stderr()).toContain("boom from the parent");
    expect(await waitFor(() => !pidAlive(p.serverPid), 10_000)).toBe(true);
    expect(chromaPids(p.dataDir)).toEqual([]);
  });

  it("SIGTERM on the parent stops the server, then the parent dies of SIGTERM", async () => {
    const p = await runParent("wait");
    p.child.kill("SIGTERM");
    const { signal } = await p.exited;
    expect(signal).toBe("SIGTERM");
    expect(pidAlive(p.serverPid)).toBe(false); // stopped before the parent re-raised
    expect(chromaPids(p.dataDir)).toEqual([]);
  });

  it("SIGKILL on the parent: the server's watchdog stops it", async () => {
    const p = await runParent("wait");
    p.child.kill("SIGKILL");
    await p.exited;
    expect(await waitFor(() => !pidAlive(p.serverPid), 10_000)).toBe(true);
    expect(chromaPids(p.dataDir)).toEqual([]);
  });
});

describe("stop", () => {
  // Runs last in this file: it stops the shared server (afterAll's second stop must be harmless).
  it("stops the server: pid gone, port closed; a second stop is harmless", async () => {
    const { pid, port } = server;
    await server.stop();
    expect(pidAlive(pid)).toBe(false);
    expect(await portAcceptsConnections(port)).toBe(false);
    await expect(server.stop()).resolves.toBeUndefined();
    expect(chromaPids(server.dataDir)).toEqual([]);
    await expectUnavailable(connectChroma({ url: server.url }));
  });

  describe("the server binding is the first candidate that loads (src/retrieval/chroma-binding.ts)", () => {
    /** A stand-in for a binding built for a newer glibc: a module whose load throws the dynamic loader's message. */
    async function newerGlibcBinding(name: string): Promise<BindingCandidate> {
      const file = path.join(tmp.dir, `${name}.cjs`);
      await writeFile(
        file,
        `throw new Error("/lib/x86_64-linux-gnu/libc.so.6: version \\\`GLIBC_2.99' not found (required by ${file})");\n`,
      );
      return { package: name, declaredBy: "chromadb", file, version: "9.9.9" };
    }
    const installed = () => resolveBindingCandidates(require.resolve("chromadb")).filter((c) => c.file !== undefined);

    it("passes over a binding that fails to load and starts the server on the next one", async () => {
      const real = installed();
      expect(real.length).toBeGreaterThan(0);
      // Of the installed candidates, the last one (retrace's own on linux/x64) runs here; the forced failure comes first.
      const usable = real[real.length - 1]!;
      const s = await startLocalChroma({
        dataDir: path.join(tmp.dir, "fallback"),
        bindings: [await newerGlibcBinding("too-new"), usable],
      });
      try {
        expect(s.binding?.package).toBe(usable.package);
        expect(typeof (await (await connectChroma({ url: s.url })).heartbeat())).toBe("number");
      } finally {
        await s.stop();
      }
    });

    it("when no binding loads: exit 3, one message naming the glibc needed and found, and both ways out; no process left", async () => {
      const dataDir = path.join(tmp.dir, "nobinding");
      const err = await expectUnavailable(
        startLocalChroma({
          dataDir,
          bindings: [
            await newerGlibcBinding("too-new"),
            { package: RETRACE_BINDING_PACKAGE, declaredBy: "retrace-eval", missing: "not installed" },
          ],
        }),
      );
      const glibc = (process.report.getReport() as { header: { glibcVersionRuntime?: string } }).header
        .glibcVersionRuntime;
      expect(err.message).toContain("no Chroma server binding runs on this system");
      expect(err.message).toContain(`too-new@9.9.9: needs glibc 2.99, this system has ${glibc ?? "none"}`);
      expect(err.message).toContain(`${RETRACE_BINDING_PACKAGE}: not installed`);
      expect(err.message).toContain("--store memory");
      expect(err.message).toContain("--store URL");
      expect(chromaPids(dataDir)).toEqual([]);
    });
  });
});
