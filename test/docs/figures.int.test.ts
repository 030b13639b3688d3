/**
 * The figures README.md, docs/holdout.md and docs/gates-and-exit-codes.md
 * quote about the shipped KB are what it produces now: one real run of
 * `retrace start --report-json` (a local Chroma it starts itself, the default
 * embedder on a fresh clone), then scripts/doc-figures.ts in check mode —
 * the same code as `npm run docs:figures -- --check`. A stale figure fails,
 * naming the file and the marker; `npm run docs:figures` regenerates them.
 */
import { cp, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collectFacts, DOC_FILES, figuresOf, updateDocs, type Facts, type Figure } from "../../scripts/doc-figures.js";
import { chromaPids, tempDir } from "../helpers/chroma.js";
import { ROOT } from "../helpers/cli.js";

let dir: string;
let cleanup: () => Promise<void>;
let facts: Facts;
let figures: Figure[];

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir("doc-figures"));
  let stderr = "";
  try {
    facts = await collectFacts({ workDir: path.join(dir, "run"), stderr: (d) => (stderr += d) });
  } catch (e) {
    throw new Error(`${(e as Error).message}\n${stderr}`, { cause: e });
  }
  figures = figuresOf(facts);
}, 900_000); // two runs of the shipped KB: the default and the BGE model (fp32) when the model is fetched

afterAll(async () => {
  expect(chromaPids(dir)).toEqual([]); // the server the run started is gone
  await cleanup();
});

/** A copy of the three documents under a temporary root, with the run's figures (whatever the committed ones are), for tests that edit them. */
async function copyDocs(name: string): Promise<string> {
  const root = path.join(dir, name);
  for (const file of DOC_FILES) await cp(path.join(ROOT, file), path.join(root, file));
  const { errors } = await updateDocs(root, figures, { write: true });
  expect(errors).toEqual([]);
  return root;
}

describe("figures quoted in the docs", () => {
  it("every marked figure equals what the shipped KB produces now", async () => {
    const { stale, errors } = await updateDocs(ROOT, figures, { write: false });
    const problems = [...errors, ...stale].map((p) => p.message);
    expect(problems, `regenerate with \`npm run docs:figures\`:\n${problems.join("\n")}`).toEqual([]);
  });

  it("the README's model block is checked from a run of bge-small-en-v1.5 whenever `npm run models` fetched it (CI always does)", () => {
    expect(facts.model).toBeDefined();
    if (process.env.CI === "true" || process.env.CI === "1") {
      // .ci/run fetches the weights first, so a missing model here is a broken setup, not a reason to leave the block unchecked.
      expect(facts.model && "missing" in facts.model ? facts.model.missing : "").toBe("");
    }
    if (facts.model && "report" in facts.model) {
      expect(facts.model.report.run.embedder).toMatch(/bge-small-en-v1\.5/);
      expect(figures.some((f) => f.id.startsWith("readme.model"))).toBe(true);
    }
  });

  it("the run is the default one of a fresh clone: the LSA embedder, store-backed, with the held-out split", () => {
    expect(facts.report.run.embedder).toMatch(/^lsa-/);
    expect(facts.report.run.storeKind).toBe("local");
    expect(facts.report.answerSide?.scope).toBe("holdout");
    // The README's held-out refusal figure is the one `npm start` prints (issue 19).
    const refusal = facts.report.splits.part?.holdout?.refusal_correctness;
    expect(figures.find((f) => f.id === "readme.refusal")?.text).toBe(
      `${refusal!.mean.toFixed(3)} (n = ${refusal!.n})`,
    );
  });

  it("a committed figure that differs fails, naming the file and the marker; write mode puts the run's figure back", async () => {
    const root = await copyDocs("stale");
    const readme = path.join(root, "README.md");
    const text = await readFile(readme, "utf8");
    const region = /<!-- fig:readme\.refusal -->(.*?)<!-- \/fig -->/.exec(text);
    expect(region).not.toBeNull();
    await writeFile(readme, text.replace(region![0], "<!-- fig:readme.refusal -->0.815 (n = 259)<!-- /fig -->"));

    const checked = await updateDocs(root, figures, { write: false });
    expect(checked.errors).toEqual([]);
    expect(checked.stale.map((p) => [p.file, p.id])).toEqual([["README.md", "readme.refusal"]]);
    const line = text.slice(0, region!.index).split("\n").length;
    expect(checked.stale[0]!.message).toContain(`README.md:${line}: figure <!-- fig:readme.refusal -->`);
    expect(checked.stale[0]!.message).toContain('committed "0.815 (n = 259)"');
    expect(checked.stale[0]!.message).toContain(JSON.stringify(region![1]));

    const written = await updateDocs(root, figures, { write: true });
    expect(written.written).toEqual(["README.md"]);
    expect(await readFile(readme, "utf8")).toBe(text);
  });

  it("a stale line of a block figure is named with the file, its line and the marker", async () => {
    const root = await copyDocs("stale-block");
    const file = path.join(root, "docs/holdout.md");
    const text = await readFile(file, "utf8");
    const lines = text.split("\n");
    const at = lines.findIndex((l) => l.startsWith("| refusal_correctness | "));
    expect(at).toBeGreaterThan(0);
    lines[at] = "| refusal_correctness | 0.815 [0.768, 0.861] n=259 | 0.918 [0.873, 0.956] n=158 |";
    await writeFile(file, lines.join("\n"));
    const { stale } = await updateDocs(root, figures, { write: false });
    expect(stale.map((p) => [p.file, p.id])).toEqual([["docs/holdout.md", "holdout.default-run"]]);
    expect(stale[0]!.message).toMatch(
      new RegExp(
        `^docs/holdout\\.md:${at + 1}: figure <!-- fig:holdout\\.default-run --> differs .*committed "\\| refusal_correctness \\| 0\\.815`,
      ),
    );
  });

  it("a missing, unknown or unclosed marker is an error, and nothing is written", async () => {
    const root = await copyDocs("broken");
    const holdout = path.join(root, "docs/holdout.md");
    const text = await readFile(holdout, "utf8");
    const broken = text
      .replace(/<!-- fig:holdout\.totals -->(.*?)<!-- \/fig -->/, "$1") // marker removed
      .replace("Totals:", "Totals <!-- fig:holdout.no-such-figure -->1<!-- /fig -->:")
      .replace(/(<!-- fig:holdout\.pre-split-in-holdout -->\d+)<!-- \/fig -->/, "$1");
    await writeFile(holdout, broken);
    const { errors, written } = await updateDocs(root, figures, { write: true });
    const messages = errors.map((p) => p.message).join("\n");
    expect(messages).toContain("docs/holdout.md: the marker <!-- fig:holdout.totals --> … <!-- /fig --> is missing");
    expect(messages).toContain(
      "docs/holdout.md: <!-- fig:holdout.no-such-figure --> is not a figure this script generates",
    );
    expect(messages).toContain(
      "docs/holdout.md: <!-- fig:holdout.pre-split-in-holdout --> has no closing <!-- /fig -->",
    );
    expect(written).not.toContain("docs/holdout.md");
    expect(await readFile(holdout, "utf8")).toBe(broken);
  });
});
