/**
 * The committed tune/holdout split of the eval cases (`<kb>/eval/split.json`).
 *
 * Anything fitted (answerer rules and thresholds, fusion weights, BM25
 * parameters) may only be chosen on the `tune` part; answer-side figures are
 * reported on the `holdout` part. The split is a committed file, never
 * recomputed at run time, so adding cases cannot silently move old ones
 * between parts.
 *
 * Format:
 * ```json
 * { "version": 1, "note": "how it was made", "tune": ["case-id", ...], "holdout": ["case-id", ...] }
 * ```
 * Every case of the dataset must be in exactly one part; an id that names no
 * case is an error (so a typo cannot shrink a part unnoticed).
 */
import path from "node:path";
import { readTextFileIfExists } from "./text.js";
import { DataValidationError, type DataIssue } from "../errors.js";
import { parseWithSchema } from "./schema-issues.js";
import { SPLIT_PARTS, SplitFileSchema } from "./schemas.js";
import type { EvalCase } from "./types.js";
import { parseJsonOrThrow } from "./json.js";

export { SPLIT_PARTS };
export type SplitPart = (typeof SPLIT_PARTS)[number];

export interface CaseSplit {
  file: string;
  /** Part of each case id. */
  partOf: Map<string, SplitPart>;
}

/** Where the split of a KB lives: `<kbDir>/eval/split.json`. */
export function defaultSplitFile(kbDir: string): string {
  return path.join(kbDir, "eval", "split.json");
}

/** Parses and checks a split file against the cases; `null` when the file does not exist. */
export async function loadSplit(file: string, cases: readonly EvalCase[]): Promise<CaseSplit | null> {
  // The one text loader (src/kb/text.ts): strict UTF-8, BOM removed, a regular file (exit 2 otherwise).
  const text = await readTextFileIfExists(file);
  return text === null ? null : parseSplit(text, file, cases);
}

/**
 * Parses a split file: its shape by SplitFileSchema (src/kb/schemas.ts), then
 * the cross-field rules against the cases: every id names a case, no case is
 * in two parts, every case is in one part.
 */
export function parseSplit(text: string, file: string, cases: readonly EvalCase[]): CaseSplit {
  const raw = parseJsonOrThrow(text, { file, expected: "a split file (tune, dev, test: lists of case ids)" }); // ./json.ts
  const parsed = parseWithSchema(SplitFileSchema, raw, { file });
  if (parsed.data === undefined) throw new DataValidationError(parsed.issues);
  const issues: DataIssue[] = [];
  const known = new Set(cases.map((c) => c.id));
  const partOf = new Map<string, SplitPart>();
  for (const part of SPLIT_PARTS) {
    parsed.data[part].forEach((id, i) => {
      if (!known.has(id)) issues.push({ file, field: `${part}[${i}]`, message: `unknown case id ${JSON.stringify(id)}` });
      else if (partOf.has(id)) issues.push({ file, field: `${part}[${i}]`, message: `case ${JSON.stringify(id)} is already in part "${partOf.get(id)}"` });
      else partOf.set(id, part);
    });
  }
  if (issues.length === 0)
    for (const c of cases) if (!partOf.has(c.id)) issues.push({ file, message: `case ${JSON.stringify(c.id)} (line ${c.line} of the cases file) is in no part; add it to "tune" or "holdout"` });
  if (issues.length > 0) throw new DataValidationError(issues);
  return { file, partOf };
}
