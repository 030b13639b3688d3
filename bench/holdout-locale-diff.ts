/**
 * `npx tsx bench/holdout-locale-diff.ts OLD.json NEW.json`: the shipped KB's hold-out nDCG@k per locale, new − old,
 * with a paired case-level percentile bootstrap (20,000 resamples, seed 42) of the difference of case means.
 * Both files are `retrace eval --store memory --report-json FILE` reports of the same cases. Written apart from
 * retrace's own statistics (src/eval/stats/) on purpose: it is the independent check behind issue 37's "keep what
 * holds" figures in docs/fusion-and-tuning.md.
 */
import { readFileSync } from "node:fs";

interface Turn {
  caseId: string;
  locale: string;
  part?: string;
  results: { key: string; score: number }[];
}

function caseMeans(file: string, locale: string): Map<string, number> {
  const report = JSON.parse(readFileSync(file, "utf8")) as { turns: Turn[] };
  const sums = new Map<string, { sum: number; n: number }>();
  for (const t of report.turns) {
    if (t.part !== "holdout" || t.locale !== locale) continue;
    const r = t.results.find((x) => x.key === "retrieval_ndcg_at_k");
    if (!r) continue;
    const s = sums.get(t.caseId) ?? { sum: 0, n: 0 };
    s.sum += r.score;
    s.n += 1;
    sums.set(t.caseId, s);
  }
  return new Map([...sums].map(([id, s]) => [id, s.sum / s.n]));
}

let state = 42;
function uniform(): number {
  state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
  return state / 4294967296;
}

const [oldFile, newFile] = process.argv.slice(2);
if (!oldFile || !newFile) {
  process.stderr.write("usage: npx tsx bench/holdout-locale-diff.ts OLD.json NEW.json\n");
  process.exit(2);
}
process.stdout.write(
  "| locale | cases | old | new | new − old | 95% interval | cases that moved |\n|---|---:|---:|---:|---:|---|---:|\n",
);
for (const locale of ["en", "es-419", "pt-BR"]) {
  const a = caseMeans(oldFile, locale);
  const b = caseMeans(newFile, locale);
  const ids = [...a.keys()].sort();
  const missing = ids.filter((id) => !b.has(id));
  if (missing.length > 0 || b.size !== a.size) throw new Error(`${locale}: the two reports hold different cases`);
  const d = ids.map((id) => b.get(id)! - a.get(id)!);
  const mean = (xs: number[]): number => xs.reduce((s, x) => s + x, 0) / xs.length;
  const samples: number[] = [];
  for (let i = 0; i < 20000; i++) {
    let s = 0;
    for (let j = 0; j < d.length; j++) s += d[Math.floor(uniform() * d.length)]!;
    samples.push(s / d.length);
  }
  samples.sort((x, y) => x - y);
  const lo = samples[Math.floor(0.025 * samples.length)]!;
  const hi = samples[Math.floor(0.975 * samples.length)]!;
  const f = (x: number): string => (x >= 0 ? "+" : "") + x.toFixed(4);
  process.stdout.write(
    `| ${locale} | ${ids.length} | ${mean([...a.values()]).toFixed(4)} | ${mean([...b.values()]).toFixed(4)} | ${f(mean(d))} | [${f(lo)}, ${f(hi)}] | ${d.filter((x) => Math.abs(x) > 1e-12).length} |\n`,
  );
}
