/**
 * Chroma faults as clear exits (docs/reliability.md).
 *
 * - Every request of a ChromaClient gets a deadline (`--timeout`, env
 *   `RETRACE_CHROMA_TIMEOUT`, seconds; default `DEFAULT_REQUEST_TIMEOUT_MS`):
 *   a server that accepts the connection and never answers cannot hang a
 *   CI job. The deadline aborts the request (so no socket keeps the process
 *   alive) and covers reading the response body.
 * - A request that times out, cannot connect, is cut off, or is answered
 *   with a 5xx becomes a ServiceUnavailableError (exit 3) with one plain
 *   sentence: the redacted URL, the request (method and path) and what
 *   happened. chromadb's own message for these (about browsers and CORS) is
 *   never shown. 4xx answers keep chromadb's error classes (not-found and
 *   already-exists are handled by the callers).
 * - Credentials never leak: URLs are shown with `user:password@` replaced by
 *   `***@`, and `redactSecrets` (src/redact.ts) removes from any text, a
 *   server's error body echoing the request headers included, the token
 *   values of CHROMA_API_KEY / CHROMA_AUTH_TOKEN, every credential the
 *   client sent (URL password, `Basic` base64) and any authorization or
 *   token header value; the detail is redacted before it is shortened.
 */
import net from "node:net";
import type { ChromaClient } from "chromadb";
import { InvalidArgumentError, ServiceUnavailableError } from "../errors.js";
import { redactSecrets } from "../redact.js";
import { notAChromaAnswer } from "./chroma-answers.js";

export { redactSecrets, redactUrl, secretsOf } from "../redact.js";

/** Default deadline of one Chroma request, ms. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;
/** Environment variable with the request deadline in seconds (`--timeout` wins). */
export const TIMEOUT_ENV = "RETRACE_CHROMA_TIMEOUT";

/**
 * The request deadline in ms: `seconds` (from `--timeout`) when given, else
 * `RETRACE_CHROMA_TIMEOUT` (seconds), else the default. A value that is not
 * a positive finite number of seconds is an InvalidArgumentError naming the
 * value given.
 */
export function requestTimeoutMs(seconds?: number, env: NodeJS.ProcessEnv = process.env): number {
  if (seconds !== undefined) {
    if (!Number.isFinite(seconds) || seconds <= 0)
      throw new InvalidArgumentError("--timeout", "a positive number of seconds", seconds);
    return Math.round(seconds * 1000);
  }
  const raw = env[TIMEOUT_ENV];
  if (raw === undefined || raw.trim() === "") return DEFAULT_REQUEST_TIMEOUT_MS;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError(TIMEOUT_ENV, "a positive number of seconds", raw);
  return Math.round(n * 1000);
}

function describeRequest(req: Request): string {
  try {
    const u = new URL(req.url);
    return `${req.method} ${u.pathname}`;
  } catch {
    return req.method;
  }
}

type Fetch = (input: Request) => Promise<Response>;

/** A Chroma request failure: `detail` says what happened to which request, without the URL. */
export class ChromaRequestFailure extends ServiceUnavailableError {
  constructor(
    readonly displayUrl: string,
    readonly detail: string,
  ) {
    super("chroma", `Chroma at ${displayUrl} ${detail}`);
  }
}

/** Whether a TCP connection to the request's host is refused right now (names the cause chromadb hides). */
function connectionRefused(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      resolve(false);
      return;
    }
    const port = Number(u.port === "" ? (u.protocol === "https:" ? 443 : 80) : u.port);
    const socket = net.connect({ host: u.hostname.replace(/^\[|\]$/g, ""), port });
    const done = (refused: boolean) => {
      socket.destroy();
      resolve(refused);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once("connect", () => done(false));
    socket.once("error", (e: NodeJS.ErrnoException) => done(e.code === "ECONNREFUSED"));
  });
}

/**
 * Wraps `inner` (chromadb's own fetch wrapper, which maps 4xx answers to its
 * error classes) with a deadline per request and plain messages for
 * transport failures, timeouts and server errors. `displayUrl` is the
 * (already redacted) server URL named in messages.
 */
export function faultAwareFetch(displayUrl: string, timeoutMs: number, inner: Fetch): Fetch {
  return async (input: Request) => {
    const what = describeRequest(input);
    const timer = AbortSignal.timeout(timeoutMs);
    try {
      const res = await inner(new Request(input, { signal: AbortSignal.any([input.signal, timer]) }));
      // Read the body within the deadline too (a server may send headers and stall).
      const bytes = await res.arrayBuffer();
      if (res.ok) {
        // Every answer is checked before chromadb reads it (./chroma-answers.ts): exit 3 naming the store and what was wrong.
        const wrong = notAChromaAnswer(
          input.method,
          new URL(input.url).pathname,
          new Uint8Array(bytes),
          res.headers.get("content-type"),
        );
        if (wrong !== undefined)
          throw new ChromaRequestFailure(
            displayUrl,
            `answered ${what} with something that is not a Chroma answer: ${redactSecrets(wrong)} (is ${displayUrl} a Chroma server?)`,
          );
      }
      return new Response(bytes, { status: res.status, statusText: res.statusText, headers: res.headers });
    } catch (e) {
      if (e instanceof ChromaRequestFailure) throw e;
      if (timer.aborted) {
        throw new ChromaRequestFailure(
          displayUrl,
          `did not answer ${what} within ${(timeoutMs / 1000).toFixed(1)} s (set a longer deadline with --timeout or ${TIMEOUT_ENV})`,
        );
      }
      const name = e instanceof Error ? e.name : "";
      if (name === "ChromaServerError") {
        const detail = redactSecrets(e instanceof Error ? e.message : String(e))
          .replace(/\s+/g, " ")
          .slice(0, 300);
        throw new ChromaRequestFailure(displayUrl, `answered ${what} with a server error (${detail})`);
      }
      if (name === "ChromaConnectionError" || name === "TypeError" || name === "AbortError") {
        const refused = await connectionRefused(input.url);
        throw new ChromaRequestFailure(
          displayUrl,
          `failed during ${what}: ${refused ? "connection refused (ECONNREFUSED)" : "the connection was lost"}`,
        );
      }
      throw e;
    }
  };
}

interface GeneratedClient {
  getConfig(): { fetch?: Fetch };
  setConfig(c: { fetch: Fetch }): unknown;
}

/**
 * Puts `faultAwareFetch` around chromadb's fetch wrapper of `client`.
 * chromadb 3.x keeps its generated HTTP client in the `apiClient` field,
 * shared by every collection object the client hands out; this is the one
 * place retrace reaches into it. Throws (exit 3) when the client does not
 * have that shape (another chromadb version).
 */
export function installRequestDeadline(client: ChromaClient, displayUrl: string, timeoutMs: number): void {
  const api = (client as unknown as { apiClient?: GeneratedClient }).apiClient;
  const chromaFetch = api !== undefined && typeof api.getConfig === "function" ? api.getConfig().fetch : undefined;
  if (api === undefined || typeof api.setConfig !== "function" || chromaFetch === undefined) {
    throw new ServiceUnavailableError(
      "chroma",
      "This chromadb client has no generated HTTP client to set a request deadline on (expected chromadb 3.x)",
    );
  }
  api.setConfig({ fetch: faultAwareFetch(displayUrl, timeoutMs, chromaFetch) });
}
