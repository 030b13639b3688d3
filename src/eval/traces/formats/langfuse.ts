/** Langfuse trace and observation exports (`{"id", "timestamp", "observations", …}` / `{"id", "traceId", "type", "startTime", …}`), read by ../langfuse.ts. */
import type { TraceFormatModule } from "./format.js";

/** A Langfuse trace (with its observations) or a Langfuse observation, as the Langfuse API returns them. */
export function isLangfuseRecord(o: Record<string, unknown>): boolean {
  return (
    (typeof o.id === "string" && "timestamp" in o && ("observations" in o || "htmlPath" in o)) ||
    (typeof o.traceId === "string" && typeof o.type === "string" && "startTime" in o)
  );
}

export const langfuseFormat = {
  name: "langfuse",
  label: "Langfuse",
  expected:
    'a Langfuse trace or observation ({"id", "timestamp", "observations", …} / {"id", "traceId", "type", "startTime", …})',
  one: "a Langfuse trace or observation",
  helpName: "Langfuse exports",
  helpSource: "Langfuse traces (trace.get() output)",
  report: { label: "Langfuse", recordsName: "traces and observations" },
  writeBack: { langfuse: "Langfuse trace exports" },
  casesImport: { kind: "turns" },
  detect: isLangfuseRecord,
  async open() {
    const { LangfuseReader } = await import("../langfuse.js");
    const reader = new LangfuseReader();
    return {
      add: (r) => reader.add(r),
      finish: () => Promise.resolve({ turns: reader.turns(), records: reader.runCount, unattached: reader.unattached }),
    };
  },
} as const satisfies TraceFormatModule<"langfuse">;
