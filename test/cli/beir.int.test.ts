/**
 * `retrace beir` end to end: the real bin, a local Chroma it starts itself, a
 * tiny BEIR folder; a re-run reuses the collection; bad input exits 2 naming
 * file, line and field before any store is started.
 */
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/chroma.js";
import { startSilentServer } from "../helpers/chroma-proxy.js";

let tmp: { dir: string; cleanup: () => Promise<void> };
let data: string;
const LOCAL = { CHROMA_URL: "" };

beforeAll(async () => {
  tmp = await tempDir("cli-beir");
  data = path.join(tmp.dir, "ds");
  await mkdir(path.join(data, "qrels"), { recursive: true });
  const docs = [
    ["d1", "Wing lift", "the lift of a swept wing at high speed"],
    ["d2", "Boundary layer", "laminar boundary layer transition on a flat plate"],
    ["d3", "Heat transfer", "heat transfer in hypersonic flow"],
    ["d4", "Buckling", "buckling of thin cylindrical shells under pressure"],
  ];
  await writeFile(
    path.join(data, "corpus.jsonl"),
    docs.map(([id, title, text]) => JSON.stringify({ _id: id, title, text })).join("\n"),
  );
  await writeFile(
    path.join(data, "queries.jsonl"),
    [
      JSON.stringify({ _id: "1", text: "lift of swept wings" }),
      JSON.stringify({ _id: "2", text: "boundary layer transition" }),
    ].join("\n"),
  );
  await writeFile(path.join(data, "qrels", "test.tsv"), "query-id\tcorpus-id\tscore\n1\td1\t2\n2\td2\t1\n");
});

afterAll(async () => {
  await tmp?.cleanup();
});

describe("retrace beir", () => {
  it("benchmarks every mode, writes TREC runs, and reuses the collection on a re-run", async () => {
    const args = [
      "beir",
      data,
      "--data-dir",
      path.join(tmp.dir, "chroma"),
      "--run-out",
      path.join(tmp.dir, "runs"),
      "--config",
      JSON.stringify({ retrieval: { embedder: "builtin" } }),
    ];
    const first = await runCli(args, { env: LOCAL });
    expect(first.stderr).not.toMatch(/unexpected error/);
    expect(first.exitCode).toBe(0);
    expect(first.stdout).toMatch(/^bm25 +2 +1\.0000/m); // both queries' gold first in BM25 on this toy set
    expect(first.stdout).toMatch(/^hybrid +2 /m);
    expect(first.stdout).toMatch(/hybrid − bm25: Δndcg@10/);
    // The headline (first line): hybrid − the better stage per measure; BM25 is perfect on nDCG@10 here, so it is the best stage.
    const [headNdcg, headRecall] = first.stdout.split("\n");
    expect(headNdcg).toMatch(/^hybrid − best stage \(bm25\): nDCG@10 [+-]\d\.\d{4}( \[\S+, \S+\])? p=\d\.\d{4}$/);
    expect(headRecall).toMatch(
      /^hybrid − best stage \((bm25|dense)\): R@100 [+-]\d\.\d{4}( \[\S+, \S+\])? p=\d\.\d{4}$/,
    );
    expect(first.stdout).toMatch(/\(ingested\)/);
    const run = await readFile(path.join(tmp.dir, "runs", "bm25.trec"), "utf8");
    expect(run.split("\n")[0]).toMatch(/^1 Q0 d1 1 \d+ retrace-bm25$/);
    const second = await runCli([...args, "--json", "--modes", "bm25"], { env: LOCAL });
    expect(second.exitCode).toBe(0);
    expect(second.stderr).toMatch(/already up to date/);
    const json = JSON.parse(second.stdout) as {
      version: number;
      modes: Array<{ mode: string; n: number; mean: Record<string, number> }>;
    };
    expect(json.version).toBe(1);
    expect(json.modes.map((m) => [m.mode, m.n, m.mean["ndcg@10"]])).toEqual([["bm25", 2, 1]]);
    expect((json as unknown as { marginOverBestStage: unknown }).marginOverBestStage).toEqual({}); // no fused mode run: no margin
  }, 120_000);

  it("--embedder lsa fits on the corpus (state in <data dir>/lsa); the hybrid branches take a --config file's denseK/bm25K", async () => {
    const conf = path.join(tmp.dir, "depths.json");
    await writeFile(conf, JSON.stringify({ version: 1, retrieval: { denseK: 1, bm25K: 1 } }));
    const dataDir = path.join(tmp.dir, "chroma-lsa");
    const runs = path.join(tmp.dir, "runs-lsa");
    const r = await runCli(
      [
        "beir",
        data,
        "--data-dir",
        dataDir,
        "--run-out",
        runs,
        "--config",
        JSON.stringify({ retrieval: { embedder: "lsa" } }),
        "--modes",
        "dense,hybrid",
        "--config",
        conf,
      ],
      { env: LOCAL },
    );
    expect(r.stderr).not.toMatch(/unexpected error/);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/^Embedder: lsa-\d+-[0-9a-f]{12}-v1 \(corpus-fit LSA/m);
    expect(r.stdout).toContain("hybrid branches: dense 1, bm25 1");
    // the settings line names the fusion, the weights and the latent share, its chance baseline and κ (no signals shift: the default fusion is min-max since issue 37)
    const m =
      /fusion=minmax\s+weights\s+dense\s+([\d.]+),\s+bm25\s+([\d.]+);[\s\S]*?LSA\s+latent\s+share ([\d.]+), chance ([\d.]+), κ n\/a \(full\s+rank\)/.exec(
        r.stdout,
      );
    expect(m).not.toBeNull();
    expect(r.stdout).not.toMatch(/signals\s+shift/);
    // (four documents: the 128 axes are full rank and keep everything, by chance too: κ is not measurable,
    // so the latent-share weight, clamped to 0.9)
    expect(m!.slice(1).map(Number)).toEqual([0.9, 0.1, 1, 1]);
    expect((await readdir(path.join(dataDir, "lsa"))).filter((f) => f.endsWith(".lsa"))).toHaveLength(1);
    // dense alone lists the whole corpus (depth 100 > 4 documents); hybrid fuses one document from each branch
    const perQuery = (text: string) =>
      text
        .trim()
        .split("\n")
        .filter((l) => l.startsWith("1 ")).length;
    expect(perQuery(await readFile(path.join(runs, "dense.trec"), "utf8"))).toBe(4);
    expect(perQuery(await readFile(path.join(runs, "hybrid.trec"), "utf8"))).toBeLessThanOrEqual(2);
  }, 120_000);

  it("exits 2 naming file, line and field for a malformed dataset, and the key for a bad config", async () => {
    const bad = path.join(tmp.dir, "bad");
    await mkdir(path.join(bad, "qrels"), { recursive: true });
    await writeFile(path.join(bad, "corpus.jsonl"), '{"_id":"d1","text":"x"}\n{"_id":"d2"}\n');
    await writeFile(path.join(bad, "queries.jsonl"), '{"_id":"1","text":"x"}\n');
    await writeFile(path.join(bad, "qrels", "test.tsv"), "1\td1\t1\n");
    const r = await runCli(["beir", bad], { env: LOCAL });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/corpus\.jsonl:2: field `text`/);
    const conf = path.join(tmp.dir, "conf.json");
    await writeFile(conf, JSON.stringify({ version: 1, retrieval: { rrfK: -5 } }));
    const c = await runCli(["beir", data, "--config", conf], { env: LOCAL });
    expect(c.exitCode).toBe(2);
    expect(c.stderr).toMatch(/field `retrieval\.rrfK`/);
  }, 60_000);

  it("--timeout bounds every Chroma request: a server that never answers is exit 3 after the deadline", async () => {
    const silent = await startSilentServer();
    try {
      const r = await runCli(
        ["beir", data, "--store", `http://127.0.0.1:${silent.port}`, "--config", '{"run":{"timeout":1}}'],
        {
          env: LOCAL,
        },
      );
      expect(r.exitCode).toBe(3);
      expect(r.stderr).toMatch(/did not answer GET \/api\/v2\/heartbeat within 1\.0 s/);
    } finally {
      await silent.close();
    }
  }, 60_000);
});
