/**
 * The client side of Chroma: connect to a server (a URL or CHROMA_URL, auth
 * from the environment), and open the store the system uses: that server, or
 * else a local one started by chroma-process.ts and stopped by `close()`.
 */
import path from "node:path";
import { ChromaClient } from "chromadb";
import { ServiceUnavailableError } from "../errors.js";
import { log } from "../log.js";
import { acquireDirLock } from "./lock.js";
import { registerHeaderSecrets, registerUrlCredentials } from "../redact.js";
import {
  ChromaRequestFailure,
  installRequestDeadline,
  redactSecrets,
  redactUrl,
  requestTimeoutMs,
} from "./chroma-faults.js";
import { startLocalChroma, type LocalChroma } from "./chroma-process.js";
import { sweepSegmentFolders, type SweepResult } from "./chroma-segments.js";
import type { ChromaClientLike } from "./chroma-types.js";

export const DEFAULT_HEARTBEAT_TIMEOUT_MS = 10_000;

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
export function authHeadersFromEnv(env: Record<string, string | undefined> = process.env): Record<string, string> {
  const headers: Record<string, string> = {};
  const apiKey = env.CHROMA_API_KEY ?? "";
  const token = env.CHROMA_AUTH_TOKEN ?? "";
  if (token !== "") {
    if ((env.CHROMA_AUTH_TOKEN_TRANSPORT_HEADER ?? "").toLowerCase() === "x-chroma-token")
      headers["x-chroma-token"] = token;
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
    throw new ServiceUnavailableError(
      "chroma",
      `Expected the Chroma URL to be an http(s) URL such as http://127.0.0.1:8000, got ${JSON.stringify(redactSecrets(raw))}`,
    );
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") {
    throw new ServiceUnavailableError(
      "chroma",
      `Expected the Chroma URL to use http or https, got ${JSON.stringify(redactUrl(raw))}`,
    );
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

/**
 * A client for `url` (default CHROMA_URL) that has answered a heartbeat: chromadb's `ChromaClient`,
 * typed as the part of it retrace uses (`ChromaClientLike`, src/retrieval/chroma-types.ts).
 */
export async function connectChroma(options: ConnectChromaOptions = {}): Promise<ChromaClientLike> {
  const fromEnv = options.url === undefined;
  const url = options.url ?? process.env.CHROMA_URL ?? "";
  if (url === "") {
    throw new ServiceUnavailableError(
      "chroma",
      "No Chroma URL: pass one or set CHROMA_URL (or let retrace start a local server)",
    );
  }
  const { host, port, ssl, basic } = parseChromaUrl(url);
  const shown = redactUrl(url);
  const nonEmpty = (v: string | undefined) => (v === undefined || v === "" ? undefined : v);
  const tenant = options.tenant ?? nonEmpty(process.env.CHROMA_TENANT);
  const database = options.database ?? nonEmpty(process.env.CHROMA_DATABASE);
  const headers: Record<string, string> = {
    ...(basic !== undefined ? { authorization: `Basic ${basic}` } : {}),
    ...authHeadersFromEnv(),
    ...options.headers,
  };
  // Every credential this process sends is redacted from all output from now on, in every encoding (docs/reliability.md).
  registerUrlCredentials(url);
  registerHeaderSecrets(headers);
  const chroma = new ChromaClient({
    host,
    port,
    ssl,
    headers,
    ...(tenant !== undefined ? { tenant } : {}),
    ...(database !== undefined ? { database } : {}),
  });
  installRequestDeadline(chroma, shown, options.requestTimeoutMs ?? requestTimeoutMs());
  // No cast: the compiler checks here that chromadb's client has what ChromaClientLike promises.
  const client: ChromaClientLike = chroma;
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
    const hint = fromEnv
      ? "unset CHROMA_URL to let retrace start a local one"
      : "use --store local or unset CHROMA_URL to let retrace start a local one";
    const auth = /unauthori[sz]ed|forbidden|401|403/i.test(`${why} ${e instanceof Error ? e.name : ""}`)
      ? " The server refused the credentials: check CHROMA_API_KEY / CHROMA_AUTH_TOKEN."
      : "";
    const head = `Cannot reach Chroma at ${shown} (${e instanceof ChromaRequestFailure ? e.detail : why})`;
    throw new ServiceUnavailableError("chroma", `${head}: is a Chroma server listening at ${shown}? ${hint}.${auth}`, {
      cause: e,
    });
  } finally {
    clearTimeout(timer);
  }
  return client;
}

// ---------------------------------------------------------------------------

export interface ChromaStoreHandle {
  /** chromadb's `ChromaClient`, typed as the part of it retrace uses. */
  client: ChromaClientLike;
  /** The server URL as shown: credentials redacted. */
  url: string;
  /** `local`: started by this process (stopped by close); `remote`: CHROMA_URL or an explicit URL. */
  kind: "local" | "remote";
  /** The local server, when kind is `local`. */
  server?: LocalChroma;
  /**
   * Removes the segment folders of deleted collections from a local
   * server's data dir now (chroma-segments.ts; `close()` does it too, after
   * the server stopped); nothing for a remote one. Call it between requests.
   */
  reclaimSpace(): Promise<SweepResult>;
  /** Stops the local server, then removes the segment folders of deleted collections; nothing for a remote one. Safe to call more than once. */
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
    const nothing: SweepResult = { removed: [], bytes: 0, skipped: "a remote store" };
    return { client, url: redactUrl(url), kind: "remote", reclaimSpace: async () => nothing, close: async () => {} };
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
    const client = await connectChroma({
      url: server.url,
      ...(options.requestTimeoutMs !== undefined ? { requestTimeoutMs: options.requestTimeoutMs } : {}),
    });
    const s = server;
    let closing: Promise<void> | undefined;
    // After the stop nothing writes the database: the safest moment to read its live segments.
    const sweep = () =>
      sweepSegmentFolders(s.dataDir).then(
        () => undefined,
        (e: unknown) => log.debug(`segment sweep failed: ${String(e)}`),
      );
    const close = () =>
      (closing ??= s
        .stop()
        .then(sweep)
        .finally(() => lock.release()));
    return {
      client,
      url: server.url,
      kind: "local",
      server,
      reclaimSpace: () => sweepSegmentFolders(s.dataDir),
      close,
    };
  } catch (e) {
    await server?.stop();
    await lock.release();
    throw e;
  }
}
