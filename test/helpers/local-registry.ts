/**
 * A tiny npm registry on 127.0.0.1 that serves exactly the packages of this
 * repository's package-lock.json, with their tarballs read from the npm cache
 * that `npm ci` filled (content-addressed by the lockfile's integrity). It
 * lets a test run a real `npm install` into a fresh project with no network:
 * packuments are built from the lockfile entries (dependencies, peer and
 * optional dependencies, engines, bins, os/cpu/libc; an npm alias entry is
 * served under the real package's name), and a package not in the lockfile is
 * a 404, as on a registry that does not have it. `extraTarballs` (folders of
 * `.tgz` files) adds packages that are not in the lockfile: a packed package
 * itself, or what a consumer installing today gets that the lockfile does not
 * pin, such as chromadb's newest server binding.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { createReadStream, existsSync, readdirSync, readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";

interface LockEntry {
  /** The real package's name, on an npm alias entry (`node_modules/<alias>`). */
  name?: string;
  version?: string;
  integrity?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  engines?: Record<string, string>;
  bin?: Record<string, string>;
  os?: string[];
  cpu?: string[];
  libc?: string[];
  license?: string;
  link?: boolean;
  /** A tarball outside the npm cache (extraTarballs). */
  file?: string;
}

export interface LocalRegistry {
  url: string;
  /** Package names served. */
  packages: number;
  close(): Promise<void>;
}

/** Where npm's cache keeps a tarball of this integrity (sha512 only; null otherwise). */
export function cachedTarball(
  integrity: string,
  cacheDir = path.join(os.homedir(), ".npm", "_cacache"),
): string | null {
  const m = /^sha512-(.+)$/.exec(integrity.split(" ")[0] ?? "");
  if (m === null) return null;
  const hex = Buffer.from(m[1]!, "base64").toString("hex");
  const file = path.join(cacheDir, "content-v2", "sha512", hex.slice(0, 2), hex.slice(2, 4), hex.slice(4));
  return existsSync(file) ? file : null;
}

/** The lockfile-shaped entry of a package tarball (its package.json, its sha512). */
function tarballEntry(file: string): { name: string; entry: LockEntry } {
  const manifest = JSON.parse(
    execFileSync("tar", ["-xzOf", file, "package/package.json"], { encoding: "utf8" }),
  ) as LockEntry & { name: string };
  const integrity = `sha512-${createHash("sha512").update(readFileSync(file)).digest("base64")}`;
  return { name: manifest.name, entry: { ...manifest, integrity, file } };
}

/** Release versions in numeric order (x.y.z; a pre-release after its release's peers is fine here). */
function compareVersions(a: string, b: string): number {
  const pa = a.split(/[.-]/).map((x) => Number(x));
  const pb = b.split(/[.-]/).map((x) => Number(x));
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0 && !Number.isNaN(d)) return d;
  }
  return 0;
}

export async function startLocalRegistry(
  lockfile: string,
  extraTarballs: readonly string[] = [],
): Promise<LocalRegistry> {
  const lock = JSON.parse(readFileSync(lockfile, "utf8")) as { packages: Record<string, LockEntry> };
  const versions = new Map<string, Map<string, LockEntry>>();
  const add = (name: string, entry: LockEntry & { version: string }) => {
    let byVersion = versions.get(name);
    if (byVersion === undefined) versions.set(name, (byVersion = new Map()));
    byVersion.set(entry.version, entry);
  };
  for (const [where, entry] of Object.entries(lock.packages)) {
    if (where === "" || entry.link === true || entry.version === undefined || entry.integrity === undefined) continue;
    add(entry.name ?? where.slice(where.lastIndexOf("node_modules/") + "node_modules/".length), {
      ...entry,
      version: entry.version,
    });
  }
  for (const dir of extraTarballs.filter((d) => existsSync(d))) {
    for (const f of readdirSync(dir)
      .filter((f) => f.endsWith(".tgz"))
      .sort()) {
      const { name, entry } = tarballEntry(path.join(dir, f));
      if (entry.version !== undefined) add(name, { ...entry, version: entry.version });
    }
  }

  let base = "";
  const server = http.createServer((req, res) => {
    const url = decodeURIComponent((req.url ?? "/").split("?")[0]!);
    const tarball = /^\/(.+)\/-\/[^/]+-(\d[^/]*)\.tgz$/.exec(url);
    if (tarball !== null) {
      const entry = versions.get(tarball[1]!)?.get(tarball[2]!);
      const file = entry?.file ?? (entry?.integrity !== undefined ? cachedTarball(entry.integrity) : null);
      if (file === null) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { "content-type": "application/octet-stream" });
      createReadStream(file).pipe(res);
      return;
    }
    const name = url.slice(1);
    const byVersion = versions.get(name);
    if (byVersion === undefined) {
      res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: "not found" }));
      return;
    }
    const sorted = [...byVersion.keys()].sort(compareVersions);
    const packument = {
      name,
      "dist-tags": { latest: sorted[sorted.length - 1] },
      versions: Object.fromEntries(
        [...byVersion].map(([version, e]) => [
          version,
          {
            name,
            version,
            ...(e.dependencies !== undefined ? { dependencies: e.dependencies } : {}),
            ...(e.optionalDependencies !== undefined ? { optionalDependencies: e.optionalDependencies } : {}),
            ...(e.peerDependencies !== undefined ? { peerDependencies: e.peerDependencies } : {}),
            ...(e.peerDependenciesMeta !== undefined ? { peerDependenciesMeta: e.peerDependenciesMeta } : {}),
            ...(e.engines !== undefined ? { engines: e.engines } : {}),
            ...(e.bin !== undefined ? { bin: e.bin } : {}),
            ...(e.os !== undefined ? { os: e.os } : {}),
            ...(e.cpu !== undefined ? { cpu: e.cpu } : {}),
            ...(e.libc !== undefined ? { libc: e.libc } : {}),
            dist: { tarball: `${base}/${name}/-/${name.split("/").pop()}-${version}.tgz`, integrity: e.integrity },
          },
        ]),
      ),
    };
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(packument));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url: base, packages: versions.size, close: () => new Promise<void>((r) => server.close(() => r())) };
}
