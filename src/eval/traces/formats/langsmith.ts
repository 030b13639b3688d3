/** LangSmith run exports (`listRuns()` runs and `runs.query()` v2 runs), read by ../langsmith.ts. */
import type { TraceFormatModule } from "./format.js";
import { isLangfuseRecord } from "./langfuse.js";

export const langsmithFormat = {
  name: "langsmith",
  label: "LangSmith",
  expected: 'a LangSmith run ({"id", "run_type", "trace_id", …})',
  one: "a LangSmith run",
  helpName: "LangSmith runs",
  helpSource: "LangSmith runs (listRuns() output)",
  report: { label: "LangSmith runs", recordsName: "runs" },
  writeBack: { langsmith: "LangSmith run exports" },
  casesImport: {
    kind: "runs",
    conversation: "a LangSmith run (with inputs.messages)",
    linkOnly: "LangSmith child runs",
    localeField: "extra.metadata.locale",
    async open() {
      const { langsmithRunsImport } = await import("../langsmith-import.js");
      return langsmithRunsImport();
    },
  },
  // A Langfuse record is Langfuse's even when it also carries these fields.
  detect: (o) => ("run_type" in o || ("trace_id" in o && "id" in o)) && !isLangfuseRecord(o),
  async open() {
    const { LangSmithReader } = await import("../langsmith.js");
    const reader = new LangSmithReader();
    return {
      add: (r) => reader.add(r),
      finish: () => Promise.resolve({ turns: reader.turns(), records: reader.runCount, unattached: reader.unattached }),
    };
  },
} as const satisfies TraceFormatModule<"langsmith">;
