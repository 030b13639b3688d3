/**
 * `retrace tune` end to end on the mini KB with a real local Chroma: without
 * a split it says it uses all cases; fewer cases than folds exits 2 saying how
 * many are needed; with a split it uses only the tune part and writes a
 * config file that the config schema accepts.
 */
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/research/tune-config.js";
import { tempDir } from "../helpers/chroma.js";
import { runCli } from "../helpers/cli.js";
import { copyKb } from "../helpers/fixtures.js";

let kb: { dir: string; cleanup: () => Promise<void> };
let tmp: { dir: string; cleanup: () => Promise<void> };
const LOCAL = { CHROMA_URL: "" };

beforeAll(async () => {
  kb = await copyKb();
  tmp = await tempDir("cli-tune");
});
afterAll(async () => {
  await kb?.cleanup();
  await tmp?.cleanup();
});

describe("retrace tune", () => {
  it("without a split uses all cases and says so; too few cases for the folds exits 2", async () => {
    const r = await runCli(
      [
        "tune",
        "--kb",
        kb.dir,
        "--data-dir",
        path.join(tmp.dir, "chroma"),
        "--config",
        JSON.stringify({ retrieval: { embedder: "builtin" } }),
        "--folds",
        "5",
      ],
      { env: LOCAL },
    );
    expect(r.stderr).toMatch(/no tune\/holdout split at .*split\.json: tuning uses all 5 cases/);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/at least 5 cases with gold for 5-fold cross-validation \(got 4/);
  }, 120_000);

  it("with a split tunes on the tune part only and writes a valid config", async () => {
    await writeFile(
      path.join(kb.dir, "eval", "split.json"),
      JSON.stringify({
        version: 1,
        tune: ["en-freeze-001", "en-adv-001", "es-congelar-001", "pt-pix-001"],
        holdout: ["en-nomatch-001"],
      }),
    );
    const out = path.join(tmp.dir, "tuned.json");
    const r = await runCli(
      [
        "tune",
        "--kb",
        kb.dir,
        "--data-dir",
        path.join(tmp.dir, "chroma"),
        "--config",
        JSON.stringify({ retrieval: { embedder: "builtin" } }),
        "--folds",
        "2",
        "--out",
        out,
      ],
      { env: LOCAL },
    );
    expect(r.stderr).not.toMatch(/unexpected error/);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/Tuned on the tune part of .*split\.json \(4 of 5 cases\): 4 groups with gold/);
    expect(r.stdout).toMatch(/Cross-validated score of the tuning/);
    const config = parseConfig(JSON.parse(await readFile(out, "utf8")), out);
    expect(config.retrieval.fusion).toMatch(/^(rrf|minmax|zscore|combmnz|signals)$/);
    expect(config.tuned?.folds).toBe(2);
  }, 120_000);

  it("eval --config applies the file's retrieval part and each locale's section, and the report says what ran", async () => {
    const conf = path.join(tmp.dir, "locales.json");
    await writeFile(
      conf,
      JSON.stringify({
        version: 1,
        retrieval: { fusion: "zscore", denseK: 30 },
        locales: { "es-419": { fusion: "minmax", weights: { dense: 0.3 } } },
      }),
    );
    const r = await runCli(
      [
        "eval",
        "--kb",
        kb.dir,
        "--store",
        "memory",
        "--config",
        '{"retrieval":{"embedder":"builtin"}}',
        "--config",
        conf,
        "--json",
      ],
      { env: LOCAL },
    );
    expect(r.stderr).not.toMatch(/unexpected error|not applied/);
    expect(r.exitCode).toBe(0);
    const run = JSON.parse(r.stdout).run;
    expect(run.retrieval.en).toMatchObject({
      fusion: { method: "zscore", params: {} },
      denseK: 30,
      settings: { weights: { dense: 1, bm25: 1 } },
    });
    expect(run.retrieval["pt-BR"]).toMatchObject({ fusion: { method: "zscore" }, denseK: 30 });
    expect(run.retrieval["es-419"]).toMatchObject({
      fusion: { method: "minmax", params: {} },
      denseK: 30,
      settings: { weights: { dense: 0.3, bm25: 1 } },
    });
    const text = await runCli(
      [
        "eval",
        "--kb",
        kb.dir,
        "--store",
        "memory",
        "--config",
        '{"retrieval":{"embedder":"builtin"}}',
        "--config",
        conf,
      ],
      { env: LOCAL },
    );
    expect(text.stdout).toMatch(/^retrieval es-419: fusion=minmax\(\) denseK=30 .*weights\(bm25=1 dense=0\.3\)$/m);
    expect(text.stdout).toMatch(/^retrieval en: fusion=zscore\(\) denseK=30 .*weights\(bm25=1 dense=1\)$/m);

    await writeFile(conf, JSON.stringify({ version: 1, locales: { "es-mx": { fusion: "minmax" } } }));
    const bad = await runCli(["eval", "--kb", kb.dir, "--store", "memory", "--config", conf], { env: LOCAL });
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toMatch(/locales\.es-mx/);
  }, 120_000);

  it("on the shipped KB never writes a configuration whose cross-validated score is below the defaults'; --keep-defaults writes nothing then", async () => {
    const out = path.join(tmp.dir, "shipped.json");
    const args = ["tune", "--kb", "kb", "--store", "memory", "--out", out, "--json"];
    const r = await runCli(args, { env: LOCAL, timeoutMs: 420_000 });
    expect(r.stderr).not.toMatch(/unexpected error/);
    expect(r.exitCode).toBe(0);
    type Out = {
      config: {
        retrieval: Record<string, unknown>;
        tuned: { cvScore: number; defaultsScore: number; written: string };
      };
      decision: { adopted: boolean; written: string; minGain: number };
    };
    const j = JSON.parse(r.stdout) as Out;
    const file = parseConfig(JSON.parse(await readFile(out, "utf8")), out);
    expect(file.retrieval).toEqual(j.config.retrieval);
    if (j.decision.adopted) {
      // Adopted only with a clear cross-validated gain.
      expect(j.config.tuned.cvScore).toBeGreaterThanOrEqual(j.config.tuned.defaultsScore + j.decision.minGain - 1e-6);
      expect(j.decision.written).toBe("tuned");
    } else {
      // Otherwise the file holds the shipped defaults of the LSA embedder on this KB (min-max, α = λ·κ, 20/50, k1 0.9 b 0.4; issue 37).
      expect(j.decision.written).toBe("defaults");
      expect(file.retrieval).toMatchObject({ fusion: "minmax", denseK: 20, bm25K: 50, bm25: { k1: 0.9, b: 0.4 } });
      const keep = path.join(tmp.dir, "kept.json");
      const k = await runCli(["tune", "--kb", "kb", "--store", "memory", "--out", keep, "--keep-defaults"], {
        env: LOCAL,
        timeoutMs: 420_000,
      });
      expect(k.exitCode).toBe(0);
      expect(k.stdout).toMatch(/Decision: the tuning does not beat the defaults by ≥ 0\.005/);
      expect(k.stdout).toMatch(/--keep-defaults: nothing written to/);
      await expect(readFile(keep, "utf8")).rejects.toThrow(/ENOENT/);
    }
  }, 900_000);
});
