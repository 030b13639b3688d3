/**
 * Pieces of script the report page and the labelling page share, spliced
 * into their inline scripts (CLIENT_JS, LABEL_JS), so both build the DOM and
 * unpack their data alike.
 */

/** `el(tag, props, children)`: an element built with createElement/textContent only; `text` is text, `cls` the class, an `on…` property throws (no inline handlers). */
export const EL_JS = String.raw`  function el(tag, props, children) {
    var e = document.createElement(tag);
    if (props) for (var k in props) {
      if (!Object.prototype.hasOwnProperty.call(props, k)) continue;
      var v = props[k];
      if (v === undefined || v === null) continue;
      if (k === "text") e.textContent = String(v);
      else if (k === "cls") e.className = v;
      else if (k.indexOf("on") === 0) throw new Error("no inline handlers");
      else e.setAttribute(k, String(v));
    }
    if (children) for (var i = 0; i < children.length; i++) {
      var c = children[i];
      if (c === null || c === undefined || c === false) continue;
      e.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    }
    return e;
  }
`;

/**
 * The page scripts' one way to read their data: the gzip+base64 JSON in
 * `<script id="retrace-data">` (src/eval/report/html/page.ts `embedData`),
 * unpacked with the browser's DecompressionStream and decoded as strict
 * UTF-8.
 */
export const UNPACK_JS = String.raw`  function unpack() {
    var b64 = document.getElementById("retrace-data").textContent.replace(/\s+/g, "");
    var bin = atob(b64);
    var bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    var reader = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip")).getReader();
    var utf8 = new TextDecoder("utf-8", { fatal: true });
    var parts = [];
    function pump() {
      return reader.read().then(function (r) {
        if (r.done) { parts.push(utf8.decode()); return JSON.parse(parts.join("")); }
        parts.push(utf8.decode(r.value, { stream: true }));
        return pump();
      });
    }
    return pump();
  }
`;
