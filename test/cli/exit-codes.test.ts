/**
 * Each exit code through the real bin in a child process (docs/gates-and-exit-codes.md):
 * 0 pass, 2 usage or data, 3 model unavailable, 70 internal error. Exit 1 (a gate failed)
 * needs a store: test/cli/gates.int.test.ts drives it. Nothing here starts Chroma: where a
 * check must come before any store starts, CHROMA_URL points at a port where nothing
 * listens, so a store opened too early would turn the expected exit 2 into a 3.
 */
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { baselineFromReport } from "../../src/eval/gate/baseline.js";
import { reportToJSON } from "../../src/eval/report/render.js";
import { loadKnowledgeBase } from "../../src/kb/cards.js";
import { loadCases } from "../../src/kb/cases.js";
import { datasetHash } from "../../src/kb/hash.js";
import { fixtureReport } from "../eval/report-fixture.js";
import { tempDir } from "../helpers/chroma.js";
import { ROOT, runCli } from "../helpers/cli.js";
import { MINI_KB } from "../helpers/fixtures.js";

const DEAD_STORE = { CHROMA_URL: "http://127.0.0.1:9" };
let dir: string;
let cleanup: () => Promise<void>;

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir("exit-codes"));
});
afterAll(async () => cleanup());

describe("exit 0 and store-less honesty", () => {
  it("--store none shows no numeric retrieval or answer-side value in the table or the JSON", async () => {
    const json = path.join(dir, "storeless.json");
    const r = await runCli(["eval", "--store", "none", "--kb", MINI_KB, "--out", `json:${json}`, "--verbose"]); // every table (the first screen folds them)
    expect(r.exitCode).toBe(0);
    const rows = r.stdout
      .split("\n")
      .filter((l) =>
        /^(hit|recall|nDCG|MRR|P)@5|^(citation_coverage|citation_correctness|refusal_correctness|groundedness)\s/.test(
          l,
        ),
      );
    expect(rows.length).toBe(3 * 9); // 9 keys, in the kind, locale and turn-position tables
    for (const row of rows) {
      expect(row).toMatch(/not measured \(no store/);
      expect(row).not.toMatch(/\d\.\d{3}|n=\d/);
    }
    expect(r.stdout).toMatch(/^refusal_correctness\s+not measured \(no store: answered without retrieved context\)/m);
    expect(r.stdout).toContain("gate: PASS (no floor or baseline check was set)");
    const report = JSON.parse(await readFile(json, "utf8"));
    expect(report.aggregates).toEqual({});
    for (const split of Object.values(report.splits) as Record<string, object>[])
      for (const g of Object.values(split)) expect(g).toEqual({});
    expect(report.vacuousReasons.citation_coverage).toBe("no store: answered without retrieved context");
    expect(report.vacuousReasons.retrieval_hit_at_k).toBe("no store");
  }, 120_000);
});

describe("exit 2: usage and data errors, found before anything runs", () => {
  it("a floor or baseline on a key not measured without a store", async () => {
    for (const extra of [
      ["--gate", "min-hit=0.5"],
      ["--gate", "max-flips=0"],
    ]) {
      const r = await runCli(["eval", "--store", "none", "--kb", MINI_KB, ...extra]);
      expect(r.exitCode, extra.join(" ")).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr).toMatch(/was not measured \(no store/);
      expect(r.stderr).not.toContain("Store-less run"); // rejected before the run began
    }
  }, 120_000);

  it("an unknown --case id, before any store starts", async () => {
    const r = await runCli(
      ["eval", "--kb", MINI_KB, "--case", "no-such-case", "--config", '{"retrieval":{"embedder":"builtin"}}'],
      { env: DEAD_STORE },
    );
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('Expected `--case` to be the id of a case in the dataset, got "no-such-case"');
  }, 120_000);

  it("a --locale subset against a full-set baseline, before any store starts, with the exact command to run", async () => {
    const kb = await loadKnowledgeBase(MINI_KB);
    const cases = await loadCases(path.join(MINI_KB, "eval", "cases.jsonl"), kb);
    const baseline = baselineFromReport(await fixtureReport({ datasetHash: datasetHash(cases), k: 5 }));
    const file = path.join(dir, "baseline.json");
    await writeFile(file, JSON.stringify(baseline));
    const r = await runCli(
      [
        "eval",
        "--kb",
        MINI_KB,
        "--config",
        '{"retrieval":{"embedder":"builtin"}}',
        "--baseline",
        file,
        "--gate",
        "max-drop=auto",
        "--locale",
        "en",
      ],
      { env: DEAD_STORE },
    );
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(
      `${file} covers all 5 cases but --locale/--case selects 3; compare the full run with \`retrace eval --kb ${MINI_KB} --config '{"retrieval":{"embedder":"builtin"}}' --baseline ${file} --gate max-drop=auto\``,
    );
    const k3 = await runCli(
      [
        "eval",
        "--kb",
        MINI_KB,
        "--config",
        '{"retrieval":{"embedder":"builtin"}}',
        "--baseline",
        file,
        "--gate",
        "max-drop=auto",
        "-k",
        "3",
      ],
      { env: DEAD_STORE },
    );
    expect(k3.exitCode).toBe(2);
    expect(k3.stderr).toContain(
      `its \`k\` is 5 but this run's is 3; compare at the baseline's k with \`retrace eval --kb ${MINI_KB} --config '{"retrieval":{"embedder":"builtin"}}' --baseline ${file} --gate max-drop=auto\``,
    );
  }, 120_000);

  it("retrace compare on a report missing a turn's results names the file and the field", async () => {
    const report = JSON.parse(reportToJSON(await fixtureReport()));
    delete report.turns[2].results;
    const file = path.join(dir, "broken-report.json");
    await writeFile(file, JSON.stringify(report));
    const r = await runCli(["compare", file, file]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(
      `${file}: field \`turns[2].results\` missing required field; expected the turn's evaluator results`,
    );
    expect(r.stderr).not.toMatch(/TypeError|internal error/);
  }, 120_000);
});

describe("exit 3 and exit 70", () => {
  it("exit 3: a model that is not available locally", async () => {
    const r = await runCli(["eval", "--kb", MINI_KB, "--config", '{"retrieval":{"embedder":"no-such/model"}}'], {
      env: DEAD_STORE,
    });
    expect(r.exitCode).toBe(3);
    expect(r.stderr).toContain("Model `no-such/model` is not available locally");
  }, 120_000);

  it("exit 70: an unexpected exception inside a command prints message, stack and the hint to report it", async () => {
    const file = path.join(dir, "INJECT_INTERNAL_FAULT.json");
    await writeFile(file, reportToJSON(await fixtureReport()));
    const inject = pathToFileURL(path.join(ROOT, "test", "fixtures", "faults", "internal-fault.mjs")).href;
    const r = await runCli(["report", file, "--floors", "--json"], { env: { NODE_OPTIONS: `--import=${inject}` } });
    expect(r.exitCode).toBe(70);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("retrace: internal error: injected fault");
    expect(r.stderr).toMatch(/\n {4}at /); // the stack
    expect(r.stderr).toContain("This is a bug in retrace");
    // Without the fault the same command succeeds: the 70 came from the injected exception.
    const ok = await runCli(["report", file, "--floors", "--json"]);
    expect(ok.exitCode).toBe(0);
  }, 120_000);
});
