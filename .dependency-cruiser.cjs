/**
 * Import rules of docs/architecture.md §1: no circular imports; imports flow
 * one way, cli → eval → graph → nodes → retrieval → kb (errors.ts and log.ts
 * from anywhere); nothing under retrieval/ or kb/ imports LangGraph or
 * LangChain; only the composition root (src/system.ts), the CLI and the
 * retrieval layer itself touch the Chroma modules (chroma-server.ts and the
 * chroma-process.ts / chroma-client.ts it re-exports); the
 * `retrace-eval/metrics` and `retrace-eval/retrieval` entries never reach
 * LangChain, even indirectly.
 */
const layers = ["kb", "retrieval", "nodes", "graph", "eval", "cli"];
const forbiddenUpward = layers.flatMap((layer, i) =>
  layers.slice(i + 1).map((higher) => ({
    name: `${layer}-must-not-import-${higher}`,
    comment: `src/${layer} sits below src/${higher} (cli → eval → graph → nodes → retrieval → kb)`,
    severity: "error",
    from: { path: `^src/${layer}/` },
    to: { path: `^src/${higher}/` },
  })),
);

module.exports = {
  forbidden: [
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
