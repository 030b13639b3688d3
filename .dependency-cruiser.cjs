/**
 * Import rules of docs/architecture.md §1: no circular imports; imports flow
 * one way, cli → app → eval → graph → nodes → retrieval → kb (errors.ts and
 * log.ts from anywhere); only app/ and cli/ import the composition root
 * (src/system.ts); nothing under retrieval/ or kb/ imports LangGraph or
 * LangChain; only the composition root, app/, the CLI and the retrieval
 * layer itself touch the Chroma modules (chroma-server.ts and the
 * chroma-process.ts / chroma-client.ts it re-exports); the
 * `retrace-eval/metrics` and `retrace-eval/retrieval` entries never reach
 * LangChain, even indirectly.
 */
const layers = ["kb", "retrieval", "nodes", "graph", "eval", "app", "cli"];
const forbiddenUpward = layers.flatMap((layer, i) =>
  layers.slice(i + 1).map((higher) => ({
    name: `${layer}-must-not-import-${higher}`,
    comment: `src/${layer} sits below src/${higher} (cli → app → eval → graph → nodes → retrieval → kb)`,
    severity: "error",
    from: { path: `^src/${layer}/` },
    to: { path: `^src/${higher}/` },
  })),
);

/**
 * src/eval/ is split by job (docs/architecture.md §1.1). Each entry: a folder
 * and the eval folders it may NOT import. measures (metric functions and
 * their registry and chance levels, evaluators, judges) and stats
 * (bootstrap, Holm) know numbers, not reports; report (the Report schema, aggregation, renderers,
 * HTML) knows both; sweep (running graphs turn by turn) produces report
 * lines; gate (baseline, gate, compare, shards) and ir (trec_eval scoring,
 * BEIR, tune) read reports. Nothing in eval/ imports the composition root.
 */
const EVAL_JOBS = {
  measures: ["stats", "report", "sweep", "gate", "ir"],
  stats: ["measures", "report", "sweep", "gate", "ir"],
  report: ["sweep", "gate", "ir"],
  sweep: ["gate", "ir"],
  gate: ["sweep", "ir"],
  ir: ["sweep", "gate"],
  label: ["sweep", "gate", "ir"],
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
      name: "eval-files-live-in-a-job-folder",
      comment: "every module of src/eval/ belongs to one job folder (measures, stats, report, sweep, gate, ir, label)",
      severity: "error",
      from: { path: "^src/eval/[^/]+\\.ts$" },
      to: {},
    },
    {
      name: "no-composition-root-below-app",
      comment: "the layers below app/ receive their dependencies; only app/ and cli/ (and the entries outside the layers) import src/system.ts",
      severity: "error",
      from: { path: "^src/(kb|retrieval|nodes|graph|eval)/" },
      to: { path: "^src/system\\.ts$" },
    },
    { name: "no-circular", severity: "error", from: {}, to: { circular: true } },
    ...forbiddenUpward,
    {
      name: "no-langgraph-below-nodes",
      comment: "retrieval/ and kb/ stay framework-free",
      severity: "error",
      from: { path: "^src/(kb|retrieval)/" },
      to: { path: "node_modules/@langchain/" },
    },
    {
      name: "no-chroma-process-below-the-composition-root",
      comment: "graph/, nodes/ and eval/ receive their dependencies and never start processes (docs/decisions/0006-one-composition-root-and-store-vocabulary.md)",
      severity: "error",
      from: { path: "^src/(graph|nodes|eval)/" },
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
    enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["import", "require", "node", "default"], extensions: [".ts", ".js", ".mjs"] },
  },
};
