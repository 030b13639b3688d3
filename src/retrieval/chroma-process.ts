/**
 * The local Chroma server process: start one from `node_modules` and never
 * leave one behind. (Connecting to a server and opening the store:
 * chroma-client.ts.) Over 400 lines because starting, watching and stopping
 * one process (signals, exit hooks, start-failure causes) is one lifecycle
 * whose parts share its private state.
 *
 * A local server is `node <retrace>/retrieval/chroma-launcher.js run --host 127.0.0.1 --path DIR --port P`:
 * chromadb's CLI with the choice of native binding made by what loads
 * (./chroma-binding.ts); the native server runs inside that node process
 * (never through `npx`, whose death leaves the server running). It listens
 * on loopback only.
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
import { spawn } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ServiceUnavailableError } from "../errors.js";
import { log } from "../log.js";
import {
  BINDINGS_ENV,
  bindingLabel,
  NO_BINDING_EXIT,
  noBindingMessage,
  readLauncherVerdict,
  resolveBindingCandidates,
  type BindingCandidate,
} from "./chroma-binding.js";
import type { Tracked } from "./chroma-exit.js";
import { installHandlers, live, uninstallHandlers } from "./chroma-exit.js";
import { ANSI, heartbeatOk, serverVersionOf, sleep, startFailure } from "./chroma-start-failure.js";
export * from "./chroma-start-failure.js";

// Defined here, not re-exported from ./chroma-exit.ts: that module's declarations name node:child_process's types,
// which a consumer's build must not reach (test/package/pack.int.test.ts).
/** Number of local Chroma servers this process has started and not yet stopped. */
export function liveLocalChromaCount(): number {
  return live.size;
}

export const DEFAULT_STARTUP_TIMEOUT_MS = 20_000;
export const DEFAULT_STOP_TIMEOUT_MS = 10_000;
/** How often the parent polls the heartbeat while a local server starts. */
export const HEARTBEAT_POLL_MS = 100;
/** How often the child's watchdog checks that its parent is still alive. */
export const WATCHDOG_POLL_MS = 250;
/** Most of the server's output kept (the tail is kept); a start failure writes it to a log file. */
const OUTPUT_LIMIT = 1_048_576;

export interface LocalChroma {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** The server binding that runs it (`chromadb-js-bindings-linux-x64-gnu@1.0.5`), when retrace's launcher started it. */
  readonly binding?: BindingCandidate;
  /** The server's own version (`GET /api/v2/version`), when it answered. */
  readonly serverVersion?: string;
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
  /**
   * A script run in place of retrace's launcher (./chroma-launcher.ts), with
   * the same arguments: tests use it for a server that misbehaves.
   */
  cliPath?: string;
  /** The server bindings to try, in order; default: chromadb's own, then retrace's (./chroma-binding.ts). */
  bindings?: BindingCandidate[];
}

/** The server process's entry: the launcher beside this module (its TypeScript source under tsx). */
const LAUNCHER = new URL(
  import.meta.url.endsWith(".ts") ? "./chroma-launcher.ts" : "./chroma-launcher.js",
  import.meta.url,
);

/** Node options that let the server process run the launcher: tsx's loader when it is TypeScript source. */
function launcherNodeArgs(entry: string): string[] {
  return entry.endsWith(".ts") ? ["--import", import.meta.resolve("tsx/esm")] : [];
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

const AUTO_PORT_ATTEMPTS = 3;

/** Starts a Chroma server from node_modules on a loopback port and waits for its heartbeat. */
export async function startLocalChroma(options: StartLocalChromaOptions): Promise<LocalChroma> {
  const dataDir = path.resolve(options.dataDir);
  let bindings: BindingCandidate[] = [];
  const cliPath = options.cliPath ?? fileURLToPath(LAUNCHER);
  if (options.cliPath === undefined) {
    try {
      bindings = options.bindings ?? resolveBindingCandidates(createRequire(import.meta.url).resolve("chromadb"));
    } catch (e) {
      throw startFailure("the chromadb package cannot be resolved", "", dataDir, e);
    }
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
      bindings,
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
    throw result.failure();
  }
}

async function spawnServer(o: {
  cliPath: string;
  bindings: BindingCandidate[];
  dataDir: string;
  port: number;
  startupTimeoutMs: number;
  stopTimeoutMs: number;
}): Promise<{ server: LocalChroma } | { failure: () => ServiceUnavailableError; portTaken: boolean }> {
  const { dataDir, port } = o;
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(
    process.execPath,
    [
      ...launcherNodeArgs(o.cliPath),
      "--import",
      WATCHDOG_IMPORT,
      o.cliPath,
      "run",
      "--host",
      "127.0.0.1",
      "--path",
      dataDir,
      "--port",
      String(port),
    ],
    {
      detached: false,
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        ...process.env,
        RETRACE_CHROMA_PARENT_PID: String(process.pid),
        NO_COLOR: "1",
        [BINDINGS_ENV]: JSON.stringify(o.bindings),
      },
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
    for (const h of [child, child.stdout, child.stderr] as unknown as ({
      ref?: () => void;
      unref?: () => void;
    } | null)[]) {
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
            log.warn(
              `Chroma server (pid ${child.pid}) did not stop within ${o.stopTimeoutMs} ms of SIGINT; killing it`,
            );
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
    const none = child.exitCode === NO_BINDING_EXIT ? readLauncherVerdict(output).none : undefined;
    if (none !== undefined) {
      const message = `Could not start a local Chroma server (data dir ${dataDir}): ${noBindingMessage(none)}`;
      return { failure: () => new ServiceUnavailableError("chroma", message), portTaken: false };
    }
    // Built only when thrown: a port lost to a race is retried, and writes no log.
    return { failure: () => startFailure(reason, output, dataDir, spawnError, exited && !taken), portTaken: taken };
  }
  setRef(false);
  const verdict = readLauncherVerdict(output);
  for (const f of verdict.failures ?? [])
    log.debug(`Chroma server binding ${bindingLabel(f)} did not load: ${f.reason}`);
  const serverVersion = await serverVersionOf(url);
  const on =
    verdict.chosen !== undefined
      ? ` on binding ${bindingLabel(verdict.chosen)} (declared by ${verdict.chosen.declaredBy})`
      : "";
  log.debug(
    `Chroma server started at ${url}: server ${serverVersion ?? "(version unknown)"}${on}, pid ${child.pid}, data ${dataDir}, in ${Date.now() - started} ms`,
  );
  return {
    server: {
      ...(verdict.chosen !== undefined ? { binding: verdict.chosen } : {}),
      ...(serverVersion !== undefined ? { serverVersion } : {}),
      url,
      port,
      dataDir,
      pid: child.pid ?? -1,
      output: () => output,
      stop: () => tracked.stop(),
    },
  };
}
