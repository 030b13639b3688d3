/**
 * The import rules of docs/architecture.md §1 fire (.dependency-cruiser.cjs):
 * the project's own config is run by dependency-cruiser over a synthetic tree
 * in a temporary folder, laid out like src/, in which probe modules of the
 * harness (src/eval/) import the agent's layers and the contract. `npm run
 * check:imports` proves the real tree passes; this proves an edit that breaks
 * a rule would not.
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "./helpers/cli.js";

const DEPCRUISE = path.join(ROOT, "node_modules", "dependency-cruiser", "bin", "dependency-cruise.mjs");

let dir: string;

/** Write `files` (path → text) under the temporary folder. */
function tree(files: Record<string, string>): void {
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.join(dir, path.dirname(file)), { recursive: true });
    writeFileSync(path.join(dir, file), text);
  }
}

/** Violations dependency-cruiser reports with the project's config, as `rule: from → to`, sorted. */
function violations(): string[] {
  const r = spawnSync(
    process.execPath,
    [DEPCRUISE, "src", "--config", ".dependency-cruiser.cjs", "--output-type", "json"],
    { cwd: dir, encoding: "utf8" },
  );
  const out = JSON.parse(r.stdout) as {
    summary: { violations: { rule: { name: string }; from: string; to: string }[] };
  };
  return out.summary.violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`).sort();
}

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), "retrace-import-rules-"));
  copyFileSync(path.join(ROOT, ".dependency-cruiser.cjs"), path.join(dir, ".dependency-cruiser.cjs"));
  tree({
    "tsconfig.json": JSON.stringify({
      compilerOptions: { module: "NodeNext", moduleResolution: "NodeNext", strict: true },
      include: ["src"],
    }),
    "package.json": JSON.stringify({ type: "module" }),
    // The targets: one module in each layer the harness may or may not import.
    "src/kb/types.ts": "export type Locale = string;\n",
    "src/kb/chunk.ts": "export const chunkCard = (s: string): string[] => [s];\n",
    "src/contract/trace.ts":
      'import type { Locale } from "../kb/types.js";\nexport interface RetrievalTrace { locale?: Locale; retrievedIds: string[] }\n',
    "src/retrieval/types.ts":
      'import type { RetrievalTrace } from "../contract/trace.js";\nexport type { RetrievalTrace };\n',
    "src/nodes/retrieve.ts": 'export const RETRIEVAL_TRACE_EVENT = "retrieval_trace";\n',
    "src/graph/build.ts": "export const buildGraph = (): null => null;\n",
    "src/research/tune.ts": "export const tune = (): number => 1;\n",
    // The probes: modules of the harness, each with one import.
    "src/eval/report/uses-contract.ts":
      'import type { RetrievalTrace } from "../../contract/trace.js";\nexport type T = RetrievalTrace;\n',
    "src/eval/report/uses-kb-types.ts": 'import type { Locale } from "../../kb/types.js";\nexport type L = Locale;\n',
    "src/eval/report/types-from-retrieval.ts":
      'import type { RetrievalTrace } from "../../retrieval/types.js";\nexport type T = RetrievalTrace;\n',
    "src/eval/sweep/event-from-nodes.ts":
      'import { RETRIEVAL_TRACE_EVENT } from "../../nodes/retrieve.js";\nexport const E = RETRIEVAL_TRACE_EVENT;\n',
    "src/eval/sweep/graph.ts": 'import { buildGraph } from "../../graph/build.js";\nexport const g = buildGraph;\n',
    "src/eval/ir/research.ts": 'import { tune } from "../../research/tune.js";\nexport const t = tune;\n',
    "src/eval/measures/chunker.ts": 'import { chunkCard } from "../../kb/chunk.js";\nexport const c = chunkCard;\n',
    // The gate computes, renderers format: it may import the comparison's types, never a renderer.
    "src/eval/report/comparison.ts": "export interface Comparison { k: number }\n",
    "src/eval/report/render.ts": "export const renderTable = (): string => '';\n",
    "src/eval/report/render/shared.ts": "export const f3 = (x: number): string => x.toFixed(3);\n",
    "src/eval/report/html/compare-page.ts": "export const renderHtmlComparison = (): string => '';\n",
    "src/eval/gate/uses-comparison.ts":
      'import type { Comparison } from "../report/comparison.js";\nexport type C = Comparison;\n',
    "src/eval/gate/uses-render-index.ts":
      'import { renderTable } from "../report/render.js";\nexport const r = renderTable;\n',
    "src/eval/gate/uses-render.ts": 'import { f3 } from "../report/render/shared.js";\nexport const f = f3;\n',
    "src/eval/gate/uses-html.ts":
      'import { renderHtmlComparison } from "../report/html/compare-page.js";\nexport const h = renderHtmlComparison;\n',
  });
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the harness knows no agent", () => {
  it("fails every import of src/eval into the agent's layers, research or the card loader (type-only imports too), and of the gate into a renderer; allows the contract, kb/types and the comparison's types", () => {
    expect(violations()).toEqual([
      "eval-gate-imports-no-renderer: src/eval/gate/uses-html.ts → src/eval/report/html/compare-page.ts",
      "eval-gate-imports-no-renderer: src/eval/gate/uses-render-index.ts → src/eval/report/render.ts",
      "eval-gate-imports-no-renderer: src/eval/gate/uses-render.ts → src/eval/report/render/shared.ts",
      "eval-must-not-import-graph: src/eval/sweep/graph.ts → src/graph/build.ts",
      "eval-must-not-import-nodes: src/eval/sweep/event-from-nodes.ts → src/nodes/retrieve.ts",
      "eval-must-not-import-research: src/eval/ir/research.ts → src/research/tune.ts",
      "eval-must-not-import-retrieval: src/eval/report/types-from-retrieval.ts → src/retrieval/types.ts",
      "eval-must-not-import-the-card-loader: src/eval/measures/chunker.ts → src/kb/chunk.ts",
    ]);
  }, 60_000);
});
