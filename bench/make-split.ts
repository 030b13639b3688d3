/**
 * One-off generator of the committed tune/holdout split (`kb/eval/split.json`,
 * format in src/kb/split.ts; protocol in docs/holdout.md). It is NOT run by
 * `npm run bench` (not a `*.bench.ts` file) nor at eval time: the split is
 * made once, committed, and only ever extended by hand (new cases → holdout).
 *
 *   npx tsx bench/make-split.ts [--kb kb] [--original 85] [--seed 20261130] [--force]
 *
 * - The first `--original` cases of the cases file (the set that existed, and
 *   that the answerer's rules had been fitted on, before the split) are split
 *   per stratum `locale/kind/category`: each stratum's ids are sorted, shuffled
 *   with mulberry32(seed) (Fisher–Yates), and the first round(n / 3) go to
 *   `holdout`, the rest to `tune`.
 * - Every later case (written fresh after the split, never used for tuning)
 *   goes to `holdout`.
 * Refuses to overwrite an existing split file without `--force`.
 */
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { parseArgs } from "node:util";
import { mulberry32 } from "../src/eval/stats/bootstrap.js";
import { loadKnowledgeBase } from "../src/kb/cards.js";
import { loadCases } from "../src/kb/cases.js";
import { defaultSplitFile, parseSplit } from "../src/kb/split.js";
import type { EvalCase } from "../src/kb/types.js";

/** Share of each stratum of the original cases put in `holdout`. */
export const HOLDOUT_SHARE = 1 / 3;

export function stratum(c: EvalCase): string {
  return `${c.locale}/${c.kind}/${c.category ?? "-"}`;
}

/** The split of `cases`: pure, deterministic for a seed. */
export function makeSplit(
  cases: readonly EvalCase[],
  original: number,
  seed: number,
): { tune: string[]; holdout: string[] } {
  const rand = mulberry32(seed);
  const strata = new Map<string, string[]>();
  for (const c of cases.slice(0, original)) {
    const arr = strata.get(stratum(c)) ?? [];
    arr.push(c.id);
    strata.set(stratum(c), arr);
  }
  const held = new Set<string>();
  for (const key of [...strata.keys()].sort()) {
    const ids = [...(strata.get(key) as string[])].sort();
    for (let i = ids.length - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1));
      [ids[i], ids[j]] = [ids[j] as string, ids[i] as string];
    }
    for (const id of ids.slice(0, Math.round(ids.length * HOLDOUT_SHARE))) held.add(id);
  }
  for (const c of cases.slice(original)) held.add(c.id);
  return {
    tune: cases.filter((c) => !held.has(c.id)).map((c) => c.id),
    holdout: cases.filter((c) => held.has(c.id)).map((c) => c.id),
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      kb: { type: "string", default: "kb" },
      original: { type: "string", default: "85" },
      seed: { type: "string", default: "20261130" },
      force: { type: "boolean", default: false },
    },
  });
  const kbDir = values.kb as string;
  const original = Number(values.original);
  const seed = Number(values.seed);
  const file = defaultSplitFile(kbDir);
  if (existsSync(file) && values.force !== true) {
    process.stderr.write(`${file} exists; the split is made once (use --force to remake it)\n`);
    process.exitCode = 2;
    return;
  }
  const kb = await loadKnowledgeBase(kbDir);
  const cases = await loadCases(path.join(kbDir, "eval", "cases.jsonl"), kb);
  const { tune, holdout } = makeSplit(cases, original, seed);
  const note =
    `Made once by bench/make-split.ts (--original ${original} --seed ${seed}): the first ${original} cases (the set the answerer's rules had been fitted on) ` +
    `split per stratum locale/kind/category, round(n/3) of each stratum to holdout after a mulberry32(${seed}) shuffle of its sorted ids; ` +
    `every later case was written fresh after the split and is in holdout. Never recomputed; see docs/holdout.md.`;
  const text = `${JSON.stringify({ version: 1, note, tune, holdout }, null, 2)}\n`;
  parseSplit(text, file, cases); // validates: every case exactly once
  await writeFile(file, text);
  process.stdout.write(`${file}: tune ${tune.length} cases, holdout ${holdout.length} cases\n`);
}

await main();
