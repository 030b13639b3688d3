/**
 * The Chroma server module, kept so existing imports keep working: the
 * process lifecycle (start a local server, never leave one behind) lives in
 * chroma-process.ts, the client side (connect, auth headers, open the store)
 * in chroma-client.ts; this module re-exports both.
 */
export {
  DEFAULT_STARTUP_TIMEOUT_MS,
  DEFAULT_STOP_TIMEOUT_MS,
  HEARTBEAT_POLL_MS,
  WATCHDOG_POLL_MS,
  findFreePort,
  liveLocalChromaCount,
  startLocalChroma,
  type LocalChroma,
  type StartLocalChromaOptions,
} from "./chroma-process.js";
export {
  DEFAULT_HEARTBEAT_TIMEOUT_MS,
  authHeadersFromEnv,
  connectChroma,
  defaultDataDir,
  openStore,
  type ChromaStoreHandle,
  type ConnectChromaOptions,
  type OpenStoreOptions,
} from "./chroma-client.js";
