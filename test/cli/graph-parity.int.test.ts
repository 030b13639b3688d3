/**
 * Parity of `retrace eval --graph` with retrace's own graph (issue 21 item 1;
 * docs/evaluate-your-graph.md): one list of scenarios, run with the real bin
 * against retrace's graph (`--store memory --embedder builtin`) and against a
 * graph of the user's own (test/fixtures/graphs/kb-agent.mjs, a LangGraph.js
 * graph with a custom retriever over the KB's cards), each in a fresh copy of
 * the mini KB, asserting the same behaviour class for both: exit code, which
 * files exist, which kind of message.
 *
 * Then what only `--graph` has: the baseline identity of the graph (`g.mjs`,
 * `./g.mjs` and its absolute path are one graph; a changed module is a note),
 * the scoring recorded in the baseline (a different retrieval-call mode is
 * refused), `--configurable`, and the checks made before the graph module loads.
 */
import { existsSync } from "node:fs";
import { appendFile, copyFile, cp, mkdtemp, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reportToJSON } from "../../src/eval/report/render.js";
import { withoutTimings } from "../../src/eval/report/timings.js";
import type { Report } from "../../src/eval/report/types.js";
import { ROOT, runCli, type CliResult } from "../helpers/cli.js";
import { copyKb, MINI_KB, SHIPPED_KB } from "../helpers/fixtures.js";

const AGENT = path.join(ROOT, "test", "fixtures", "graphs", "kb-agent.mjs");

interface Path {
  name: string;
  /** The options that select the graph. */
  args: string[];
}
const PATHS: Path[] = [
  { name: "retrace's own graph", args: ["--store", "memory", "--config", '{"retrieval":{"embedder":"builtin"}}'] },
  { name: "a graph of your own (--graph)", args: ["--graph", path.relative(ROOT, AGENT)] },
];

/** What a scenario observed, reduced to what must be the same on both paths. */
interface Outcome {
  exitCode: number | null;
  /** Files (relative to the scenario's folder) that exist afterwards. */
  files: string[];
  /** The kind of message: the first line of stderr that says why a run was refused, normalized. */
  message?: string;
  extra?: unknown;
}

const json = async (file: string) => reportToJSON(withoutTimings(JSON.parse(await readFile(file, "utf8")) as Report));
const refusal = (r: CliResult) =>
  /^retrace: (Expected `[^`]+`)/m.exec(r.stderr)?.[1] ?? (r.exitCode === 2 ? r.stderr : undefined);

interface Scenario {
  name: string;
  run: (p: Path, kb: string, dir: string) => Promise<Outcome>;
}

const eval_ = (p: Path, kb: string, ...args: string[]) =>
  runCli(["eval", ...p.args, "--kb", kb, ...args], { timeoutMs: 120_000 });
const exists = (dir: string, names: string[]) => names.filter((n) => existsSync(path.join(dir, n)));

const SCENARIOS: Scenario[] = [
  {
    name: "--update-baseline with --kb COPY writes COPY/eval/baseline.json, and --max-drop without --baseline compares with it",
    run: async (p, kb) => {
      const shipped = await stat(path.join(SHIPPED_KB, "eval", "baseline.json"));
      const u = await eval_(p, kb, "--update-baseline");
      expect(u.exitCode, u.stderr).toBe(0);
      const after = await stat(path.join(SHIPPED_KB, "eval", "baseline.json"));
      expect(after.mtimeMs).toBe(shipped.mtimeMs); // the shipped baseline is left alone
      expect(existsSync(path.join(MINI_KB, "eval", "baseline.json"))).toBe(false);
      const d = await eval_(p, kb, "--gate", "max-drop=0.5", "--json");
      expect(d.exitCode, d.stderr).toBe(0);
      const report = JSON.parse(d.stdout) as Report;
      // It compared: drop checks against COPY/eval/baseline.json, with the tolerance set on the command line.
      expect(report.gate?.checks?.some((c) => c.kind === "drop")).toBe(true);
      expect(report.gate?.tolerance).toEqual({ maxDrop: 0.5, source: "set with --gate max-drop" });
      // --gate max-drop=auto: the tolerance is the default, and says so.
      const b = await eval_(
        p,
        kb,
        "--baseline",
        path.join(kb, "eval", "baseline.json"),
        "--gate",
        "max-drop=auto",
        "--json",
      );
      const source = (JSON.parse(b.stdout) as Report).gate?.tolerance?.source ?? "";
      return {
        exitCode: u.exitCode,
        files: exists(kb, ["eval/baseline.json"]),
        extra: { defaultTolerance: source.startsWith("default ") },
      };
    },
  },
  {
    name: "--max-flips without a baseline file is exit 2",
    run: async (p, kb) => {
      const r = await eval_(p, kb, "--gate", "max-flips=0");
      expect(r.stderr).toMatch(/existing baseline file \(create one with `retrace eval/);
      expect(r.stdout).not.toMatch(/PASS/);
      return { exitCode: r.exitCode, files: exists(kb, ["eval/baseline.json"]), message: refusal(r) };
    },
  },
  {
    name: "--max-drop without a baseline file is exit 2",
    run: async (p, kb) => {
      const r = await eval_(p, kb, "--gate", "max-drop=0.01");
      return { exitCode: r.exitCode, files: [], message: refusal(r) };
    },
  },
  {
    name: "--locale EN (not canonical) is exit 2",
    run: async (p, kb) => {
      const r = await eval_(p, kb, "--locale", "EN");
      return { exitCode: r.exitCode, files: [], message: `${refusal(r)} ${/got "EN"/.test(r.stderr)}` };
    },
  },
  {
    name: "--locale fr (no case of it) is exit 2",
    run: async (p, kb) => {
      const r = await eval_(p, kb, "--locale", "fr");
      return { exitCode: r.exitCode, files: [], message: refusal(r) };
    },
  },
  {
    name: "--case nope is exit 2",
    run: async (p, kb) => {
      const r = await eval_(p, kb, "--case", "nope");
      return { exitCode: r.exitCode, files: [], message: refusal(r) };
    },
  },
  {
    name: "--junit, --out (markdown) and --report-json are written",
    run: async (p, kb, dir) => {
      const r = await eval_(
        p,
        kb,
        "--out",
        `junit:${path.join(dir, "junit.xml")}`,
        "--out",
        path.join(dir, "report.md"),
        "--out",
        `json:${path.join(dir, "report.json")}`,
      );
      expect(r.exitCode, r.stderr).toBe(0);
      const junit = await readFile(path.join(dir, "junit.xml"), "utf8");
      const md = await readFile(path.join(dir, "report.md"), "utf8");
      return {
        exitCode: r.exitCode,
        files: exists(dir, ["junit.xml", "report.md", "report.json"]),
        extra: { junit: /<testsuite[ >]/.test(junit), md: /## Gate/.test(md) },
      };
    },
  },
  {
    name: "--shard 1/2 and 2/2, then retrace merge, equal the unsharded report (outside timings) with the same gate",
    run: async (p, kb, dir) => {
      const full = await eval_(p, kb, "--gate", "min-hit=0.1", "--out", `json:${path.join(dir, "full.json")}`);
      const shards = [];
      for (const i of [1, 2])
        shards.push(await eval_(p, kb, "--shard", `${i}/2`, "--out", `json:${path.join(dir, `shard-${i}.json`)}`));
      const merged = await runCli([
        "merge",
        path.join(dir, "shard-1.json"),
        path.join(dir, "shard-2.json"),
        "--kb",
        kb,
        "--gate",
        "min-hit=0.1",
        "--out",
        `json:${path.join(dir, "merged.json")}`,
      ]);
      expect(merged.exitCode, merged.stderr).toBe(full.exitCode);
      const [a, b] = [await json(path.join(dir, "full.json")), await json(path.join(dir, "merged.json"))];
      expect(b).toBe(a);
      const s1 = JSON.parse(await readFile(path.join(dir, "shard-1.json"), "utf8")) as Report;
      return {
        exitCode: full.exitCode,
        files: exists(dir, ["full.json", "shard-1.json", "shard-2.json", "merged.json"]),
        extra: { shardExits: shards.map((s) => s.exitCode), shardGate: s1.gate, shardIndex: s1.shard?.index },
      };
    },
  },
  {
    name: "--shard with a gate option is exit 2 (it belongs to retrace merge)",
    run: async (p, kb) => {
      const r = await eval_(p, kb, "--shard", "1/2", "--gate", "min-hit=0.5");
      return { exitCode: r.exitCode, files: [], message: refusal(r) };
    },
  },
];

describe("parity: retrace's own graph and --graph behave alike", () => {
  const outcomes = new Map<string, Map<string, Outcome>>();
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const c of cleanups) await c();
  });

  for (const s of SCENARIOS) {
    it(
      s.name,
      async () => {
        const byPath = new Map<string, Outcome>();
        for (const p of PATHS) {
          const { dir: kb, cleanup } = await copyKb(MINI_KB);
          cleanups.push(cleanup);
          const dir = await mkdtemp(path.join(os.tmpdir(), "retrace-parity-"));
          cleanups.push(() => rm(dir, { recursive: true, force: true }));
          byPath.set(p.name, await s.run(p, kb, dir));
        }
        outcomes.set(s.name, byPath);
        const [own, yours] = PATHS.map((p) => byPath.get(p.name)!);
        expect(yours, `${s.name}: --graph behaves as retrace's own graph`).toEqual(own);
      },
      600_000,
    );
  }
});

describe("--graph only: the graph's identity, its scoring and --configurable", () => {
  let dir: string;
  let kb: string;
  const env = () => ({ KB_AGENT_KB: kb });
  const run = (args: string[]) => runCli(["eval", "--kb", "kb", ...args], { cwd: dir, env: env(), timeoutMs: 120_000 });
  beforeAll(async () => {
    // A project of the user's own: the graph module at its root, its own node_modules (a link to ours), its KB.
    dir = await mkdtemp(path.join(os.tmpdir(), "retrace-graph-identity-"));
    kb = path.join(dir, "kb");
    await cp(MINI_KB, kb, { recursive: true });
    await copyFile(AGENT, path.join(dir, "g.mjs"));
    await symlink(path.join(ROOT, "node_modules"), path.join(dir, "node_modules"), "dir");
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("g.mjs, ./g.mjs and its absolute path are one graph: the baseline of one is the baseline of the others", async () => {
    const u = await run(["--graph", "g.mjs", "--update-baseline"]);
    expect(u.exitCode, u.stderr).toBe(0);
    const baseline = JSON.parse(await readFile(path.join(kb, "eval", "baseline.json"), "utf8"));
    expect(baseline.source).toEqual({ kind: "graph", module: "g.mjs", exportName: "graph" });
    expect(baseline.config.embedder).toBeNull();
    expect(baseline.storeKind).toBe("graph");
    expect(baseline.graph).toMatchObject({
      module: "g.mjs",
      exportName: "graph",
      retrievalCall: "last",
      idMapHash: null,
      configurableHash: null,
    });
    expect(baseline.graph.moduleHash).toMatch(/^[0-9a-f]{64}$/);
    for (const spelling of ["./g.mjs", path.join(dir, "g.mjs"), "g.mjs#graph"]) {
      const r = await run(["--graph", spelling, "--gate", "max-drop=0", "--gate", "max-flips=0", "--json"]);
      expect(r.exitCode, `${spelling}: ${r.stderr}`).toBe(0);
      const report = JSON.parse(r.stdout) as Report;
      expect(report.run.source).toBe("graph");
      expect(report.run.embedder).toBeNull();
      expect(report.run.graph?.file).toBe("g.mjs"); // never an absolute path in a report
      expect(r.stderr).not.toMatch(/graph module changed/);
    }
  }, 300_000);

  it("a changed graph module is a note ('graph module changed since the baseline'), in the gate and in retrace compare", async () => {
    const g = path.join(dir, "changed.mjs");
    await copyFile(path.join(dir, "g.mjs"), g);
    const u = await run(["--graph", "changed.mjs", "--update-baseline", "--baseline", "changed-baseline.json"]);
    expect(u.exitCode, u.stderr).toBe(0);
    await appendFile(g, "\n// an edit\n");
    const r = await run([
      "--graph",
      "changed.mjs",
      "--baseline",
      "changed-baseline.json",
      "--gate",
      "max-flips=0",
      "--out",
      "json:changed.json",
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toMatch(
      /graph module changed since the baseline \(changed\.mjs: sha256 [0-9a-f]{12} in the baseline, sha256 [0-9a-f]{12} in this run\)/,
    );
    // retrace compare names the two files it compares, whichever they are (a report is no "baseline").
    const c = await runCli(["compare", "changed-baseline.json", "changed.json"], { cwd: dir });
    expect(c.exitCode, c.stderr).toBe(0);
    expect(c.stderr).toMatch(
      /graph module differs between changed-baseline\.json and changed\.json \(changed\.mjs: sha256 [0-9a-f]{12} in changed-baseline\.json/,
    );
    expect(c.stderr).not.toContain("since the baseline");
  }, 300_000);

  it("another retrieval-call mode or id key than the baseline's is refused (exit 2) naming the difference, in the gate and in retrace compare", async () => {
    const r = await run(["--graph", "g.mjs", "--retrieval-call", "all", "--gate", "max-drop=0.1"]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/its `graph\.retrievalCall` is "last" but this run's is "all"/);
    const k = await run(["--graph", "g.mjs", "--id-key", "parentId", "--gate", "max-drop=0.1"]);
    expect(k.exitCode).toBe(2);
    expect(k.stderr).toMatch(/its `graph\.idKey` is/);
    const all = await run(["--graph", "g.mjs", "--retrieval-call", "all", "--out", "json:all.json"]);
    expect(all.exitCode, all.stderr).toBe(0);
    const c = await runCli(["compare", path.join("kb", "eval", "baseline.json"), "all.json"], { cwd: dir });
    expect(c.exitCode).toBe(2);
    expect(c.stderr).toMatch(/field `graph\.retrievalCall` cannot pair/);
  }, 300_000);

  it("--configurable reaches the graph on every turn under retrace's thread_id, and is recorded as a hash and its keys", async () => {
    const r = await run([
      "--graph",
      "g.mjs",
      "--config",
      '{"run":{"configurable":{"note":"hi","locale":"es-419","thread_id":"mine"}}}',
      "--json",
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/run.configurable: its thread_id is replaced by retrace's own/);
    const report = JSON.parse(r.stdout) as Report;
    expect(report.run.graph?.configurable?.keys).toEqual(["locale", "note", "thread_id"]);
    expect(report.run.graph?.configurable?.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(report)).not.toMatch(/"hi"|mine/); // values are not recorded
    // locale=es-419 kept only the Spanish card; the note and retrace's thread id reached the answer node.
    const first = report.turns.find((t) => t.caseId === "en-freeze-001" && t.turn === 0)!;
    expect(first.answer).toMatch(/\(hi; thread [0-9a-f]{6}:en-freeze-001\)$/);
    expect(report.turns.flatMap((t) => t.retrievedIds ?? []).every((id) => id === "es-congelar-tarjeta")).toBe(true);
    // The same object from a file, keys in another order: the same hash.
    await writeFile(path.join(dir, "conf.json"), '{"thread_id":"mine","locale":"es-419","note":"hi"}');
    const f = await run(["--graph", "g.mjs", "--config", '{"run":{"configurable":"conf.json"}}', "--json"]);
    expect((JSON.parse(f.stdout) as Report).run.graph?.configurable).toEqual(report.run.graph?.configurable);
    for (const bad of ["[1]", "{not json", "missing.json", "42"]) {
      const b = await run(["--graph", "g.mjs", "--config", JSON.stringify({ run: { configurable: bad } })]);
      expect(b.exitCode, bad).toBe(2);
      expect(b.stderr).toMatch(/Expected `run.configurable` to be a JSON object/);
    }
  }, 300_000);

  it("--locale and --case are checked before the graph module loads; --workers is refused with its true reason", async () => {
    await writeFile(path.join(dir, "boom.mjs"), "throw new Error('loaded');\n");
    for (const [flag, value, message] of [
      ["--locale", "EN", /Expected `--locale` to be a canonical BCP-47 language tag/],
      ["--locale", "fr", /Expected `--locale\/--case` to be a selection matching at least one case/],
      ["--case", "nope", /Expected `--case` to be the id of a case in the dataset/],
    ] as const) {
      const r = await run(["--graph", "boom.mjs", flag, value]);
      expect(r.exitCode).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stderr).not.toMatch(/loaded/);
    }
    const w = await run(["--graph", "g.mjs", "--config", '{"run":{"workers":2}}']);
    expect(w.exitCode).toBe(2);
    expect(w.stderr).toMatch(
      /'run.workers' of --config is not used with --graph \(your graph module is loaded into this one thread.*raise run.concurrency/,
    );
  }, 300_000);

  it("--max-errors is a gate check of its own: a run gated by it does not read as 'no check was set'", async () => {
    const r = await run(["--graph", "g.mjs", "--json"]);
    const report = JSON.parse(r.stdout) as Report;
    expect(report.gate?.checks?.map((c) => c.option)).toEqual(["--gate max-errors=0"]);
    const t = await run(["--graph", "g.mjs", "--gate", "max-no-retrieval=0"]);
    expect(t.stdout).toMatch(
      /gate: PASS\n {2}passed checks \(2\): --gate max-errors=0 turn_errors; --gate max-no-retrieval=0 no_retrieval/,
    );
    expect(t.stdout).not.toMatch(/no floor or baseline check was set/);
  }, 300_000);
});
