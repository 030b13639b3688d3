/** The labelling page's case search (by id, message, context, pooled card). Part of the page script (./label.ts). */
import { byId } from "../../report/html/browser/dom.js";
import type { LabelCase } from "../pool.js";
import { DATA } from "./state.js";

export function matches(c: LabelCase, q: string): boolean {
  if (c.id.toLowerCase().indexOf(q) >= 0) return true;
  return c.turns.some(
    (t) =>
      t.user.toLowerCase().indexOf(q) >= 0 ||
      (t.context || []).some((m) => m.toLowerCase().indexOf(q) >= 0) ||
      t.pool.some((p) => p.title.toLowerCase().indexOf(q) >= 0 || p.id.toLowerCase().indexOf(q) >= 0),
  );
}
export function searchBox(): HTMLInputElement {
  return byId("search") as HTMLInputElement;
}
export function applySearch(): void {
  const q = searchBox().value.trim().toLowerCase();
  const buttons = document.querySelectorAll("nav.cases button");
  DATA.cases.forEach((c, ci) => {
    const b = buttons[ci];
    if (b) {
      if (q === "" || matches(c, q)) b.removeAttribute("hidden");
      else b.setAttribute("hidden", "");
    }
  });
}
