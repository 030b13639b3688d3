/**
 * The page scripts' one way to read their data: the gzip+base64 JSON in
 * `<script id="retrace-data">` (src/eval/report/html/page.ts `embedData`),
 * unpacked with the browser's DecompressionStream and decoded as strict
 * UTF-8. Spliced into the report page's and the labelling page's inline
 * scripts (CLIENT_JS, LABEL_JS), so both pages unpack alike.
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
