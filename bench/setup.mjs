#!/usr/bin/env node
// What the selected benchmarks need before they run, installed or fetched only for the benchmarks that use it
// (bench/run.ts calls `prepareBenches` with the bench files it is about to run; `node bench/setup.mjs` prepares all):
// - the benchmark-only peers (bench/package.json: SQLite FTS5 through better-sqlite3, a native module, installed from
//   bench/package-lock.json, so `npm ci` at the root never compiles them), for the benches that import bench/lib/fts5.ts;
// - the real embedding model (docs/models.md, `npm run models`), for the benches that name a model.
// A bench that needs neither (traces, intervals, metrics, ...) runs from a fresh clone after `npm ci` alone: the
// native compile of better-sqlite3 (prebuilt binaries and node headers come from outside the npm registry) is never
// started for it.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const dir = path.dirname(fileURLToPath(import.meta.url));
const npm = process.platform === "win32" ? "npm.cmd" : "npm";

/**
 * What a bench file needs, read from its source: the SQLite peers when it imports bench/lib/fts5.ts (the module that
 * loads better-sqlite3), the embedding model when it names one (a transformers.js model id such as Xenova/bge-…).
 */
export function needsOf(file) {
  const text = readFileSync(path.join(dir, file), "utf8");
  return { sqlite: /from "\.\/lib\/fts5\.js"/.test(text), model: /Xenova\/|bge-small/i.test(text) };
}

function installPeers() {
  if (existsSync(path.join(dir, "node_modules", "better-sqlite3", "package.json"))) return true;
  process.stderr.write("bench: installing the benchmark-only peers (bench/package.json) on first use...\n");
  const r = spawnSync(npm, ["ci", "--no-audit", "--no-fund"], { cwd: dir, stdio: ["ignore", "inherit", "inherit"] });
  if (r.status !== 0) {
    process.stderr.write("bench: could not install bench/package.json's peers; the FTS5 rows need them\n");
    return false;
  }
  return true;
}

// The real embedding model for the model benches: `npm run models` fetches it once into a cache outside the
// checkout; a second run only re-checks its sha256. A failure is a warning: the bench says the model is missing.
function fetchModel() {
  const r = spawnSync(npm, ["run", "models", "--silent"], {
    cwd: path.join(dir, ".."),
    stdio: ["ignore", "ignore", "inherit"],
  });
  if (r.status !== 0)
    process.stderr.write("bench: npm run models failed; the benches that name a model will say it is missing\n");
}

/** Prepares what the given bench files (names in bench/) need; false when a needed install failed. */
export function prepareBenches(files) {
  const needs = files.map(needsOf);
  let ok = true;
  if (needs.some((n) => n.sqlite)) ok = installPeers();
  if (needs.some((n) => n.model)) fetchModel();
  return ok;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const { readdirSync } = await import("node:fs");
  const files = readdirSync(dir).filter((f) => f.endsWith(".bench.ts"));
  if (!prepareBenches(files)) process.exitCode = 1;
}
