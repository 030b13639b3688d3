/**
 * `npx retrace <command>` in a fresh clone right after `npm ci`, before any
 * build (README, "Run it in the repository"): bin/retrace.mjs runs the
 * TypeScript source through tsx when dist/ is absent. The clone is made for
 * real from the tracked files (`git ls-files`: no dist/, which is ignored),
 * with the checkout's installed node_modules linked in place of a second
 * `npm ci`.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { cp, mkdir, symlink } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "../helpers/chroma.js";
import { ROOT } from "../helpers/cli.js";

let dir: string;
let cleanup: () => Promise<void>;
let clone: string;

/** The environment of a user's shell: without the npm_* variables `npm test` exports. */
function userEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.toLowerCase().startsWith("npm_")) env[k] = v;
  return { ...env, NO_COLOR: "1" };
}

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir("checkout-bin"));
  clone = path.join(dir, "retrace");
  const files = spawnSync(
    "git",
    ["ls-files", "-z", "bin", "src", "package.json", "package-lock.json", "tsconfig.json"],
    { cwd: ROOT, encoding: "utf8" },
  );
  expect(files.status).toBe(0);
  for (const f of files.stdout.split("\0").filter((f) => f !== "")) {
    await mkdir(path.dirname(path.join(clone, f)), { recursive: true });
    await cp(path.join(ROOT, f), path.join(clone, f));
  }
  await symlink(path.join(ROOT, "node_modules"), path.join(clone, "node_modules"), "dir");
}, 60_000);
afterAll(async () => cleanup());

describe("bin/retrace.mjs in a checkout without dist/", () => {
  it("`npx retrace --help` exits 0 with the usage", () => {
    expect(existsSync(path.join(clone, "dist"))).toBe(false);
    const r = spawnSync("npx", ["--offline", "retrace", "--help"], {
      cwd: clone,
      env: userEnv(),
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^Usage: retrace/m);
  });

  it("a command runs from the TypeScript source and keeps its own exit codes (an unknown option is exit 2)", () => {
    const ok = spawnSync(process.execPath, [path.join(clone, "bin", "retrace.mjs"), "eval", "--help"], {
      cwd: clone,
      env: userEnv(),
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(ok.status).toBe(0);
    expect(ok.stdout).toMatch(/^Usage: retrace eval/m);
    const bad = spawnSync(process.execPath, [path.join(clone, "bin", "retrace.mjs"), "eval", "--no-such-option"], {
      cwd: clone,
      env: userEnv(),
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(bad.status).toBe(2);
  });
});
