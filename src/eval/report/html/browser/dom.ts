/**
 * Browser code shared by retrace's pages (the report, compare and labelling
 * pages; docs/html-report.md): `el` and `svg` build the DOM with
 * createElement/textContent only (no innerHTML, no inline handlers), `unpack`
 * reads the page's data element, and `startPage` checks the browser, unpacks
 * the data and hands it to the page or says why it cannot. Bundled into each
 * page's one inline script by scripts/build-browser.ts; type-checked with DOM
 * types by tsconfig.browser.json.
 */

/** A property of `el`: `text` is the text, `cls` the class, anything else an attribute; null and undefined are skipped. */
export type Props = Record<string, string | number | boolean | null | undefined>;
/** A child of `el`: an element, text, or nothing (null, undefined, false are skipped). */
export type Child = Node | string | null | undefined | false;

const SVGNS = "http://www.w3.org/2000/svg";

/** `el(tag, props, children)`: an element built with createElement/textContent only; an `on…` property throws (no inline handlers). */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props?: Props | null,
  children?: readonly Child[] | null,
): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (props) {
    for (const k in props) {
      if (!Object.prototype.hasOwnProperty.call(props, k)) continue;
      const v = props[k];
      if (v === undefined || v === null) continue;
      if (k === "text") e.textContent = String(v);
      else if (k === "cls") e.className = String(v);
      else if (k.indexOf("on") === 0) throw new Error("no inline handlers");
      else e.setAttribute(k, String(v));
    }
  }
  if (children) {
    for (const c of children) {
      if (c === null || c === undefined || c === false) continue;
      e.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    }
  }
  return e;
}

/** An SVG element with attributes and, when given, text. */
export function svg(tag: string, attrs: Record<string, string | number>, text?: string | number): SVGElement {
  const e = document.createElementNS(SVGNS, tag);
  for (const k in attrs) if (Object.prototype.hasOwnProperty.call(attrs, k)) e.setAttribute(k, String(attrs[k]));
  if (text !== undefined) e.textContent = String(text);
  return e;
}

/** The element of `id`, which the page shell or the page script created (a missing one is a bug and throws). */
export function byId(id: string): HTMLElement {
  const e = document.getElementById(id);
  if (e === null) throw new Error(`no element #${id}`);
  return e;
}

/**
 * The page's one way to read its data: the gzip+base64 JSON in
 * `<script id="retrace-data">` (src/eval/report/html/page.ts `embedData`),
 * unpacked with the browser's DecompressionStream and decoded as strict
 * UTF-8.
 */
export function unpack(): Promise<unknown> {
  const b64 = (byId("retrace-data").textContent ?? "").replace(/\s+/g, "");
  const bin = atob(b64);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  const reader = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip")).getReader();
  const utf8 = new TextDecoder("utf-8", { fatal: true });
  const parts: string[] = [];
  function pump(): Promise<unknown> {
    return reader.read().then((r) => {
      if (r.done) {
        parts.push(utf8.decode());
        return JSON.parse(parts.join("")) as unknown;
      }
      parts.push(utf8.decode(r.value, { stream: true }));
      return pump();
    });
  }
  return pump();
}

/** Sets `#app`'s `data-state`; with a message, the page is replaced by it (an alert). */
export function setState(state: string, message?: string): void {
  const app = byId("app");
  if (message !== undefined) {
    app.textContent = "";
    app.appendChild(el("p", { cls: "fatal", role: "alert", text: message }));
  }
  app.setAttribute("data-state", state);
}

/** What a thrown value says: its message, else the value. */
export function errorText(e: unknown): string {
  const message = typeof e === "object" && e !== null ? (e as { message?: unknown }).message : undefined;
  return String(message ? message : e);
}

/**
 * Checks that the browser can unpack the data (else `tooOld` is the page),
 * unpacks it and calls `draw` with it, then marks the page ready; data that
 * cannot be unpacked replaces the page with `damaged(reason)`.
 */
export function startPage(tooOld: string, draw: (data: unknown) => void, damaged: (reason: string) => string): void {
  if (
    typeof DecompressionStream !== "function" ||
    typeof Blob !== "function" ||
    typeof TextDecoder !== "function" ||
    typeof Blob.prototype.stream !== "function"
  ) {
    setState("unsupported", tooOld);
    return;
  }
  let unpacked: Promise<unknown>;
  try {
    unpacked = unpack();
  } catch (e) {
    unpacked = Promise.reject(e);
  }
  unpacked.then(
    (data) => {
      draw(data);
      setState("ready");
    },
    (e: unknown) => {
      setState("error", damaged(errorText(e)));
    },
  );
}
