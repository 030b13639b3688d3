/**
 * A large report written piece by piece (src/eval/report/render/json.ts
 * `reportJSONPieces`, src/redact.ts `redactSecretPieces`, src/output-set.ts):
 * the pieces join to exactly `reportToJSON`, each piece after the first
 * starts with `,\n`, redacting piece by piece gives the bytes redacting the
 * whole text gives — a secret straddling a cut included — and a file written
 * from pieces holds the bytes the whole-text path writes.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { outputBytes } from "../src/atomic.js";
import { reportJSONPieces, reportToJSON } from "../src/eval/report/render/json.js";
import type { Report } from "../src/eval/report/types.js";
import { writeOutputs } from "../src/output-set.js";
import { redactSecretPieces, redactSecrets } from "../src/redact.js";

const SECRET = "sk-live-0123456789abcdef";

/** A report-shaped object big enough for several pieces, with secrets in its turns. */
function bigReport(turns: number): Report {
  const list = Array.from({ length: turns }, (_, i) => ({
    id: `t-${i}`,
    query: `question ${i} ${"x".repeat(400)}`,
    error: i % 97 === 0 ? `401 from http://user:${SECRET}@host/v1 Authorization: Bearer ${SECRET}` : undefined,
    docs: [`doc-${i}`, undefined, { text: `Basic ${Buffer.from(`u:${SECRET}`).toString("base64")}` }],
    nested: { deep: [[i], { k: "line\nbreak" }], empty: [], none: {} },
  }));
  return {
    version: 3,
    run: { name: "r", at: "2026-12-03", skip: undefined },
    empty: [],
    turns: list,
    summary: { n: turns, url: `https://a:${SECRET}@x` },
  } as unknown as Report;
}

describe("reportJSONPieces", () => {
  it("joins to reportToJSON, in several pieces each after the first starting with ',\\n'", () => {
    const report = bigReport(6000);
    const pieces = [...reportJSONPieces(report)];
    expect(pieces.length).toBeGreaterThan(2);
    for (const p of pieces.slice(1)) expect(p.startsWith(",\n")).toBe(true);
    expect(pieces.join("")).toBe(reportToJSON(report));
  });

  it("renders small and empty objects as JSON.stringify does", () => {
    for (const r of [{}, { a: [] }, { a: undefined }, { a: [undefined, 1] }, { a: { b: [1, [2]] }, c: "d" }])
      expect([...reportJSONPieces(r as unknown as Report)].join("")).toBe(`${JSON.stringify(r, null, 2)}\n`);
  });
});

describe("redactSecretPieces", () => {
  const env = { RETRACE_TEST_API_KEY: SECRET };

  it("gives redactSecrets of the whole text for a report's pieces", () => {
    const pieces = [...reportJSONPieces(bigReport(6000))];
    const whole = pieces.join("");
    const out = [...redactSecretPieces(pieces, env)].join("");
    expect(out).toBe(redactSecrets(whole, env));
    expect(out).not.toContain(SECRET);
  });

  it("catches a known secret with a comma that straddles a cut (redacted whole)", () => {
    const straddling = "tok-1234567,\n    more-secret";
    const pieces = [`{"a": "tok-1234567`, `,\n    more-secret"}`];
    const out = [...redactSecretPieces(pieces, { RETRACE_TEST_TOKEN: straddling })].join("");
    expect(out).toBe(`{"a": "***"}`);
    expect(out).toBe(redactSecrets(pieces.join(""), { RETRACE_TEST_TOKEN: straddling }));
  });

  it("redacts a shape ending right at a cut as the whole text does", () => {
    const pieces = [`"Authorization: Bearer abcdefgh123"`, `,\n  "x-api-key": "k3y-value"`, `,\n  "basic dTpw"`];
    const out = [...redactSecretPieces(pieces, {})].join("");
    expect(out).toBe(redactSecrets(pieces.join(""), {}));
    expect(out).not.toContain("abcdefgh123");
    expect(out).not.toContain("k3y-value");
  });
});

describe("an output in pieces", () => {
  let dir: string | undefined;
  afterEach(async () => {
    delete process.env.RETRACE_TEST_API_KEY;
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it("writes the bytes of the whole-text path, secrets redacted", async () => {
    process.env.RETRACE_TEST_API_KEY = SECRET;
    dir = await mkdtemp(path.join(tmpdir(), "retrace-pieces-"));
    const report = bigReport(6000);
    const file = path.join(dir, "report.json");
    await writeOutputs([{ option: "--out json:", path: file, data: { pieces: () => reportJSONPieces(report) } }]);
    const written = await readFile(file);
    expect(written.equals(outputBytes(reportToJSON(report)))).toBe(true);
    expect(written.includes(SECRET)).toBe(false);
    expect(outputBytes({ pieces: () => reportJSONPieces(report) }).equals(written)).toBe(true);
  });
});
