/**
 * Import rules of DESIGN.md §2: no circular imports; imports flow one way,
 * cli → eval → graph → nodes → retrieval → kb (errors.ts and log.ts from
 * anywhere); nothing under retrieval/ or kb/ imports LangGraph or LangChain.
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
