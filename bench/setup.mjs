#!/usr/bin/env node
// Installs the benchmark-only peers (bench/package.json: SQLite FTS5 through
// better-sqlite3, a native module) on first use of `npm run bench`, from
// bench/package-lock.json, so `npm ci` at the root never compiles them.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const dir = path.dirname(fileURLToPath(import.meta.url));
if (!existsSync(path.join(dir, "node_modules", "better-sqlite3", "package.json"))) {
  process.stderr.write("bench: installing the benchmark-only peers (bench/package.json) on first use...\n");
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  const r = spawnSync(npm, ["ci", "--no-audit", "--no-fund"], { cwd: dir, stdio: ["ignore", "inherit", "inherit"] });
  if (r.status !== 0) {
    process.stderr.write("bench: could not install bench/package.json's peers; the FTS5 rows need them\n");
    process.exit(r.status ?? 1);
  }
}
