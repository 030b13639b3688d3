#!/usr/bin/env node
// The `retrace` command: runs the compiled CLI (dist/, which the published
// package ships). In a checkout where dist/ has not been built (a fresh clone
// right after `npm ci`), it runs the TypeScript source through tsx (a dev
// dependency there), so `npx retrace <command>` works with no build step and
// no install-time script (docs/decisions/0007-package-and-peer-dependencies.md).
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const compiled = new URL("../dist/cli/run.js", import.meta.url);
const source = new URL("../src/cli/run.ts", import.meta.url);
if (existsSync(fileURLToPath(compiled))) {
  await import(compiled.href);
} else if (existsSync(fileURLToPath(source))) {
  let register;
  try {
    ({ register } = await import("tsx/esm/api"));
  } catch {
    process.stderr.write(
      "retrace: dist/ is not built and tsx is not installed; run `npm ci` (it installs tsx) or `npm run build` in the retrace checkout\n",
    );
    process.exit(2);
  }
  register();
  await import(source.href);
} else {
  process.stderr.write("retrace: this installation of retrace-eval has no dist/ folder; reinstall the package\n");
  process.exit(3);
}
