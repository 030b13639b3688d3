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

// The real embedding model (docs/models.md) for the model benches (loco-model, the BGE figures): `npm run models`
// fetches it once into a cache outside the checkout; a second run only re-checks its sha256. Benches that do not
// name a model run without it, so a failure here is a warning.
{
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  const r = spawnSync(npm, ["run", "models", "--silent"], {
    cwd: path.join(dir, ".."),
    stdio: ["ignore", "ignore", "inherit"],
  });
  if (r.status !== 0)
    process.stderr.write("bench: npm run models failed; the benches that name a model will say it is missing\n");
}
