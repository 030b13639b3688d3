#!/usr/bin/env node
// The `retrace` command: runs the compiled CLI (dist/, built by `npm run build`;
// the published package ships it).
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const entry = new URL("../dist/cli/run.js", import.meta.url);
if (!existsSync(fileURLToPath(entry))) {
  process.stderr.write("retrace: dist/ is missing; run `npm run build` in the retrace checkout first\n");
  process.exitCode = 70;
} else {
  await import(entry.href);
}
