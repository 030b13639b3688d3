/**
 * `npm run bench [-- NAME...]`: runs every bench/*.bench.ts (or the named ones)
 * in turn. Each exports `run(): Promise<void>` and prints its own figures.
 * Benchmarks are never part of `npm test`.
 */
import { readdir } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const dir = path.dirname(fileURLToPath(import.meta.url));
const wanted = process.argv.slice(2);
const files = (await readdir(dir)).filter((f) => f.endsWith(".bench.ts")).sort();
const selected = wanted.length === 0 ? files : files.filter((f) => wanted.some((w) => f.startsWith(w)));
if (selected.length === 0) {
  process.stderr.write(`no benchmark matches ${wanted.join(", ")}; have: ${files.join(", ")}\n`);
  process.exitCode = 2;
}
for (const f of selected) {
  process.stdout.write(`\n## ${f.replace(/\.bench\.ts$/, "")}\n`);
  const mod = (await import(pathToFileURL(path.join(dir, f)).href)) as { run: () => Promise<void> };
  const t0 = performance.now();
  await mod.run();
  process.stdout.write(`(${f} took ${((performance.now() - t0) / 1000).toFixed(1)} s)\n`);
}
