/**
 * The trace format registry (docs/architecture.md §9, "…a trace format"):
 * every format module under src/eval/traces/formats/ is registered once,
 * implements the interface, claims its own records and no other's, and is
 * named by the recipe.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import {
  detectFormat,
  TRACE_FORMAT_MODULES,
  TRACE_FORMATS,
  traceFormat,
} from "../../src/eval/traces/formats/registry.js";
import { recordFormat } from "../../src/eval/traces/read.js";
import { ROOT } from "../helpers/cli.js";

const DIR = path.join(ROOT, "src", "eval", "traces", "formats");
/** The format modules: every file of the folder but the interface and the registry. */
const moduleFiles = readdirSync(DIR)
  .filter((f) => f.endsWith(".ts") && f !== "format.ts" && f !== "registry.ts")
  .sort();

/** One record of each format, as the real exports write them (fields trimmed to what detection reads). */
const SAMPLES: Record<string, Record<string, unknown>> = {
  otlp: { resourceSpans: [{ resource: { attributes: [] }, scopeSpans: [] }] },
  langsmith: { id: "r1", run_type: "retriever", trace_id: "t1", inputs: {} },
  langfuse: { id: "t1", timestamp: "2026-01-01T00:00:00Z", observations: [] },
};

describe("the trace format registry", () => {
  it("registers every format module, once, each exporting the one format it declares", async () => {
    expect(moduleFiles).toEqual(["langfuse.ts", "langsmith.ts", "otlp.ts"]);
    const exported: unknown[] = [];
    for (const f of moduleFiles) {
      const m = (await import(pathToFileURL(path.join(DIR, f)).href)) as Record<string, unknown>;
      const formats = Object.values(m).filter((v) => typeof v === "object" && v !== null && "detect" in v);
      expect(formats, `${f} exports one format`).toHaveLength(1);
      exported.push(formats[0]);
    }
    for (const x of exported) expect(TRACE_FORMAT_MODULES, "registered in formats/registry.ts").toContain(x);
    expect(TRACE_FORMAT_MODULES).toHaveLength(exported.length);
  });

  it("names the formats --traces-format offers, in the registry's order, each once", () => {
    expect(TRACE_FORMATS).toEqual(["otlp", "langsmith", "langfuse"]);
    expect(new Set(TRACE_FORMATS).size).toBe(TRACE_FORMATS.length);
    for (const f of TRACE_FORMAT_MODULES) {
      expect(traceFormat(f.name)).toBe(f);
      expect(f.label.length, f.name).toBeGreaterThan(0);
      expect(f.expected, f.name).toMatch(/^an? /);
      expect(f.one, f.name).toMatch(/^an? /);
      expect(["turns", "runs"]).toContain(f.casesImport);
    }
  });

  it("each format claims its own records and no other's; a record of none is no format", () => {
    expect(Object.keys(SAMPLES).sort()).toEqual([...TRACE_FORMATS].sort());
    for (const [name, record] of Object.entries(SAMPLES)) {
      expect(
        TRACE_FORMAT_MODULES.filter((f) => f.detect(record)).map((f) => f.name),
        name,
      ).toEqual([name]);
      expect(detectFormat(record)).toBe(name);
      expect(recordFormat(record)).toBe(name);
    }
    // A Langfuse observation that also carries LangSmith's fields stays Langfuse's (detection as before the registry).
    const both = { id: "o1", traceId: "t1", type: "RETRIEVER", startTime: "x", trace_id: "t1", run_type: "retriever" };
    expect(detectFormat(both)).toBe("langfuse");
    for (const v of [null, [], "x", { id: "a" }]) expect(detectFormat(v)).toBeNull();
  });

  it("the architecture recipe names the registry, the interface and every format module", () => {
    const doc = readFileSync(path.join(ROOT, "docs", "architecture.md"), "utf8");
    const recipe = doc.slice(doc.indexOf("### …a trace format"), doc.indexOf("### …a CLI command"));
    expect(recipe.length).toBeGreaterThan(100);
    expect(recipe).toContain("one module plus one registry line");
    expect(recipe).toContain("src/eval/traces/formats/registry.ts");
    expect(recipe).toContain("src/eval/traces/formats/format.ts");
    for (const f of moduleFiles) expect(recipe).toContain(`src/eval/traces/formats/${f}`);
  });

  it("the format modules stay light: their readers are imported when a recording is opened", () => {
    for (const f of [...moduleFiles, "format.ts", "registry.ts"]) {
      const text = readFileSync(path.join(DIR, f), "utf8");
      const statics = [...text.matchAll(/^import (?!type )[^;]*? from "([^"]+)";/gms)].map((m) => m[1]);
      for (const spec of statics) expect(spec, `${f} imports ${spec} statically`).toMatch(/^\.\/[a-z-]+\.js$/);
    }
  });
});
