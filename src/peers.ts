/**
 * The optional peer dependencies (package.json `peerDependenciesMeta`;
 * docs/decisions/0007-package-and-peer-dependencies.md) and how a missing one
 * becomes a MissingPeerError (exit 2) that names the command installing it,
 * never an internal error. test/peers.test.ts keeps the ranges equal to
 * package.json's.
 */
import { MissingPeerError } from "./errors.js";

export interface OptionalPeer {
  /** The range of package.json `peerDependencies`. */
  range: string;
  /** The shell command that installs it in the user's project. */
  install: string;
}

export const OPTIONAL_PEERS = {
  tsx: { range: "^4.20.0", install: "npm install -D tsx" },
  "@huggingface/transformers": {
    range: "^3.8.1",
    // onnxruntime-node's postinstall downloads CUDA files unless told not to (README, "Using it in another project").
    install: "ONNXRUNTIME_NODE_INSTALL_CUDA=skip npm install @huggingface/transformers@^3.8.1",
  },
} as const satisfies Record<string, OptionalPeer>;

export type OptionalPeerName = keyof typeof OPTIONAL_PEERS;

/**
 * The package (or file) Node's loader could not find, from its
 * `ERR_MODULE_NOT_FOUND` ("Cannot find package 'tsx' imported from …") or
 * `MODULE_NOT_FOUND` error; null for any other error. A bare specifier is
 * reduced to its package name (`tsx/esm/api` → `tsx`, `@scope/a/b` → `@scope/a`).
 */
export function missingPackageOf(e: unknown): string | null {
  const code = (e as { code?: unknown } | null)?.code;
  if (code !== "ERR_MODULE_NOT_FOUND" && code !== "MODULE_NOT_FOUND") return null;
  const m = /Cannot find (?:package|module) '([^']+)'/.exec(String((e as { message?: unknown }).message ?? ""));
  if (m === null) return null;
  const spec = m[1]!;
  if (spec.startsWith(".") || spec.startsWith("/") || /^[A-Za-z]:[\\/]/.test(spec) || spec.startsWith("file:"))
    return spec;
  const parts = spec.split("/");
  return spec.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]!;
}

/**
 * The MissingPeerError for an import of `peer` that failed with a
 * module-not-found error (`e`), or null when `e` is some other failure (the
 * caller rethrows it). `needs` says what needed the peer, e.g.
 * "--graph agent.ts is TypeScript and needs". When the peer is there but a
 * package it imports is not, the message says so (reinstalling it is the fix).
 */
export function missingPeerError(
  peer: OptionalPeerName,
  needs: string,
  e: unknown,
  alternative?: string,
): MissingPeerError | null {
  const missing = missingPackageOf(e);
  if (missing === null) return null;
  const { range, install } = OPTIONAL_PEERS[peer];
  const state = missing === peer ? "which is not installed" : `which cannot be loaded (${missing} is missing)`;
  return new MissingPeerError(
    peer,
    install,
    `${needs} the optional peer ${peer} (${range}), ${state}: run \`${install}\`${alternative !== undefined ? `, ${alternative}` : ""}`,
    {
      cause: e,
    },
  );
}
