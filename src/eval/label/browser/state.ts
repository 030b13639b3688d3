/**
 * The labelling page's state (docs/labelling.md): the page data, the person's
 * grades kept in localStorage under the pool hash, and where the focus is.
 * Part of the page script (./label.ts).
 */
import type { LabelCase, LabelPageData } from "../pool.js";

/** A turn's entry: g (card id -> grade given by the person), c (citeable card ids), r (refuse), touched. */
export interface TurnState {
  g: Record<string, number>;
  c: string[];
  r: boolean;
  touched: boolean;
}
export interface Position {
  c: number;
  t: number;
  p: number;
}
/** A turn of the case's original line, as far as the page reads it. */
export interface OriginalTurn {
  judged?: string[];
  relevant?: Record<string, number>;
  must_cite_one_of?: string[];
  expect?: string;
  [field: string]: unknown;
}

export let DATA: LabelPageData;
export let STORE_KEY: string;
export let STATE: { v: 1; turns: Record<string, TurnState> };
export let storageOk = true;
export let pos: Position = { c: 0, t: 0, p: 0 };
export const GRADE_TEXT = ["not relevant", "relevant", "highly relevant", "perfectly relevant"];

export function own(o: object, k: string): boolean {
  return Object.prototype.hasOwnProperty.call(o, k);
}
export function caseAt(ci: number): LabelCase {
  const c = DATA.cases[ci];
  if (c === undefined) throw new Error("no case " + ci);
  return c;
}
export function turnAt(ci: number, ti: number): LabelCase["turns"][number] {
  const t = caseAt(ci).turns[ti];
  if (t === undefined) throw new Error("no turn " + ci + "#" + ti);
  return t;
}
export function originalTurns(c: LabelCase): OriginalTurn[] {
  const turns = c.original.turns;
  return Array.isArray(turns) ? (turns as OriginalTurn[]) : [];
}
export function turnKey(ci: number, ti: number): string {
  return caseAt(ci).id + "#" + ti;
}

// ------------------------------------------------------------ state: the person's work, kept in localStorage
export function initialTurn(turn: OriginalTurn): TurnState {
  const s: TurnState = { g: {}, c: [], r: false, touched: false };
  if (turn.judged)
    turn.judged.forEach((id) => {
      s.g[id] = 0;
      s.touched = true;
    });
  const relevant = turn.relevant;
  if (relevant)
    Object.keys(relevant).forEach((id) => {
      s.g[id] = relevant[id] ?? 0;
      s.touched = true;
    });
  if (turn.must_cite_one_of) {
    s.c = turn.must_cite_one_of.slice();
    s.touched = true;
  }
  if (turn.expect === "refuse") s.r = true;
  return s;
}
export interface Saved {
  v?: unknown;
  turns?: Record<string, TurnState>;
  pos?: Position;
}
export function load(): void {
  let saved: Saved | null = null;
  try {
    const raw = window.localStorage.getItem(STORE_KEY);
    if (raw) saved = JSON.parse(raw) as Saved;
  } catch {
    storageOk = false;
  }
  STATE = { v: 1, turns: {} };
  DATA.cases.forEach((c, ci) => {
    const orig = originalTurns(c);
    c.turns.forEach((_t, ti) => {
      STATE.turns[turnKey(ci, ti)] = initialTurn(orig[ti] || {});
    });
  });
  if (saved && saved.v === 1 && saved.turns) {
    const turns = saved.turns;
    Object.keys(turns).forEach((k) => {
      const t = turns[k];
      if (own(STATE.turns, k) && t !== undefined) STATE.turns[k] = t;
    });
    const p = saved.pos;
    if (p && DATA.cases[p.c] && DATA.cases[p.c]?.turns[p.t]) pos = p;
  }
}
export function save(): void {
  if (!storageOk) return;
  try {
    window.localStorage.setItem(STORE_KEY, JSON.stringify({ v: 1, turns: STATE.turns, pos }));
  } catch {
    storageOk = false;
  }
}
export function ts(ci: number, ti: number): TurnState {
  const s = STATE.turns[turnKey(ci, ti)];
  if (s === undefined) throw new Error("no state for " + turnKey(ci, ti));
  return s;
}

// ------------------------------------------------------------ progress and agreement
export function turnDone(ci: number, ti: number): boolean {
  const s = ts(ci, ti),
    pool = turnAt(ci, ti).pool;
  if (!s.touched) return false;
  for (const p of pool) if (!own(s.g, p.id)) return false;
  return true;
}
// Graded relevant, nothing citeable, not a refusal: the export carries relevance only, scored for nDCG only (docs/labelling.md).
export function relevanceOnly(ci: number, ti: number): boolean {
  const s = ts(ci, ti);
  if (s.c.length > 0 || s.r) return false;
  return Object.keys(s.g).some((id) => (s.g[id] ?? 0) > 0);
}
export function caseProgress(ci: number): {
  done: number;
  turns: number;
  judged: number;
  cards: number;
  ndcgOnly: number;
} {
  const c = caseAt(ci);
  let done = 0,
    cards = 0,
    judged = 0,
    ndcgOnly = 0;
  c.turns.forEach((t, ti) => {
    if (turnDone(ci, ti)) done++;
    if (relevanceOnly(ci, ti)) ndcgOnly++;
    cards += t.pool.length;
    t.pool.forEach((p) => {
      if (own(ts(ci, ti).g, p.id)) judged++;
    });
  });
  return { done, turns: c.turns.length, judged, cards, ndcgOnly };
}
// Cohen's kappa, unweighted (src/eval/stats/kappa.ts): the judge's suggestion against the person's grade, over cards carrying both.

export function go(ci: number, ti: number, pi: number): void {
  pos = { c: ci, t: ti, p: pi };
  redraw();
}

/** The page's data and the storage key it is kept under (the pool hash). */
export function setData(data: LabelPageData): void {
  DATA = data;
  STORE_KEY = "retrace-label:" + DATA.poolHash;
}

/** What redraws the page (./draw.ts `drawPage`, set by ./label.ts), so that state changes redraw without importing the drawing. */
let drawHook: () => void = () => undefined;
export function onRedraw(draw: () => void): void {
  drawHook = draw;
}
export function redraw(): void {
  drawHook();
}
