/**
 * `npm start` with npm alone (docs/models.md, "Naming a model"): the embedded
 * LSA default, exit 0 against the shipped baseline, and one stderr line that
 * says how to switch to a real model — with no models folder anywhere retrace
 * could look, and the same with BGE weights (a generated stand-in) in
 * RETRACE_MODELS_DIR: `auto` never switches by itself.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTinyBertEmbedder } from "../fixtures/models/make-tiny-models.js";
import { ROOT } from "../helpers/cli.js";
import { chromaPids, tempDir } from "../helpers/chroma.js";

let dir: string;
let cleanup: () => Promise<void>;

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir("start-default"));
  await makeTinyBertEmbedder(path.join(dir, "with-models"), {
    org: "Xenova",
    name: "bge-small-en-v1.5",
    pooling: "cls",
  });
});
afterAll(async () => {
  expect(chromaPids(dir)).toEqual([]);
  await cleanup();
});

function npmStart(name: string, modelsDir: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn("npm", ["start", "--silent", "--", "--data-dir", path.join(dir, `chroma-${name}`)], {
      cwd: ROOT,
      env: {
        ...process.env,
        CHROMA_URL: "",
        NO_COLOR: "1",
        RETRACE_LOG: "info", // the test runner's environment may quiet info lines; `npm start` prints them
        RETRACE_MODELS_DIR: modelsDir,
        XDG_CACHE_HOME: path.join(dir, "xdg"),
        HF_HOME: path.join(dir, "hf"),
        RETRACE_CACHE_DIR: path.join(dir, "cache"),
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

describe("npm start: the embedded default, and one line on how to switch", () => {
  it.each([
    ["no models folder anywhere", "no-models"],
    ["BGE weights in RETRACE_MODELS_DIR", "with-models"],
  ])(
    "%s: exit 0, LSA, the pointer line",
    async (_label, sub) => {
      const r = await npmStart(sub, path.join(dir, sub));
      expect(r.code, r.stderr).toBe(0);
      const lines = r.stderr.split("\n").filter((l) => l.startsWith("embedder:"));
      expect(lines).toEqual([
        expect.stringMatching(
          /^embedder: lsa-128-[0-9a-f]{12}-v1 \(default; real model: npm run models, docs\/models\.md\)$/,
        ),
      ]);
      expect(r.stdout).toMatch(/lsa-128-[0-9a-f]{12}-v1/);
      expect(r.stdout).not.toContain("Xenova/bge-small-en-v1.5");
    },
    600_000,
  );
});
