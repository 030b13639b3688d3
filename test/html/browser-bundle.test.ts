/**
 * The pages' inline scripts are the committed bundles of their typed browser
 * sources (scripts/build-browser.ts): stale bundles fail here, and each
 * shipped script is one classic script that can sit inside `<script>`.
 */
import vm from "node:vm";
import { describe, expect, it } from "vitest";
import { BUNDLES, checkBundles } from "../../scripts/build-browser.js";
import { CLIENT_JS } from "../../src/eval/report/html/client.js";
import { LABEL_JS } from "../../src/eval/label/client.js";

describe("browser bundles", () => {
  it("every generated module is the bundle of its source (run `npm run build:browser` when this fails)", async () => {
    const results = await checkBundles();
    expect(results.map((r) => r.bundle.out)).toEqual(BUNDLES.map((b) => b.out));
    expect(results.filter((r) => !r.current).map((r) => r.bundle.out)).toEqual([]);
  });

  it("bundling is deterministic", async () => {
    const [a, b] = [await checkBundles(), await checkBundles()];
    expect(a.map((r) => r.text)).toEqual(b.map((r) => r.text));
  });

  for (const [name, script] of [
    ["CLIENT_JS", CLIENT_JS],
    ["LABEL_JS", LABEL_JS],
  ] as const) {
    it(`${name} is a strict classic script with no module syntax and nothing that would close its <script> element`, () => {
      expect(script.startsWith('"use strict";')).toBe(true);
      expect(() => new vm.Script(script)).not.toThrow();
      expect(script).not.toMatch(/<\/script/i);
      expect(script).not.toMatch(/<!--/);
      expect(script).not.toMatch(/\binnerHTML\b|\bouterHTML\b|\beval\(/);
    });
  }
});
