/**
 * `npm run models` (scripts/models.mjs, docs/models.md) without the network:
 * a folder inside the repository is refused, `--check` of an empty folder is
 * exit 3 naming what is missing and runs no Maven, and a folder laid out
 * from the recorded files checks clean and is left alone by a second run.
 */
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT } from "../helpers/cli.js";
import { locateModel } from "../../src/retrieval/embedders/transformers-runtime.js";

const SCRIPT = path.join(ROOT, "scripts", "models.mjs");
const tmp = mkdtempSync(path.join(os.tmpdir(), "retrace-models-script-"));
const emptyBin = path.join(tmp, "bin");
mkdirSync(emptyBin);
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function run(args: string[], env: Record<string, string> = {}) {
  // An empty PATH (node is run by its path): no Maven, so nothing here can fetch.
  return spawnSync(process.execPath, [SCRIPT, ...args], {
    encoding: "utf8",
    env: { ...process.env, PATH: emptyBin, ...env },
  });
}

describe("scripts/models.mjs", () => {
  it("refuses a folder inside the repository (weights never enter git)", () => {
    const r = run(["--dir", path.join(ROOT, "models")]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("is inside the repository");
  });

  it("--check of an empty folder is exit 3 naming the missing files, without Maven", () => {
    const r = run(["--check", "--dir", path.join(tmp, "empty")]);
    expect(r.status).toBe(3);
    expect(r.stderr).toContain("Xenova/bge-small-en-v1.5: not ready in");
    expect(r.stderr).toContain("onnx/model.onnx missing");
    expect(r.stderr).toContain("onnx/model_quantized.onnx missing");
  });

  it("a fetch without Maven on PATH is exit 3 saying so", () => {
    const r = run(["--dir", path.join(tmp, "no-maven")]);
    expect(r.status).toBe(3);
    expect(r.stderr).toContain("cannot run Maven");
    expect(existsSync(path.join(tmp, "no-maven", "Xenova", "bge-small-en-v1.5"))).toBe(false);
  });

  it("a laid-out model checks clean, a second run touches nothing, and a changed file is caught", async (ctx) => {
    const where = await locateModel("Xenova/bge-small-en-v1.5", { quantized: false });
    if (!where.found || !existsSync(path.join(where.dir, "onnx", "model_quantized.onnx"))) {
      if (process.env.CI === "true") throw new Error("the model is missing with CI=true: run `npm run models`");
      console.warn("skipped: no bge-small-en-v1.5 laid out here (npm run models)");
      ctx.skip();
      return;
    }
    const dir = path.join(tmp, "copy");
    cpSync(where.dir, path.join(dir, "Xenova", "bge-small-en-v1.5"), { recursive: true });
    const onnx = path.join(dir, "Xenova", "bge-small-en-v1.5", "onnx", "model_quantized.onnx");
    const before = statSync(onnx).mtimeMs;
    expect(run(["--check", "--dir", dir]).status).toBe(0);
    const again = run(["--dir", dir]); // no Maven on PATH: it must not need it
    expect(again.status, again.stderr).toBe(0);
    expect(again.stderr).toContain("up to date");
    expect(statSync(onnx).mtimeMs).toBe(before);
    const cfg = path.join(dir, "Xenova", "bge-small-en-v1.5", "config.json");
    writeFileSync(cfg, readFileSync(cfg, "utf8").replace('"hidden_size": 384', '"hidden_size": 385'));
    const changed = run(["--check", "--dir", dir]);
    expect(changed.status).toBe(3);
    expect(changed.stderr).toContain("config.json differs from scripts/models.json");
  });
});
