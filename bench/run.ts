/**
 * `npm run bench [-- NAME...]`: runs every bench/*.bench.ts (or the named ones)
 * in turn. Each exports `run(): Promise<void>` and prints its own figures.
 * Benchmarks are never part of `npm test`. What the selected benches need
 * (bench/package.json's SQLite peers, the embedding model) is prepared first,
 * for them alone (bench/setup.mjs).
 */
import { readdir } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { prepareBenches } from "./setup.mjs";

const dir = path.dirname(fileURLToPath(import.meta.url));
const wanted = process.argv.slice(2);
const files = (await readdir(dir)).filter((f) => f.endsWith(".bench.ts")).sort();
const selected = wanted.length === 0 ? files : files.filter((f) => wanted.some((w) => f.startsWith(w)));
if (selected.length === 0) {
  process.stderr.write(`no benchmark matches ${wanted.join(", ")}; have: ${files.join(", ")}\n`);
  process.exitCode = 2;
}
// Only what the selected benches need is installed (bench/setup.mjs): `npm run bench -- traces` never compiles SQLite.
const ready = selected.length > 0 && prepareBenches(selected);
if (selected.length > 0 && !ready) process.exitCode = 1;
for (const f of ready ? selected : []) {
  process.stdout.write(`\n## ${f.replace(/\.bench\.ts$/, "")}\n`);
  const mod = (await import(pathToFileURL(path.join(dir, f)).href)) as { run: () => Promise<void> };
  const t0 = performance.now();
  await mod.run();
  process.stdout.write(`(${f} took ${((performance.now() - t0) / 1000).toFixed(1)} s)\n`);
}
