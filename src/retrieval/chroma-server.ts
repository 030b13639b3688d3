/**
 * The Chroma server: start a local one from `node_modules`, connect to one,
 * and never leave one behind.
 *
 * A local server is `node <chromadb>/dist/cli.mjs run --host 127.0.0.1 --path DIR --port P`
 * (the native server runs inside that node process; never through `npx`,
 * whose death leaves the server running). It listens on loopback only.
 *
 * No orphan process, however the parent ends:
 *   - `stop()` sends SIGINT (Chroma shuts down cleanly), waits, then SIGKILL;
 *   - the parent's `exit` event (normal end, uncaught exception, unhandled
 *     rejection, `process.exit`) sends SIGINT to every live child;
 *   - SIGINT / SIGTERM / SIGHUP on the parent, when nothing else listens to
 *     that signal, stop the children, then the signal is re-raised (exit
 *     status 130 / 143 / 129); when another listener exists it owns the
 *     shutdown (it should close the store) and the two mechanisms below
 *     remain the safety net;
 *   - a watchdog preloaded into the child (`--import data:...`, a worker
 *     thread, since the server blocks the child's main thread in native code)
 *     polls `process.ppid` and stops the server when its parent is gone,
 *     which covers a parent killed with SIGKILL.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import net from "node:net";
import path from "node:path";
import { ChromaClient } from "chromadb";
import { ServiceUnavailableError } from "../errors.js";
import { log } from "../log.js";
import { acquireDirLock } from "./lock.js";
import { ChromaRequestFailure, installRequestDeadline, redactSecrets, redactUrl, requestTimeoutMs } from "./chroma-faults.js";

export const DEFAULT_STARTUP_TIMEOUT_MS = 20_000;
export const DEFAULT_STOP_TIMEOUT_MS = 10_000;
export const DEFAULT_HEARTBEAT_TIMEOUT_MS = 10_000;
/** How often the parent polls the heartbeat while a local server starts. */
export const HEARTBEAT_POLL_MS = 100;
/** How often the child's watchdog checks that its parent is still alive. */
export const WATCHDOG_POLL_MS = 250;
/** Most of the server's output kept for error messages (the tail is kept). */
const OUTPUT_LIMIT = 16_384;

export interface LocalChroma {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  readonly dataDir: string;
  readonly pid: number;
  /** What the server printed so far (ANSI codes removed; the tail when long). */
  output(): string;
  /** SIGINT, wait up to the stop timeout, then SIGKILL. Safe to call more than once. */
  stop(): Promise<void>;
}

export interface StartLocalChromaOptions {
  /** Where Chroma keeps its data (created if missing). */
  dataDir: string;
  /** Loopback port; default: a free one (found by binding port 0). */
  port?: number;
  /** Give up when the heartbeat has not answered by then; default 20 s. */
  startupTimeoutMs?: number;
  /** SIGKILL when SIGINT has not stopped the server by then; default 10 s. */
  stopTimeoutMs?: number;
  /** Path of chromadb's `dist/cli.mjs`; default: resolved from the installed `chromadb` package. */
  cliPath?: string;
}

/** Path of `chromadb/dist/cli.mjs`, resolved through node's module resolution (not the cwd). */
export function resolveChromaCli(): string {
  const require = createRequire(import.meta.url);
  // The "require" export of chromadb is dist/cjs/chromadb.cjs; the CLI sits in dist/.
  const main = require.resolve("chromadb");
  let dir = path.dirname(main);
  while (path.basename(dir) !== "dist" && path.dirname(dir) !== dir) dir = path.dirname(dir);
  return path.join(dir, "cli.mjs");
}

/** A port on 127.0.0.1 that was free a moment ago (bind port 0, read it, release it). */
export function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr !== null ? addr.port : 0;
      srv.close(() => (port > 0 ? resolve(port) : reject(new Error("could not read the bound port"))));
    });
  });
}

/** True when nothing listens on 127.0.0.1:port (we could bind it). */
function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.unref();
    srv.once("error", () => resolve(false));
    srv.listen(port, "127.0.0.1", () => srv.close(() => resolve(true)));
  });
}

/**
 * Source of the module preloaded into the server process. It starts a worker
 * thread (the server blocks the main thread in native code) that stops the
 * process when its parent is gone: SIGINT first, SIGKILL 5 s later.
 */
const WATCHDOG_SOURCE = `
import { Worker } from "node:worker_threads";
const parent = Number(process.env.RETRACE_CHROMA_PARENT_PID);
if (Number.isInteger(parent) && parent > 0) {
  const worker = new Worker(\`
    const { workerData } = require("node:worker_threads");
    const timer = setInterval(() => {
      if (process.ppid === workerData.parent) return;
      clearInterval(timer);
      try { process.kill(process.pid, "SIGINT"); } catch {}
      setTimeout(() => { try { process.kill(process.pid, "SIGKILL"); } catch {} }, 5000);
    }, workerData.pollMs);
  \`, { eval: true, workerData: { parent, pollMs: ${WATCHDOG_POLL_MS} } });
  worker.unref();
}
`;
const WATCHDOG_IMPORT = `data:text/javascript,${encodeURIComponent(WATCHDOG_SOURCE)}`;

// ---------------------------------------------------------------------------
// Process-exit safety: one registry of live children, handlers installed while it is non-empty.

interface Tracked {
  child: ChildProcess;
  stop(): Promise<void>;
}
const live = new Set<Tracked>();
const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
type HandledSignal = (typeof SIGNALS)[number];
const SIGNAL_EXIT: Record<HandledSignal, number> = { SIGHUP: 129, SIGINT: 130, SIGTERM: 143 };
let installed = false;

function onExit(): void {
  // Synchronous only: ask every live server to shut down; each does so on its own.
  for (const t of live) {
    try {
      t.child.kill("SIGINT");
    } catch {
      // already gone
    }
  }
}

function onSignal(signal: HandledSignal): void {
  // Another listener (e.g. a command that aborts its work, then closes the store) owns the
  // shutdown; the exit handler and the child's watchdog still stop the server when we end.
  if (process.listenerCount(signal) > 1) return;
  log.info(`${signal} received: stopping the local Chroma server`);
  const all = [...live].map((t) => t.stop());
  void Promise.allSettled(all).then(() => {
    uninstallHandlers();
    if (process.listenerCount(signal) > 0) return; // someone registered meanwhile: theirs now
    process.exitCode = SIGNAL_EXIT[signal];
    // Re-raise with the default action so the parent sees "killed by <signal>".
    process.kill(process.pid, signal);
  });
}

const signalHandlers = new Map<HandledSignal, () => void>(SIGNALS.map((s) => [s, () => onSignal(s)]));

function installHandlers(): void {
  if (installed) return;
  installed = true;
  process.on("exit", onExit);
  for (const [s, h] of signalHandlers) process.on(s, h);
}

function uninstallHandlers(): void {
  if (!installed) return;
  installed = false;
  process.off("exit", onExit);
  for (const [s, h] of signalHandlers) process.off(s, h);
}

/** Number of local Chroma servers this process has started and not yet stopped. */
export function liveLocalChromaCount(): number {
  return live.size;
}

// ---------------------------------------------------------------------------

const ANSI = /\u001b\[[0-9;]*[A-Za-z]/g;

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

async function heartbeatOk(url: string, timeoutMs: number): Promise<boolean> {
  try {
    const res = await fetch(`${url}/api/v2/heartbeat`, { signal: AbortSignal.timeout(timeoutMs) });
    await res.arrayBuffer();
    return res.ok;
  } catch {
    return false;
  }
}

function startFailure(message: string, output: string, dataDir: string, cause?: unknown): ServiceUnavailableError {
  const tail = output.trim() === "" ? "(no output)" : output.trim().split("\n").slice(-15).join("\n");
  return new ServiceUnavailableError(
    "chroma",
    `Could not start a local Chroma server (data dir ${dataDir}): ${message}.\n` +
      `Server output:\n${tail}\n` +
      "What to do: free the port or omit --port, check that `npm ci` installed chromadb and its server binding " +
      "(chromadb-js-bindings-*), or point CHROMA_URL at a running Chroma server.",
    cause === undefined ? undefined : { cause },
  );
}

/** How many free ports are tried when one is taken between finding it and the server binding it. */
const AUTO_PORT_ATTEMPTS = 3;

/** Starts a Chroma server from node_modules on a loopback port and waits for its heartbeat. */
export async function startLocalChroma(options: StartLocalChromaOptions): Promise<LocalChroma> {
  const dataDir = path.resolve(options.dataDir);
  let cliPath: string;
  try {
    cliPath = options.cliPath ?? resolveChromaCli();
  } catch (e) {
    throw startFailure("the chromadb package cannot be resolved", "", dataDir, e);
  }
  if (!existsSync(cliPath)) throw startFailure(`the Chroma CLI was not found at ${cliPath}`, "", dataDir);
  if (options.port !== undefined && !(await portIsFree(options.port))) {
    throw startFailure(`port ${options.port} on 127.0.0.1 is already in use`, "", dataDir);
  }
  mkdirSync(dataDir, { recursive: true });
  for (let attempt = 1; ; attempt++) {
    const port = options.port ?? (await findFreePort());
    const result = await spawnServer({
      cliPath,
      dataDir,
      port,
      startupTimeoutMs: options.startupTimeoutMs ?? DEFAULT_STARTUP_TIMEOUT_MS,
      stopTimeoutMs: options.stopTimeoutMs ?? DEFAULT_STOP_TIMEOUT_MS,
    });
    if ("server" in result) return result.server;
    // A port found free can be taken before the server binds it: try another one.
    if (result.portTaken && options.port === undefined && attempt < AUTO_PORT_ATTEMPTS) {
      log.debug(`port ${port} was taken before Chroma could bind it; trying another`);
      continue;
    }
    throw result.error;
  }
}

async function spawnServer(o: {
  cliPath: string;
  dataDir: string;
  port: number;
  startupTimeoutMs: number;
  stopTimeoutMs: number;
}): Promise<{ server: LocalChroma } | { error: ServiceUnavailableError; portTaken: boolean }> {
  const { dataDir, port } = o;
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(
    process.execPath,
    ["--import", WATCHDOG_IMPORT, o.cliPath, "run", "--host", "127.0.0.1", "--path", dataDir, "--port", String(port)],
    {
      detached: false,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, RETRACE_CHROMA_PARENT_PID: String(process.pid), NO_COLOR: "1" },
    },
  );
  let output = "";
  const capture = (d: Buffer) => {
    output = (output + d.toString("utf8").replace(ANSI, "")).slice(-OUTPUT_LIMIT);
  };
  child.stdout?.on("data", capture);
  child.stderr?.on("data", capture);
  let exited = false;
  let markExited: () => void = () => {};
  const exitedPromise = new Promise<void>((resolve) => {
    markExited = () => {
      exited = true;
      resolve();
    };
  });
  child.once("exit", () => markExited());
  let spawnError: Error | undefined;
  child.on("error", (e) => {
    spawnError = e;
    if (child.pid === undefined) markExited(); // never started: no exit event will come
  });
  // A forgotten stop() must not keep the process alive: the exit handler stops the server then.
  const setRef = (on: boolean) => {
    for (const h of [child, child.stdout, child.stderr] as unknown as ({ ref?: () => void; unref?: () => void } | null)[]) {
      if (on) h?.ref?.();
      else h?.unref?.();
    }
  };

  let stopping: Promise<void> | undefined;
  const tracked: Tracked = {
    child,
    stop: () => {
      stopping ??= (async () => {
        if (!exited) {
          setRef(true); // keep the event loop alive while we wait for the exit
          child.kill("SIGINT");
          let timer: NodeJS.Timeout | undefined;
          const timedOut = await Promise.race([
            exitedPromise.then(() => false),
            new Promise<boolean>((r) => (timer = setTimeout(() => r(true), o.stopTimeoutMs))),
          ]);
          clearTimeout(timer);
          if (timedOut && !exited) {
            log.warn(`Chroma server (pid ${child.pid}) did not stop within ${o.stopTimeoutMs} ms of SIGINT; killing it`);
            child.kill("SIGKILL");
            await exitedPromise;
          }
        }
        live.delete(tracked);
        if (live.size === 0) uninstallHandlers();
      })();
      return stopping;
    },
  };
  live.add(tracked);
  installHandlers();

  const started = Date.now();
  const portTaken = () => /is not available/.test(output);
  let ready = false;
  while (Date.now() - started < o.startupTimeoutMs) {
    if (spawnError !== undefined || exited) break;
    if (await heartbeatOk(url, 1_000)) {
      // Answered — but make sure it is our server and not one that already had the port.
      ready = !exited && !portTaken();
      break;
    }
    await sleep(HEARTBEAT_POLL_MS);
  }
  if (!ready) {
    // Give a dying server a moment to print why (and exit) before we read its output.
    await Promise.race([exitedPromise, sleep(200)]);
    const taken = portTaken();
    const reason =
      spawnError !== undefined
        ? `could not spawn node (${spawnError.message})`
        : taken
          ? `port ${port} is already in use`
          : exited
            ? `the server exited during startup (exit code ${child.exitCode ?? "none"}, signal ${child.signalCode ?? "none"})`
            : `no heartbeat from ${url} within ${o.startupTimeoutMs} ms`;
    await tracked.stop();
    return { error: startFailure(reason, output, dataDir, spawnError), portTaken: taken };
  }
  setRef(false);
  log.debug(`Chroma server started at ${url} (pid ${child.pid}, data ${dataDir}) in ${Date.now() - started} ms`);
  return {
    server: {
      url,
      port,
      dataDir,
      pid: child.pid ?? -1,
      output: () => output,
      stop: () => tracked.stop(),
    },
  };
}

// ---------------------------------------------------------------------------

export interface ConnectChromaOptions {
  /** Server URL; default `process.env.CHROMA_URL`. */
  url?: string;
  headers?: Record<string, string>;
  /** Default `process.env.CHROMA_TENANT`, else Chroma's default tenant. */
  tenant?: string;
  /** Default `process.env.CHROMA_DATABASE`, else Chroma's default database. */
  database?: string;
  /** Give up on the heartbeat after this long; default 10 s. */
  heartbeatTimeoutMs?: number;
  /** Deadline of every request, ms (docs/reliability.md); default `requestTimeoutMs()` (RETRACE_CHROMA_TIMEOUT or 10 s). */
  requestTimeoutMs?: number;
}

/**
 * Auth headers from the environment: `CHROMA_API_KEY` → `x-chroma-token`;
 * `CHROMA_AUTH_TOKEN` → `Authorization: Bearer …` (or `x-chroma-token` when
 * `CHROMA_AUTH_TOKEN_TRANSPORT_HEADER` is `X-Chroma-Token`, as on the server).
 */
export function authHeadersFromEnv(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const headers: Record<string, string> = {};
  const apiKey = env.CHROMA_API_KEY ?? "";
  const token = env.CHROMA_AUTH_TOKEN ?? "";
  if (token !== "") {
    if ((env.CHROMA_AUTH_TOKEN_TRANSPORT_HEADER ?? "").toLowerCase() === "x-chroma-token") headers["x-chroma-token"] = token;
    else headers.authorization = `Bearer ${token}`;
  }
  if (apiKey !== "") headers["x-chroma-token"] = apiKey;
  return headers;
}

function parseChromaUrl(raw: string): { host: string; port: number; ssl: boolean; basic?: string } {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new ServiceUnavailableError("chroma", `Expected the Chroma URL to be an http(s) URL such as http://127.0.0.1:8000, got ${JSON.stringify(redactSecrets(raw))}`);
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") {
    throw new ServiceUnavailableError("chroma", `Expected the Chroma URL to use http or https, got ${JSON.stringify(redactUrl(raw))}`);
  }
  // user:password@ in the URL: HTTP basic auth (never shown: docs/reliability.md).
  const basic =
    u.username !== "" || u.password !== ""
      ? Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString("base64")
      : undefined;
  const ssl = u.protocol === "https:";
  const port = u.port === "" ? (ssl ? 443 : 80) : Number(u.port);
  // URL keeps the brackets of an IPv6 host, which is what the client's `${host}:${port}` needs.
  return { host: u.hostname, port, ssl, ...(basic !== undefined ? { basic } : {}) };
}

/** A ChromaClient for `url` (default CHROMA_URL) that has answered a heartbeat. */
export async function connectChroma(options: ConnectChromaOptions = {}): Promise<ChromaClient> {
  const fromEnv = options.url === undefined;
  const url = options.url ?? process.env.CHROMA_URL ?? "";
  if (url === "") {
    throw new ServiceUnavailableError("chroma", "No Chroma URL: pass one or set CHROMA_URL (or let retrace start a local server)");
  }
  const { host, port, ssl, basic } = parseChromaUrl(url);
  const shown = redactUrl(url);
  const nonEmpty = (v: string | undefined) => (v === undefined || v === "" ? undefined : v);
  const tenant = options.tenant ?? nonEmpty(process.env.CHROMA_TENANT);
  const database = options.database ?? nonEmpty(process.env.CHROMA_DATABASE);
  const client = new ChromaClient({
    host,
    port,
    ssl,
    headers: { ...(basic !== undefined ? { authorization: `Basic ${basic}` } : {}), ...authHeadersFromEnv(), ...options.headers },
    ...(tenant !== undefined ? { tenant } : {}),
    ...(database !== undefined ? { database } : {}),
  });
  installRequestDeadline(client, shown, options.requestTimeoutMs ?? requestTimeoutMs());
  const timeoutMs = options.heartbeatTimeoutMs ?? DEFAULT_HEARTBEAT_TIMEOUT_MS;
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      client.heartbeat(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
  } catch (e) {
    const why = redactSecrets(e instanceof Error ? e.message : String(e));
    // The store vocabulary of docs/decisions/0006-one-composition-root-and-store-vocabulary.md.
    const hint = fromEnv ? "unset CHROMA_URL to let retrace start a local one" : "use --store local or unset CHROMA_URL to let retrace start a local one";
    const auth = /unauthori[sz]ed|forbidden|401|403/i.test(`${why} ${e instanceof Error ? e.name : ""}`)
      ? " The server refused the credentials: check CHROMA_API_KEY / CHROMA_AUTH_TOKEN."
      : "";
    const head = `Cannot reach Chroma at ${shown} (${e instanceof ChromaRequestFailure ? e.detail : why})`;
    throw new ServiceUnavailableError("chroma", `${head}: is a Chroma server listening at ${shown}? ${hint}.${auth}`, { cause: e });
  } finally {
    clearTimeout(timer);
  }
  return client;
}

// ---------------------------------------------------------------------------

export interface ChromaStoreHandle {
  client: ChromaClient;
  /** The server URL as shown: credentials redacted. */
  url: string;
  /** `local`: started by this process (stopped by close); `remote`: CHROMA_URL or an explicit URL. */
  kind: "local" | "remote";
  /** The local server, when kind is `local`. */
  server?: LocalChroma;
  /** Stops the local server; nothing for a remote one. Safe to call more than once. */
  close(): Promise<void>;
}

export interface OpenStoreOptions {
  /** A Chroma URL; default CHROMA_URL; when neither is set, a local server is started. */
  url?: string;
  /** Start a local server even when CHROMA_URL is set (the `local` store choice). */
  local?: boolean;
  /** Data dir of the local server; default `<cwd>/.retrace/chroma`. */
  dataDir?: string;
  /** Port of the local server; default a free one. */
  port?: number;
  startupTimeoutMs?: number;
  headers?: Record<string, string>;
  tenant?: string;
  database?: string;
  /** Deadline of every Chroma request, ms (docs/reliability.md). */
  requestTimeoutMs?: number;
}

export function defaultDataDir(cwd: string = process.cwd()): string {
  return path.join(cwd, ".retrace", "chroma");
}

/** CHROMA_URL (or `url`) when given, else a local server on `dataDir`. */
export async function openStore(options: OpenStoreOptions = {}): Promise<ChromaStoreHandle> {
  const envUrl = process.env.CHROMA_URL ?? "";
  const url = options.url ?? (envUrl === "" || options.local === true ? undefined : envUrl);
  if (url !== undefined) {
    const client = await connectChroma({
      // Without an explicit URL connectChroma reads CHROMA_URL itself (and its error names the variable).
      ...(options.url !== undefined ? { url: options.url } : {}),
      ...(options.headers !== undefined ? { headers: options.headers } : {}),
      ...(options.tenant !== undefined ? { tenant: options.tenant } : {}),
      ...(options.database !== undefined ? { database: options.database } : {}),
      ...(options.requestTimeoutMs !== undefined ? { requestTimeoutMs: options.requestTimeoutMs } : {}),
    });
    // The URL as shown (logs, reports): credentials redacted (docs/reliability.md).
    return { client, url: redactUrl(url), kind: "remote", close: async () => {} };
  }
  // One local server per data dir at a time, across processes (docs/reliability.md).
  const dataDir = options.dataDir ?? defaultDataDir();
  const lock = await acquireDirLock(dataDir);
  let server: LocalChroma | undefined;
  try {
    server = await startLocalChroma({
      dataDir,
      ...(options.port !== undefined ? { port: options.port } : {}),
      ...(options.startupTimeoutMs !== undefined ? { startupTimeoutMs: options.startupTimeoutMs } : {}),
    });
    const client = await connectChroma({ url: server.url, ...(options.requestTimeoutMs !== undefined ? { requestTimeoutMs: options.requestTimeoutMs } : {}) });
    const s = server;
    let closing: Promise<void> | undefined;
    const close = () => (closing ??= s.stop().finally(() => lock.release()));
    return { client, url: server.url, kind: "local", server, close };
  } catch (e) {
    await server?.stop();
    await lock.release();
    throw e;
  }
}
