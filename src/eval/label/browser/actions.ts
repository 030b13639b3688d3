/** What the person does on the labelling page: grade, cite, refuse, step through the pool and the turns. Part of the page script (./label.ts). */
import { caseAt, DATA, go, own, pos, redraw, ts, turnAt } from "./state.js";

export function poolLen(): number {
  return turnAt(pos.c, pos.t).pool.length;
}
export function gradeTurn(g: number): void {
  const s = ts(pos.c, pos.t),
    pool = turnAt(pos.c, pos.t).pool;
  s.touched = true;
  const p = pool[pos.p];
  if (p !== undefined) {
    s.g[p.id] = g;
    if (pos.p < pool.length - 1) pos.p++;
  }
  redraw();
}
// x: every card of the turn not graded yet gets 0 (not relevant); grades already given stay.
export function restNotRelevant(): void {
  const s = ts(pos.c, pos.t),
    pool = turnAt(pos.c, pos.t).pool;
  s.touched = true;
  pool.forEach((p) => {
    if (!own(s.g, p.id)) s.g[p.id] = 0;
  });
  redraw();
}
export function accept(): void {
  const p = turnAt(pos.c, pos.t).pool[pos.p];
  if (p && p.suggested !== undefined) gradeTurn(p.suggested);
}
export function toggleCite(): void {
  const s = ts(pos.c, pos.t),
    p = turnAt(pos.c, pos.t).pool[pos.p];
  if (!p) return;
  s.touched = true;
  const i = s.c.indexOf(p.id);
  if (i >= 0) s.c.splice(i, 1);
  else s.c.push(p.id);
  redraw();
}
export function toggleRefuse(): void {
  const s = ts(pos.c, pos.t);
  s.touched = true;
  s.r = !s.r;
  redraw();
}
export function nextTurn(dir: number, last: boolean): void {
  let ci = pos.c,
    ti = pos.t + dir;
  if (ti >= caseAt(ci).turns.length) {
    ci++;
    ti = 0;
  }
  if (ti < 0) {
    ci--;
    if (ci >= 0) ti = caseAt(ci).turns.length - 1;
  }
  if (ci < 0 || ci >= DATA.cases.length) return;
  const len = turnAt(ci, ti).pool.length;
  go(ci, ti, last ? Math.max(0, len - 1) : 0);
}
export function step(dir: number): void {
  const p = pos.p + dir;
  if (p >= 0 && p < poolLen()) {
    pos.p = p;
    redraw();
    return;
  }
  nextTurn(dir, dir < 0);
}
