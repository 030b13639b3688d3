/**
 * The gate's scopes (./gate.ts; docs/gates-and-exit-codes.md): `all`, a kind
 * (`golden`, `adversarial`, `synthetic`), a part (`tune`, `holdout`) or a
 * locale of the run; which turns the gate reads (quarantine aside) and the
 * mean of a key over a scope. Pure.
 */
import { InvalidArgumentError } from "../../errors.js";
import { quarantinedTurns, type Quarantine } from "./quarantine.js";
import { turnKey } from "../stats/bootstrap.js";
import type { Report, TurnReport } from "../report/types.js";
import { withoutSynthetic } from "../report/parts.js";

/** Scopes that are not locales. */
export const FIXED_SCOPES = ["all", "golden", "adversarial", "synthetic", "tune", "holdout"] as const;

/** `{ all: 0.9 }`, `{ en: 0.95, adversarial: 0.8 }`: floor per scope. */
export type ScopedFloors = Readonly<Record<string, number>>;

/** The report's turns the gate reads: all of them but the quarantined ones. */
export function gatedTurns(report: Pick<Report, "turns">, quarantine: Quarantine | undefined): TurnReport[] {
  const q = quarantinedTurns(quarantine);
  return q.size === 0 ? [...report.turns] : report.turns.filter((t) => !q.has(turnKey(t.caseId, t.turn)));
}

/** The part (tune / holdout) a reported turn belongs to, when the report carries it. */
export function partOf(t: TurnReport): string | undefined {
  const p = (t as TurnReport & { part?: unknown }).part;
  return typeof p === "string" ? p : undefined;
}

/** Whether turn `t` belongs to `scope` (already validated). */
export function inScope(t: TurnReport, scope: string): boolean {
  if (scope === "all") return true;
  if (scope === "golden" || scope === "adversarial" || scope === "synthetic") return t.kind === scope;
  if (scope === "tune" || scope === "holdout") return partOf(t) === scope;
  return t.locale === scope;
}

/** Locales of the run's turns, in first-seen order. */
export function localesOf(report: Pick<Report, "turns">): string[] {
  const seen: string[] = [];
  for (const t of report.turns) if (!seen.includes(t.locale)) seen.push(t.locale);
  return seen;
}

/**
 * Throws InvalidArgumentError unless `scope` is `all`, `golden`,
 * `adversarial`, a locale of the run, or `tune`/`holdout` on a report whose
 * turns carry their part.
 */
export function checkScope(report: Pick<Report, "turns">, scope: string, flag: string): void {
  const locales = localesOf(report);
  if ((FIXED_SCOPES as readonly string[]).includes(scope)) {
    if ((scope === "tune" || scope === "holdout") && !report.turns.some((t) => partOf(t) !== undefined))
      throw new InvalidArgumentError(
        `${flag} scope "${scope}"`,
        "used on a report whose turns carry their tune/holdout part (a KB with eval/split.json)",
        "a report without part information",
      );
    return;
  }
  if (!locales.includes(scope))
    throw new InvalidArgumentError(`${flag} scope`, `one of ${[...FIXED_SCOPES, ...locales].join(", ")}`, scope);
}

/** Mean and n of `key` over the turns of `scope` that carry it; null mean when n = 0. */
export function scopeMean(
  turns: readonly TurnReport[],
  key: string,
  scope: string,
): { mean: number | null; n: number } {
  let sum = 0;
  let n = 0;
  // Scope all is the headline's turns: synthetic ones only when no real turn is present (src/eval/report/parts.ts).
  for (const t of scope === "all" ? withoutSynthetic(turns) : turns) {
    if (!inScope(t, scope)) continue;
    const r = t.results.find((x) => x.key === key);
    if (r === undefined) continue;
    sum += r.score;
    n++;
  }
  return { mean: n === 0 ? null : sum / n, n };
}

/** Mean and n of `key` over per-turn scores (`caseId#turn` → key → score); null mean when n = 0. */
export function perTurnMean(
  perTurn: Readonly<Record<string, Readonly<Record<string, number>>>>,
  key: string,
): { mean: number | null; n: number } {
  let sum = 0;
  let n = 0;
  for (const scores of Object.values(perTurn)) {
    const s = scores[key];
    if (s === undefined) continue;
    sum += s;
    n++;
  }
  return { mean: n === 0 ? null : sum / n, n };
}
