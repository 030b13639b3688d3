/**
 * Helpers of the Chroma integration tests: temp dirs, finding Chroma server
 * processes through /proc, small fixtures, and clearly named fake embedders.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import type { Chunk, Locale } from "../../src/kb/types.js";
import type { Embedder } from "../../src/retrieval/types.js";
import type { ChromaClientLike } from "../../src/retrieval/chroma-types.js";
import { afterAll, beforeAll, expect } from "vitest";
import { connectChroma, startLocalChroma, type LocalChroma } from "../../src/retrieval/chroma-server.js";
import { BIN, ROOT } from "./cli.js";

export async function tempDir(prefix: string): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), `retrace-${prefix}-`));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/**
 * One real local Chroma server for a whole test file: started in beforeAll
 * on a temp data dir, stopped in afterAll, which also asserts that no Chroma
 * process of that dir survives. Read the fields inside tests and hooks.
 */
export function useLocalChroma(prefix: string): { server: LocalChroma; client: ChromaClientLike; dir: string } {
  const ctx = {} as { server: LocalChroma; client: ChromaClientLike; dir: string };
  let cleanup: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    const tmp = await tempDir(prefix);
    ctx.dir = tmp.dir;
    cleanup = tmp.cleanup;
    ctx.server = await startLocalChroma({ dataDir: path.join(tmp.dir, "chroma") });
    ctx.client = await connectChroma({ url: ctx.server.url });
  });
  afterAll(async () => {
    await ctx.server?.stop();
    const leftover = ctx.dir === undefined ? [] : chromaPids(ctx.dir);
    await cleanup?.();
    expect(leftover).toEqual([]); // no Chroma process of this file survives it
  });
  return ctx;
}

/** Pids of running Chroma server processes (retrace's launcher, or chromadb's own CLI) whose command line mentions `dataDir` (all of them when omitted). */
export function chromaPids(dataDir?: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let cmdline: string;
    let state: string;
    try {
      cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").join(" ");
      state = /^State:\s+(\S)/m.exec(readFileSync(`/proc/${entry}/status`, "utf8"))?.[1] ?? "";
    } catch {
      continue; // exited meanwhile
    }
    if (state === "Z") continue; // a zombie is dead, only not yet reaped
    if (!/retrieval\/chroma-launcher\.(ts|js) run |chromadb\/dist\/cli\.mjs/.test(cmdline)) continue;
    if (dataDir !== undefined && !cmdline.includes(dataDir)) continue;
    pids.push(Number(entry));
  }
  return pids;
}

export function pidAlive(pid: number): boolean {
  try {
    const state = /^State:\s+(\S)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    return state !== undefined && state !== "Z";
  } catch {
    return false;
  }
}

/** Polls `cond` every 50 ms until it holds or `timeoutMs` passes; returns whether it held. */
export async function waitFor(cond: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (await cond()) return true;
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** True when something accepts TCP connections on 127.0.0.1:port. */
export function portAcceptsConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host: "127.0.0.1", port });
    s.once("connect", () => {
      s.destroy();
      resolve(true);
    });
    s.once("error", () => resolve(false));
  });
}

/** A loopback port nothing listens on: bound, then closed (a store URL that refuses connections). */
export function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** The pid of a process that has exited (for "owner is gone" staging collections). */
export async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
  await new Promise((r) => child.once("exit", r));
  return child.pid as number;
}

export function chunk(id: string, locale: Locale, text: string, parentId: string = id.split("#")[0] as string): Chunk {
  return { id, parentId, locale, title: parentId, section: "Body", text };
}

/**
 * FAKE embedder: looks each text up in a table of hand-written vectors (an
 * unknown text is an error). Lets a test know the exact cosine of every pair.
 */
export class TableEmbedderFake implements Embedder {
  readonly description = "test fake: vectors from a fixed table";
  constructor(
    readonly id: string,
    readonly dimension: number,
    private readonly table: Record<string, number[]>,
    /** Texts embedded so far (to assert how far an ingest went). */
    readonly calls: string[][] = [],
  ) {}
  async embedDocuments(texts: string[]): Promise<number[][]> {
    this.calls.push(texts);
    return texts.map((t) => this.lookup(t));
  }
  async embedQuery(text: string): Promise<number[]> {
    return this.lookup(text);
  }
  private lookup(t: string): number[] {
    const v = this.table[t];
    if (v === undefined) throw new Error(`TableEmbedderFake has no vector for ${JSON.stringify(t)}`);
    return v;
  }
}

/** FAKE embedder that declares one dimension and returns vectors of another (a broken model). */
export class WrongDimensionEmbedderFake implements Embedder {
  readonly description = "test fake: returns vectors of the wrong length";
  constructor(
    readonly id: string,
    readonly dimension: number,
    private readonly actual: number,
  ) {}
  async embedDocuments(texts: string[]): Promise<number[][]> {
    return texts.map(() => Array.from({ length: this.actual }, (_, i) => (i === 0 ? 1 : 0)));
  }
  async embedQuery(): Promise<number[]> {
    return Array.from({ length: this.actual }, (_, i) => (i === 0 ? 1 : 0));
  }
}

/** Spawns `node bin/retrace.mjs ...args` and returns the child plus live views of its output. */
export function spawnCli(
  args: string[],
  env: Record<string, string | undefined> = {},
): {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
} {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: ROOT,
    env: { ...process.env, NO_COLOR: "1", RETRACE_LOG: "debug", CHROMA_URL: "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout?.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (err += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("close", (code, signal) => resolve({ code, signal })),
  );
  return { child, stdout: () => out, stderr: () => err, exited };
}
