/**
 * src/module-worker.ts `moduleWorker` gives the worker the options it is
 * passed, whether it runs a compiled `.js` module or a `.ts` one through tsx:
 * the trace reader's second thread relies on it for its young generation
 * (src/eval/traces/read.ts `PART_YOUNG_MB`; docs/recorded-traces.md, "Scale").
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { moduleWorker } from "../src/module-worker.js";
import { PART_YOUNG_MB } from "../src/eval/traces/read.js";

const dir = mkdtempSync(path.join(tmpdir(), "retrace-module-worker-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const BODY = `import { parentPort, resourceLimits, workerData } from "node:worker_threads";
parentPort.postMessage({ young: resourceLimits.maxYoungGenerationSizeMb, data: workerData });
`;

async function limitsOf(file: string, young: number): Promise<unknown> {
  const w = moduleWorker(pathToFileURL(file), { n: 7 }, { resourceLimits: { maxYoungGenerationSizeMb: young } });
  try {
    return await new Promise((resolve, reject) => {
      w.once("message", resolve);
      w.once("error", reject);
    });
  } finally {
    await w.terminate();
  }
}

describe("moduleWorker", () => {
  it("passes its resource limits and data to a compiled module's worker and to a TypeScript module's", async () => {
    const js = path.join(dir, "limits.mjs");
    writeFileSync(js, BODY);
    const ts = path.join(dir, "limits.ts");
    writeFileSync(ts, BODY);
    writeFileSync(path.join(dir, "package.json"), '{ "type": "module" }');
    expect(await limitsOf(js, PART_YOUNG_MB)).toEqual({ young: PART_YOUNG_MB, data: { n: 7 } });
    expect(await limitsOf(ts, 64)).toEqual({ young: 64, data: { n: 7 } });
  });
});
