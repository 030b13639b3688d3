/**
 * Compute once, render many (issue 55, item 2): for one pair of runs,
 * `retrace compare`'s terminal text, its `--json`, its compare page
 * (`--out html:`) and its pull-request comment (`--out pr-comment:`) show the
 * same deltas, intervals, verdicts, flips and moved turns, in the same order.
 *
 * The pair (fixture rows, k = 3; B changes three turns of A):
 * - g2#1 gold [c]: A [d,e,f] miss → B [c,e,f] hit: a miss→hit flip.
 * - g1#1 gold [b]: A [b,e,f] → B [e,f,b]: hit held, recall 1 → 1,
 *   nDCG 1 → 1/log2(4) = 0.5: Δ nDCG −0.5, moved (a drop).
 * - g1#0 gold [a,b]: A [c,a,d] → B [a,b,c]: hit held, recall 0.5 → 1
 *   (+0.5), nDCG (1/log2 3)/(1 + 1/log2 3) = 0.387 → 1: Δ nDCG +0.613, moved (a gain).
 * One order for the moved turns, biggest drop first: g1#1 (−0.5), then g1#0
 * (+0.613), although g1#0 comes first in the dataset and moved more in
 * magnitude (the PR comment used to list it first).
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { fixtureReport, LOG2_3, ROWS } from "./report-fixture.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "retrace-one-comparison-"));
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

const signed = (x: number) => `${x >= 0 ? "+" : "−"}${Math.abs(x).toFixed(3)}`;
const ciText = (ci: [number, number] | null, unit: string) =>
  ci === null ? `(< 2 ${unit}s)` : `[${signed(ci[0])}, ${signed(ci[1])}]`;

interface Row {
  key: string;
  diff: number;
  ci95: [number, number] | null;
  pValue: number;
  unit: string;
  verdict: string;
  turns: string;
}

describe("one comparison, four renderings", () => {
  it("the terminal, --json, the compare page and the PR comment show the same deltas, intervals, verdicts, flips and moved turns in one order", async () => {
    const changed: Record<string, string[]> = {
      "g2#1": ["c", "e", "f"],
      "g1#1": ["e", "f", "b"],
      "g1#0": ["a", "b", "c"],
    };
    const a = path.join(dir, "a.json");
    const b = path.join(dir, "b.json");
    await writeFile(a, JSON.stringify(await fixtureReport()));
    await writeFile(
      b,
      JSON.stringify(
        await fixtureReport(
          {},
          ROWS.map((r) => {
            const ids = changed[`${r.caseId}#${r.turn}`];
            return ids === undefined ? r : { ...r, retrievedIds: ids };
          }),
        ),
      ),
    );
    const page = path.join(dir, "page.html");
    const comment = path.join(dir, "comment.md");
    const text = await runCli(["compare", a, b, "--out", `html:${page}`, "--out", `pr-comment:${comment}`]);
    expect(text.exitCode).toBe(0);
    const json = await runCli(["compare", a, b, "--json"]);
    expect(json.exitCode).toBe(0);
    const doc = JSON.parse(json.stdout) as {
      comparisons: Row[];
      flips: { turns: { id: string; direction: string }[] };
      moved: { threshold: number; turns: { id: string; recall: number; ndcg: number }[] };
    };

    // The comparison itself, checked against the arithmetic above.
    expect(doc.flips.turns.map((f) => [f.id, f.direction])).toEqual([["g2#1", "miss→hit"]]);
    expect(doc.moved.threshold).toBe(0.2);
    expect(doc.moved.turns.map((m) => m.id)).toEqual(["g1#1", "g1#0"]);
    expect(doc.moved.turns[0]!.ndcg).toBeCloseTo(-0.5, 12);
    expect(doc.moved.turns[1]!.ndcg).toBeCloseTo(1 - 1 / LOG2_3 / (1 + 1 / LOG2_3), 12);
    expect(doc.moved.turns[1]!.recall).toBeCloseTo(0.5, 12);
    const hit = doc.comparisons.find((r) => r.key === "retrieval_hit_at_k")!;
    expect(hit.diff).toBeCloseTo(0.25, 12);
    expect(hit.verdict).toBe("not significant");

    // The compare page embeds exactly the JSON's rows, flips and moved turns, in its order.
    const html = await readFile(page, "utf8");
    const m = /id="retrace-data"[^>]*>([^<]+)</.exec(html);
    const data = JSON.parse(gunzipSync(Buffer.from(m![1]!, "base64")).toString("utf8")) as {
      comparisons: Row[];
      flips: { id: string; direction: string }[];
      shifts: { id: string; recall: number; ndcg: number }[];
      shiftThreshold: number;
    };
    expect(data.comparisons).toEqual(doc.comparisons);
    expect(data.flips.map((f) => [f.id, f.direction])).toEqual(doc.flips.turns.map((f) => [f.id, f.direction]));
    expect(data.shifts.map((s) => [s.id, s.recall, s.ndcg])).toEqual(
      doc.moved.turns.map((t) => [t.id, t.recall, t.ndcg]),
    );
    expect(data.shiftThreshold).toBe(doc.moved.threshold);

    // The terminal and the PR comment: each row's delta, interval, p and verdict as the JSON has them.
    const md = await readFile(comment, "utf8");
    const terminalRows = text.stdout.split("\n");
    const commentRows = md.split("\n");
    for (const r of doc.comparisons) {
      const cells = [signed(r.diff), ciText(r.ci95, r.unit), r.verdict];
      const label = new RegExp(`^${r.key === "retrieval_hit_at_k" ? "hit@3" : "\\S"}`);
      const inTerminal = terminalRows.filter((l) => cells.every((c) => l.includes(c)) && label.test(l));
      expect(inTerminal.length, `terminal row of ${r.key}`).toBeGreaterThan(0);
      const inComment = commentRows.filter((l) => l.startsWith("| ") && cells.every((c) => l.includes(c)));
      expect(inComment.length, `PR comment row of ${r.key}`).toBeGreaterThan(0);
    }
    expect(terminalRows.some((l) => /^hit@3\s.*\+0\.250\s.*not significant$/.test(l))).toBe(true);

    // Flips and moved turns in the JSON's order, in both texts.
    const order = (lines: string[], ids: string[]) =>
      lines.flatMap((l) => ids.filter((id) => l.includes(id) && !l.includes("flips")).map((id) => id));
    const movedIds = doc.moved.turns.map((t) => t.id);
    const movedAt = (lines: string[], heading: RegExp) => {
      const start = lines.findIndex((l) => heading.test(l));
      expect(start).toBeGreaterThanOrEqual(0);
      const end = lines.findIndex((l, i) => i > start && l.trim() === "");
      return lines.slice(start + 1, end < 0 ? undefined : end);
    };
    expect(order(movedAt(terminalRows, /^turns that moved/), movedIds)).toEqual(movedIds);
    const commentMoved = commentRows.slice(commentRows.findIndex((l) => l.startsWith("### Turns that moved")));
    expect(
      order(
        commentMoved.filter((l) => l.startsWith("| `")),
        movedIds,
      ),
    ).toEqual(movedIds);
    for (const t of doc.moved.turns) {
      const line = commentMoved.find((l) => l.includes(t.id))!;
      expect(line).toContain(`${signed(t.recall)} | ${signed(t.ndcg)}`);
      expect(movedAt(terminalRows, /^turns that moved/).find((l) => l.includes(t.id))).toContain(
        `Δ recall ${signed(t.recall)}  Δ nDCG ${signed(t.ndcg)}`,
      );
    }
    expect(text.stdout).toMatch(/miss→hit:\n\s+g2#1/);
    expect(md).toMatch(/\*\*miss→hit\*\*\n\n- `g2#1`/);
  }, 150_000); // two CLI processes: slow on a loaded 2-core machine
});
