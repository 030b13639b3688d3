/** OTLP/JSON trace exports (OpenInference and OTel GenAI spans): `{"resourceSpans": …}` records, read by ../otlp.ts. */
import type { TraceFormatModule } from "./format.js";

export const otlpFormat = {
  name: "otlp",
  label: "OTLP/JSON",
  expected: 'an OTLP/JSON export ({"resourceSpans": …})',
  one: "an OTLP/JSON export",
  helpName: "OTLP spans",
  helpSource: "an OTLP/JSON export (OpenInference / OTel GenAI / Langfuse spans)",
  report: { label: "OTLP/JSON", recordsName: "spans" },
  // Phoenix annotates OpenTelemetry spans; Langfuse keeps OTel's trace and span ids when it ingests them.
  writeBack: { phoenix: "OTLP/JSON traces", langfuse: "OTLP/JSON spans" },
  casesImport: { kind: "turns" },
  detect: (o) => "resourceSpans" in o,
  async open() {
    const { OtlpReader } = await import("../otlp.js");
    const reader = new OtlpReader();
    return {
      add: (r) => reader.add(r),
      finish: async () => ({
        turns: await reader.turnsInSteps(),
        records: reader.spanCount,
        unattached: reader.unattached,
      }),
    };
  },
} as const satisfies TraceFormatModule<"otlp">;
