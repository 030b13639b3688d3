/**
 * `retrace beir DIR --synthetic N` end to end (real Chroma, real bin): the
 * 12-variant family scored on synthetic and real queries, τ-b printed with
 * its interval and meaning; a corpus without queries/qrels runs the
 * synthetic part only and says τ is not computable; `--tune --synthetic`
 * is refused without --allow-synthetic.
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/chroma.js";

let tmp: { dir: string; cleanup: () => Promise<void> };
let judged: string;
let corpusOnly: string;
const LOCAL = { CHROMA_URL: "" };

const DOCS = [
  ["d1", "Wing lift", "the lift of a swept wing at high speed and the drag of its tip"],
  ["d2", "Boundary layer", "laminar boundary layer transition on a flat plate with suction"],
  ["d3", "Heat transfer", "heat transfer in hypersonic flow past a blunt body nose"],
  ["d4", "Buckling", "buckling of thin cylindrical shells under external pressure"],
  ["d5", "Flutter", "flutter of panels and wings in supersonic flow"],
  ["d6", "Shock waves", "shock wave interaction with a turbulent boundary layer"],
];

beforeAll(async () => {
  tmp = await tempDir("cli-beir-synthetic");
  judged = path.join(tmp.dir, "ds");
  corpusOnly = path.join(tmp.dir, "corpus-only");
  await mkdir(path.join(judged, "qrels"), { recursive: true });
  await mkdir(corpusOnly, { recursive: true });
  const corpus = DOCS.map(([id, title, text]) => JSON.stringify({ _id: id, title, text })).join("\n");
  await writeFile(path.join(judged, "corpus.jsonl"), corpus);
  await writeFile(path.join(corpusOnly, "corpus.jsonl"), corpus);
  await writeFile(
    path.join(judged, "queries.jsonl"),
    [
      JSON.stringify({ _id: "1", text: "lift of swept wings" }),
      JSON.stringify({ _id: "2", text: "boundary layer transition" }),
      JSON.stringify({ _id: "3", text: "panel flutter" }),
    ].join("\n"),
  );
  await writeFile(
    path.join(judged, "qrels", "test.tsv"),
    "query-id\tcorpus-id\tscore\n1\td1\t2\n2\td2\t1\n2\td6\t1\n3\td5\t1\n",
  );
});

afterAll(async () => {
  await tmp?.cleanup();
});

describe("retrace beir --synthetic", () => {
  it("scores the family on both query sets and prints τ-b with its interval, the same for the same seed", async () => {
    const args = [
      "beir",
      judged,
      "--synthetic",
      "12",
      "--strategy",
      "naive,title",
      "--data-dir",
      path.join(tmp.dir, "chroma"),
      "--config",
      JSON.stringify({ retrieval: { embedder: "builtin" } }),
      "--json",
    ];
    const r = await runCli(args, { env: LOCAL });
    expect(r.stderr).not.toMatch(/unexpected error/);
    expect(r.exitCode).toBe(0);
    const j = JSON.parse(r.stdout);
    expect(j.family).toHaveLength(12);
    expect(j.family[0].name).toBe("bm25 k1=1.2 b=0.75");
    expect(j.dataset.queries).toBe(3);
    expect(j.strategies.map((s: { strategy: string }) => s.strategy)).toEqual(["naive", "title"]);
    for (const s of j.strategies) {
      expect(s.queries).toBe(12);
      expect(s.means).toHaveLength(12);
      if (s.tau !== null) expect(Math.abs(s.tau)).toBeLessThanOrEqual(1);
    }
    const again = await runCli(args, { env: LOCAL });
    expect(again.stdout).toBe(r.stdout);
    const text = await runCli(
      args.filter((a) => a !== "--json"),
      { env: LOCAL },
    );
    expect(text.stdout).toMatch(/known-item-naive 1 \(12 queries\): τ-b/);
    expect(text.stdout).toMatch(/drawing the real and the synthetic queries independently/);
  }, 180_000);

  it("without queries and qrels, runs the synthetic part and says τ is not computable", async () => {
    const r = await runCli(
      [
        "beir",
        corpusOnly,
        "--synthetic",
        "6",
        "--data-dir",
        path.join(tmp.dir, "chroma"),
        "--config",
        JSON.stringify({ retrieval: { embedder: "builtin" } }),
      ],
      { env: LOCAL },
    );
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/no queries\/qrels \(synthetic part only\)/);
    expect(r.stdout).toMatch(/τ-b n\/a — τ not computable/);
  }, 180_000);

  it("refuses --tune on synthetic queries without --allow-synthetic", async () => {
    const r = await runCli(
      [
        "beir",
        judged,
        "--tune",
        "--synthetic",
        "6",
        "--data-dir",
        path.join(tmp.dir, "chroma"),
        "--config",
        JSON.stringify({ retrieval: { embedder: "builtin" } }),
      ],
      { env: LOCAL },
    );
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/--allow-synthetic/);
  }, 60_000);
});
