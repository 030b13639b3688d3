/**
 * `--out langsmith:FILE` writes feedback LangSmith accepts (issue 52):
 * - every record validates against the Python SDK's `FeedbackCreate`
 *   (scripts/langsmith-feedback-check.py; `langsmith` pinned in .ci/run), with
 *   no field it does not know, `id`, `run_id`, `trace_id`, `session_id` and
 *   `feedback_source` set and scores of at most 4 decimals;
 * - the upload block of docs/recorded-traces.md, run as written with the real
 *   `langsmith` JS client against a local stand-in of the API, sends every
 *   field of every record as written (the source type `model`, not the
 *   client's default `api`; the trace id; the project id);
 * - a root run exported without a project id is exit 2 naming it, nothing written.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { uuidV5 } from "../../src/app/traces-eval.js";
import { ROOT, runCli } from "../helpers/cli.js";
import { docBlock } from "../helpers/doc-block.js";
import { runNode, startRecordingStub } from "../helpers/record-stub.js";

const DIR = path.join(ROOT, "test", "fixtures", "traces");
const LANGSMITH = path.join(DIR, "langsmith.runs.jsonl");
const base = ["--catalog", path.join(DIR, "catalog.tsv"), "--cases", path.join(DIR, "cases.jsonl"), "-k", "3"];

let tmp: string;
let file: string;
let records: Record<string, unknown>[];

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), "retrace-feedback-"));
  file = path.join(tmp, "feedback.jsonl");
  const r = await runCli([
    "eval",
    "--traces",
    LANGSMITH,
    ...base,
    "--gate",
    "max-errors=1",
    "--out",
    `langsmith:${file}`,
  ]);
  expect(r.exitCode, r.stderr).toBe(0);
  records = readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}, 120_000);

afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

/** The root runs of the fixture, with their trace and project ids, read here from the raw export. */
function rawRoots(): Map<string, { trace_id: string; session_id: string }> {
  const out = new Map<string, { trace_id: string; session_id: string }>();
  for (const line of readFileSync(LANGSMITH, "utf8").split("\n").filter(Boolean)) {
    const r = JSON.parse(line) as { id: string; parent_run_id?: string; trace_id: string; session_id: string };
    if (r.parent_run_id === undefined || r.parent_run_id === null)
      out.set(r.id, { trace_id: r.trace_id, session_id: r.session_id });
  }
  return out;
}

describe("uuidV5", () => {
  it("gives RFC 9562's example: www.example.com in the DNS namespace", () => {
    // RFC 9562, Appendix A.4 (UUIDv5 example).
    expect(uuidV5("6ba7b810-9dad-11d1-80b4-00c04fd430c8", "www.example.com")).toBe(
      "2ed6657d-e927-568b-95e1-2665a8aea6a2",
    );
  });
});

describe("LangSmith feedback records", () => {
  it("name each scored turn's root run, its trace and its project; ids unique; scores of at most 4 decimals", () => {
    // 7 scored turns (the errored one is not scored) × 5 retrieval metrics.
    expect(records).toHaveLength(35);
    const roots = rawRoots();
    for (const f of records) {
      const root = roots.get(f.run_id as string);
      expect(root, `run ${String(f.run_id)}`).toBeDefined();
      expect(f.trace_id).toBe(root!.trace_id);
      expect(f.session_id).toBe(root!.session_id);
      expect(f.feedback_source).toMatchObject({ type: "model" });
      expect(f.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      const s = f.score as number;
      expect(Math.abs(s * 1e4 - Math.round(s * 1e4))).toBeLessThan(1e-6);
    }
    expect(new Set(records.map((f) => f.id)).size).toBe(35);
    // Unrounded metric values exist in this run (nDCG 0.5 / 0.6309…, precision 1/3): the rounding is exercised.
    expect(records.some((f) => f.key === "retrieval_precision_at_k" && f.score === 0.3333)).toBe(true);
  });

  it("validate against the Python SDK's FeedbackCreate", () => {
    const py = spawnSync("python3", [path.join(ROOT, "scripts", "langsmith-feedback-check.py"), file], {
      encoding: "utf8",
    });
    expect(
      py.status,
      `python3 scripts/langsmith-feedback-check.py failed (pip install langsmith, as .ci/run does):\n${py.stderr}`,
    ).toBe(0);
    const out = JSON.parse(py.stdout) as { version: string; records: number; errors: string[] };
    expect(out.errors).toEqual([]);
    expect(out.records).toBe(35);
  });

  it("the documented upload, with the real langsmith client, sends every field of every record", async () => {
    const stub = await startRecordingStub((r) =>
      r.method === "GET" && r.path === "/info"
        ? { status: 200, body: { version: "stub", batch_ingest_config: { use_multipart_endpoint: false } } }
        : undefined,
    );
    try {
      const dir = await mkdtemp(path.join(tmp, "upload-"));
      await symlink(path.join(ROOT, "node_modules"), path.join(dir, "node_modules"), "dir");
      await writeFile(
        path.join(dir, "upload.mts"),
        docBlock("docs/recorded-traces.md", "// upload retrace's LangSmith feedback"),
      );
      await writeFile(path.join(dir, "feedback.jsonl"), readFileSync(file));
      const run = await runNode([path.join(ROOT, "node_modules", "tsx", "dist", "cli.mjs"), "upload.mts"], {
        cwd: dir,
        timeoutMs: 60_000,
        env: {
          ...process.env,
          LANGSMITH_ENDPOINT: stub.url,
          LANGSMITH_API_KEY: "lsv2-test-not-a-key",
          LANGSMITH_TRACING: "false",
        },
      });
      expect(run.status, run.stderr).toBe(0);
      const sent = stub.requests.filter((r) => r.method === "POST" && r.path === "/feedback").map((r) => r.body);
      expect(sent).toHaveLength(records.length);
      const byId = new Map(sent.map((b) => [(b as { id: string }).id, b as Record<string, unknown>]));
      for (const f of records) {
        const b = byId.get(f.id as string);
        expect(b, `feedback ${String(f.id)} was not sent`).toBeDefined();
        // Every field as written (the client may add fields of its own: extend_trace_retention, …).
        expect(b).toMatchObject(f);
      }
    } finally {
      await stub.close();
    }
  }, 90_000);

  it("a root run with no project id is exit 2 naming it, and nothing is written", async () => {
    const stripped = path.join(tmp, "no-project.jsonl");
    const lines = readFileSync(LANGSMITH, "utf8").split("\n").filter(Boolean);
    await writeFile(
      stripped,
      lines
        .map((l) => {
          const r = JSON.parse(l) as Record<string, unknown>;
          delete r.session_id;
          return JSON.stringify(r);
        })
        .join("\n") + "\n",
    );
    const out = path.join(tmp, "none.jsonl");
    const json = path.join(tmp, "none.json");
    const r = await runCli([
      "eval",
      "--traces",
      stripped,
      ...base,
      "--gate",
      "max-errors=1",
      "--out",
      `langsmith:${out}`,
      "--out",
      `json:${json}`,
    ]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/root run [0-9a-f-]{36} carries no project id/);
    expect(existsSync(out)).toBe(false);
    expect(existsSync(json)).toBe(false);
  });
});
