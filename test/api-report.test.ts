/**
 * The committed API report (api/retrace-eval.api.md) must match the code's
 * exports: a change to the public API is a reviewed change to that file
 * (`npm run api` regenerates it).
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { expect, it } from "vitest";
import { ROOT } from "./helpers/cli.js";

it("the committed API report matches every package entry point's exports", () => {
  const r = spawnSync(process.execPath, [path.join(ROOT, "scripts", "api-report.mjs"), "--check"], { cwd: ROOT, encoding: "utf8" });
  expect(r.stderr).toBe("");
  expect(r.status).toBe(0);
}, 120_000);
