/**
 * The committed API report (api/retrace-eval.api.md) must match the code's
 * exports: a change to the public API is a reviewed change to that file
 * (`npm run api` regenerates it).
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { ROOT } from "./helpers/cli.js";

it("the committed API report matches every package entry point's exports", () => {
  const r = spawnSync(process.execPath, [path.join(ROOT, "scripts", "api-report.mjs"), "--check"], {
    cwd: ROOT,
    encoding: "utf8",
  });
  expect(r.stderr).toBe("");
  expect(r.status).toBe(0);
}, 120_000);

it("the main entry exports at most 120 names; the rest is on a subpath (docs/architecture.md, CHANGELOG.md)", () => {
  const text = readFileSync(path.join(ROOT, "api", "retrace-eval.api.md"), "utf8");
  const main = /^## retrace-eval\n\n(\d+) exports\./m.exec(text);
  expect(main).not.toBeNull();
  expect(Number(main![1])).toBeLessThanOrEqual(120);
  // every subpath the main entry points users to is a real entry of the package
  const pkg = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { exports: Record<string, unknown> };
  for (const sub of ["./harness", "./agent", "./metrics", "./retrieval", "./langchain"])
    expect(Object.keys(pkg.exports)).toContain(sub);
});
