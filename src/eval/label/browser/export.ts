/** The labelling page's agreement figure and its export of the labelled cases (docs/labelling.md, "What Export writes"). Part of the page script (./label.ts). */
import { byId } from "../../report/html/browser/dom.js";
import { caseAt, DATA, originalTurns, own, ts, turnAt } from "./state.js";

export function agreement(): { n: number; kappa: number | null; observed: number } {
  const a: number[] = [],
    b: number[] = [];
  DATA.cases.forEach((c, ci) => {
    c.turns.forEach((t, ti) => {
      const s = ts(ci, ti);
      t.pool.forEach((p) => {
        const given = s.g[p.id];
        if (p.suggested !== undefined && own(s.g, p.id) && given !== undefined) {
          a.push(p.suggested);
          b.push(given);
        }
      });
    });
  });
  const n = a.length;
  if (n === 0) return { n: 0, kappa: null, observed: 0 };
  const cats: Record<string, [number, number]> = {};
  let agree = 0;
  for (let i = 0; i < n; i++) {
    const x = String(a[i]),
      y = String(b[i]);
    const cx = (cats[x] = cats[x] || [0, 0]);
    const cy = (cats[y] = cats[y] || [0, 0]);
    cx[0]++;
    cy[1]++;
    if (a[i] === b[i]) agree++;
  }
  let pe = 0;
  Object.keys(cats).forEach((k) => {
    const ck = cats[k] ?? [0, 0];
    pe += (ck[0] / n) * (ck[1] / n);
  });
  const po = agree / n;
  return { n, observed: po, kappa: pe === 1 ? null : (po - pe) / (1 - pe) };
}

// ------------------------------------------------------------ export: the cases file with the labelled turns' fields
export function exportedTurn(ci: number, ti: number): Record<string, unknown> {
  const orig = originalTurns(caseAt(ci))[ti] || {};
  const s = ts(ci, ti);
  if (!s.touched) return orig;
  const pool = turnAt(ci, ti).pool,
    order = pool.map((p) => p.id);
  Object.keys(s.g)
    .sort()
    .forEach((id) => {
      if (order.indexOf(id) < 0) order.push(id);
    });
  const out: Record<string, unknown> = {};
  Object.keys(orig).forEach((k) => {
    if (k !== "relevant" && k !== "judged" && k !== "suggested" && k !== "must_cite_one_of" && k !== "expect")
      out[k] = orig[k];
  });
  const rel: Record<string, number> = {},
    judged: string[] = [];
  let any = false;
  order.forEach((id) => {
    const grade = s.g[id];
    if (own(s.g, id) && grade !== undefined) {
      judged.push(id);
      if (grade > 0) {
        rel[id] = grade;
        any = true;
      }
    }
  });
  // Relevant cards but none citeable (and not a refusal): graded relevance only, scored for nDCG only (docs/labelling.md).
  if (s.c.length > 0 || s.r || !any) {
    const cite = order.filter((id) => s.c.indexOf(id) >= 0);
    s.c.forEach((id) => {
      if (cite.indexOf(id) < 0) cite.push(id);
    });
    out.must_cite_one_of = cite;
    out.expect = s.r ? "refuse" : "answer";
  }
  if (any) out.relevant = rel;
  if (judged.length > 0) out.judged = judged;
  if (DATA.judge !== null) {
    const sug: Record<string, number> = {};
    let has = false;
    pool.forEach((p) => {
      if (p.suggested !== undefined) {
        sug[p.id] = p.suggested;
        has = true;
      }
    });
    if (has) out.suggested = sug;
  }
  return out;
}
export function exportText(): string {
  return (
    DATA.cases
      .map((c, ci) => {
        const line: Record<string, unknown> = {};
        Object.keys(c.original).forEach((k) => {
          line[k] = c.original[k];
        });
        line.turns = c.turns.map((_, ti) => exportedTurn(ci, ti));
        return JSON.stringify(line);
      })
      .join("\n") + "\n"
  );
}
export function doExport(): void {
  const text = exportText();
  const a = byId("export-link");
  a.setAttribute("href", "data:application/x-ndjson;charset=utf-8," + encodeURIComponent(text));
  a.setAttribute("download", DATA.exportName);
  a.setAttribute("data-lines", String(DATA.cases.length));
  a.textContent = "download again";
  a.click();
}

// ------------------------------------------------------------ drawing
