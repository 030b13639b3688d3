/**
 * Import rules of docs/architecture.md §1: no circular imports; each layer
 * folder imports only the layers LAYERS lists for it (errors.ts and log.ts
 * from anywhere). Two stacks meet in app/: the agent (graph → nodes →
 * retrieval) and the harness (eval), which knows no agent: it imports neither
 * graph/, nodes/, retrieval/ nor research/, type imports included, and none of
 * the card loader (kb/cards.ts, kb/chunk.ts, kb/load.ts); what both sides
 * share (the retrieval trace and ranking types, the trace event, the card-id
 * and embedder-identity rules) is contract/, below both. research/ (tune,
 * BEIR, synthetic families: studies of the agent's retriever with the
 * harness's measures) sits above both. Only app/ and cli/ import the
 * composition root (src/system.ts); nothing under retrieval/, contract/ or kb/
 * imports LangGraph or LangChain; only the composition root, app/, the CLI and
 * the retrieval layer itself touch the Chroma modules (chroma-server.ts and
 * the chroma-process.ts / chroma-client.ts it re-exports); the
 * `retrace-eval/metrics` and `retrace-eval/retrieval` entries never reach
 * LangChain, even indirectly.
 */
const LAYERS = {
  kb: [],
  contract: ["kb"],
  retrieval: ["contract", "kb"],
  nodes: ["retrieval", "contract", "kb"],
  graph: ["nodes", "retrieval", "contract", "kb"],
  eval: ["contract", "kb"],
  research: ["eval", "retrieval", "contract", "kb"],
  app: ["research", "eval", "graph", "nodes", "retrieval", "contract", "kb"],
  cli: ["app", "research", "eval", "graph", "nodes", "retrieval", "contract", "kb"],
};
const layerRules = Object.entries(LAYERS).flatMap(([layer, allowed]) =>
  Object.keys(LAYERS)
    .filter((other) => other !== layer && !allowed.includes(other))
    .map((other) => ({
      name: `${layer}-must-not-import-${other}`,
      comment: `src/${layer} imports only src/{${allowed.join(",")}} among the layers (docs/architecture.md §1)`,
      severity: "error",
      from: { path: `^src/${layer}/` },
      to: { path: `^src/${other}/` },
    })),
);

/**
 * src/eval/ is split by job (docs/architecture.md §1.1). Each entry: a folder
 * and the eval folders it may NOT import. measures (metric functions and
 * their registry and chance levels, evaluators, judges) and stats
 * (bootstrap, Holm) know numbers, not reports; report (the Report schema, aggregation, renderers,
 * HTML) knows both; sweep (running graphs turn by turn) produces report
 * lines; gate (baseline, gate, compare, shards) and ir (trec_eval scoring and
 * TREC export) read reports. Nothing in eval/ imports the composition root.
 */
const EVAL_JOBS = {
  measures: ["stats", "report", "sweep", "gate", "ir", "traces"],
  stats: ["measures", "report", "sweep", "gate", "ir", "traces"],
  report: ["sweep", "gate", "ir", "traces"],
  sweep: ["gate", "ir"],
  gate: ["sweep", "ir", "traces"],
  ir: ["sweep", "gate", "traces"],
  label: ["sweep", "gate", "ir", "traces"],
  // The trace readers are plain data in, recorded turns out: sweep/recorded.ts scores them (docs/recorded-traces.md).
  traces: ["measures", "stats", "report", "sweep", "gate", "ir", "label"],
};
const evalJobRules = Object.entries(EVAL_JOBS).map(([job, forbidden]) => ({
  name: `eval-${job}-must-not-import-${forbidden.join("-")}`,
  comment: `src/eval/${job}/ may not import src/eval/{${forbidden.join(",")}}/ (docs/architecture.md §1.1)`,
  severity: "error",
  from: { path: `^src/eval/${job}/` },
  to: { path: `^src/eval/(${forbidden.join("|")})/` },
}));

module.exports = {
  forbidden: [
    ...evalJobRules,
    {
      name: "eval-traces-reads-no-graph-nodes-retrieval-or-langchain",
      comment:
        "src/eval/traces/ reads recorded files only: nothing from src/graph, src/nodes, src/retrieval or LangChain (docs/architecture.md §1.1)",
      severity: "error",
      from: { path: "^src/eval/traces/" },
      to: { path: "^(src/(graph|nodes|retrieval)/|node_modules/@langchain/)" },
    },
    {
      name: "eval-gate-imports-no-renderer",
      comment:
        "the gate (baseline, gate, compare, shards) computes and renderers only format: src/eval/gate/ imports nothing under src/eval/report/render or src/eval/report/html (docs/architecture.md §1.1; a comparison is src/eval/report/comparison.ts, built by gate/compare.ts)",
      severity: "error",
      from: { path: "^src/eval/gate/" },
      to: { path: "^src/eval/report/(render|html)(/|\\.ts$)" },
    },
    {
      name: "eval-files-live-in-a-job-folder",
      comment:
        "every module of src/eval/ belongs to one job folder (measures, stats, report, sweep, gate, ir, label, traces)",
      severity: "error",
      from: { path: "^src/eval/[^/]+\\.ts$" },
      to: {},
    },
    {
      name: "no-composition-root-below-app",
      comment:
        "the layers below app/ receive their dependencies; only app/ and cli/ (and the entries outside the layers) import src/system.ts and its retriever factory src/retriever-factory.ts",
      severity: "error",
      from: { path: "^src/(kb|contract|retrieval|nodes|graph|eval|research)/" },
      to: { path: "^src/(system|retriever-factory)\\.ts$" },
    },
    { name: "no-circular", severity: "error", from: {}, to: { circular: true } },
    ...layerRules,
    {
      name: "eval-must-not-import-the-card-loader",
      comment:
        "the harness reads cards as ids and judgments, never through the agent's card loader and chunker (docs/architecture.md §1)",
      severity: "error",
      from: { path: "^src/eval/" },
      to: { path: "^src/kb/(cards|chunk|load)\\.ts$" },
    },
    {
      name: "no-langgraph-below-nodes",
      comment: "retrieval/, contract/ and kb/ stay framework-free",
      severity: "error",
      from: { path: "^src/(kb|contract|retrieval)/" },
      to: { path: "node_modules/@langchain/" },
    },
    {
      name: "no-chroma-process-below-the-composition-root",
      comment:
        "graph/, nodes/, eval/ and research/ receive their dependencies and never start processes (docs/decisions/0006-one-composition-root-and-store-vocabulary.md)",
      severity: "error",
      from: { path: "^src/(graph|nodes|eval|research)/" },
      to: { path: "^src/retrieval/chroma-(server|process|client)\\.ts$" },
    },
    {
      name: "framework-free-subpath-entries",
      comment: "retrace-eval/metrics and retrace-eval/retrieval import no LangChain, directly or through other modules",
      severity: "error",
      from: { path: "^src/(metrics|retrieval)\\.ts$" },
      to: { path: "node_modules/@langchain/", reachable: true },
    },
    {
      name: "no-test-code-in-src",
      severity: "error",
      from: { path: "^src/" },
      to: { path: "^(test|bench)/" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsConfig: { fileName: "tsconfig.json" },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default"],
      extensions: [".ts", ".js", ".mjs"],
    },
  },
};
