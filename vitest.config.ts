import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The last line of a run is `N passed, N failed`, which CI reads.
    reporters: ["default", "./test/helpers/summary-reporter.ts"],
    // Integration tests start real Chroma servers; keep parallelism to the machine's 2 cores.
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    env: { RETRACE_LOG: "warn", NO_COLOR: "1" },
  },
});
