/**
 * `retrace beir DIR --synthetic N` printed (src/app/beir-synthetic.ts;
 * docs/synthetic-cases.md): the family's nDCG@10 on the real judged queries
 * and on each term model's synthetic queries, and Kendall's τ-b between
 * each synthetic order and the real one with its bootstrap interval, then
 * what τ means. JSON with --json.
 */
import { runSyntheticBeir, type SyntheticBeirOutcome } from "../../app/beir-synthetic.js";
import type { BeirOptions } from "../../app/beir.js";
import { TAU_VALID_LEVEL } from "../../eval/measures/synthetic-reference.js";
import { out, outText } from "../io.js";
import { progressReporter } from "../progress.js";

/** The flags `--synthetic` adds to `retrace beir`. */
export interface SyntheticFlags {
  synthetic?: number;
  strategy?: string;
  noise?: number;
  allowSynthetic?: boolean;
  json?: boolean;
}

const f4 = (x: number) => x.toFixed(4);
const t2 = (x: number) => `${x >= 0 ? "+" : ""}${x.toFixed(2)}`;

/** What a τ says, in one line. */
export function tauMeaning(tau: number | null): string {
  if (tau === null) return "τ not computable (no real judgments to compare with)";
  if (tau >= TAU_VALID_LEVEL)
    return `τ ≥ ${TAU_VALID_LEVEL}: these synthetic queries ordered the family much as the real judgments did`;
  if (tau > 0)
    return `0 < τ < ${TAU_VALID_LEVEL}: weak agreement; not valid for comparing lexical and semantic retrieval`;
  return "τ ≤ 0: these synthetic queries order the family against (or regardless of) the real judgments; not valid for comparing lexical and semantic retrieval";
}

export function renderSynthetic(dir: string, r: SyntheticBeirOutcome): string {
  const lines: string[] = [];
  lines.push(
    `BEIR ${dir}: ${r.data.corpus.length} documents; ${r.judged ? `${r.real?.n ?? 0} judged queries scored` : "no queries/qrels (synthetic part only)"}; embedder ${r.embedder}; depth ${r.depth}`,
  );
  lines.push(
    "System family (docs/synthetic-cases.md#the-family): nDCG@10, real judged queries (graded gains) vs synthetic known-item queries (gain 1 for the source document)",
  );
  const head = ["#", "variant", ...(r.real !== null ? ["real"] : []), ...r.strategies.map((s) => s.strategy)];
  const rows = r.family.map((v, i) => [
    String(i + 1),
    v.name,
    ...(r.real !== null ? [f4(r.real.means[i] as number)] : []),
    ...r.strategies.map((s) => f4(s.means[i] as number)),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === 1 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0)))
      .join("  ")
      .trimEnd();
  lines.push(line(head), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line), "");
  for (const s of r.strategies) {
    const tau =
      s.tau === null ? "τ-b n/a" : `τ-b ${t2(s.tau)}${s.ci95 === null ? "" : ` [${t2(s.ci95[0])}, ${t2(s.ci95[1])}]`}`;
    lines.push(`${s.generator} ${s.version} (${s.queries} queries): ${tau} — ${tauMeaning(s.tau)}`);
  }
  lines.push(
    "",
    `τ-b: Kendall's rank correlation between the 12 variants' order on the synthetic queries and on the real judgments (+1 same order, 0 unrelated, −1 reversed). Interval: percentile bootstrap, ${r.samples} resamples (seed ${r.seed}) drawing the real and the synthetic queries independently.`,
  );
  return `${lines.join("\n")}\n`;
}

export async function syntheticCommand(dir: string, options: BeirOptions, o: SyntheticFlags): Promise<number> {
  const strategies = o.strategy
    ?.split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  const r = await runSyntheticBeir(
    dir,
    {
      ...options,
      synthetic: o.synthetic as number,
      ...(strategies !== undefined ? { strategies } : {}),
      ...(o.noise !== undefined ? { noise: o.noise } : {}),
    },
    { progress: progressReporter },
  );
  if (o.json)
    out(
      JSON.stringify(
        {
          version: 1,
          dataset: { dir, documents: r.data.corpus.length, judged: r.judged, queries: r.real?.n ?? 0 },
          embedder: r.embedder,
          depth: r.depth,
          seed: r.seed,
          bootstrap: { unit: "queries, real and synthetic resampled independently", samples: r.samples, seed: r.seed },
          family: r.family.map((v, i) => ({ name: v.name, real: r.real?.means[i] ?? null })),
          strategies: r.strategies.map((s) => ({
            strategy: s.strategy,
            generator: s.generator,
            version: s.version,
            queries: s.queries,
            means: s.means,
            tau: s.tau,
            ci95: s.ci95,
            meaning: tauMeaning(s.tau),
          })),
        },
        null,
        2,
      ),
    );
  else outText(renderSynthetic(dir, r));
  return 0;
}
