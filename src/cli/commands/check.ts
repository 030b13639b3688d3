/**
 * `retrace check`: the dataset-integrity gate (src/app/check.ts) printed:
 * counts per locale and kind (the paraphrase share with the KB's analyzers),
 * the split's parts; exit 0 only when all is valid (2 otherwise, every issue
 * on stderr naming file, line and field). Reads only; writes nothing.
 */
import type { Command } from "commander";
import { checkData } from "../../app/check.js";
import type { DataPaths } from "../../app/data.js";
import { PARAPHRASE_THRESHOLD, type OverlapStats } from "../../research/paraphrase.js";
import type { Summary } from "../../kb/summary.js";
import { tableLocaleFor } from "../../kb/types.js";
import { action, out, outText } from "../io.js";
import { addRetired } from "../old-spellings.js";
import { addConfigOption } from "../settings.js";

const pct = (x: number) => `${(100 * x).toFixed(0)}%`;

export function renderSummary(
  s: Summary,
  paths: DataPaths,
  hashes: { kb: string; dataset: string },
  overlap: OverlapStats | null,
  catalog?: string,
): string {
  const lines: string[] = [];
  const t = s.kb.total;
  const present = Object.keys(s.kb.byLocale);
  const per = present.map((l) => `${l} ${s.kb.byLocale[l]?.cards ?? 0}`).join(", ");
  if (catalog !== undefined)
    lines.push(
      `Catalog ${catalog}: ${t.cards} ${t.cards === 1 ? "entry" : "entries"} (${per}); kb hash ${hashes.kb.slice(0, 12)}`,
    );
  else
    lines.push(
      `Knowledge base ${paths.kb}: ${t.cards} cards (${per}), ${t.chunks} chunks; ${t.minSections}-${t.maxSections} sections and ${t.minWords}-${t.maxWords} words per card; kb hash ${hashes.kb.slice(0, 12)}`,
    );
  lines.push(`Eval cases ${paths.cases}: dataset hash ${hashes.dataset.slice(0, 12)}`);
  lines.push("");
  // The relevance-only column shows only when some turn is graded without a citation contract (docs/labelling.md).
  const relevanceOnly = s.dataset["all/all"]!.relevanceOnlyTurns > 0;
  const header = [
    "locale",
    "kind",
    "cases",
    "turns",
    "gold-bearing",
    ...(relevanceOnly ? ["relevance-only"] : []),
    "no-match",
    "refuse",
    "multi-turn",
    "disjunctive",
  ];
  const rows: string[][] = [header];
  for (const locale of [...present, "all"])
    for (const kind of [
      "golden",
      "adversarial",
      ...(s.dataset["all/synthetic"]!.cases > 0 ? ["synthetic"] : []),
      "all",
    ]) {
      const c = s.dataset[`${locale}/${kind}`]!;
      rows.push([
        locale,
        kind,
        `${c.cases}`,
        `${c.turns}`,
        `${c.goldBearingTurns}`,
        ...(relevanceOnly ? [`${c.relevanceOnlyTurns}`] : []),
        `${c.noMatchTurns}`,
        `${c.refuseTurns}`,
        `${c.multiTurnCases} (${pct(c.multiTurnShare)})`,
        `${c.disjunctiveTurns} (${pct(c.disjunctiveShare)})`,
      ]);
    }
  const widths = header.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  for (const r of rows)
    lines.push(
      r
        .map((cell, i) => (i < 2 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!)))
        .join("  ")
        .trimEnd(),
    );
  lines.push("");
  const cats = Object.entries(s.adversarialByCategory)
    .map(([k, v]) => `${k} ${v}`)
    .join(", ");
  lines.push(`Adversarial cases by category: ${cats === "" ? "none" : cats}`);
  if (overlap !== null)
    lines.push(
      `Paraphrases: ${overlap.paraphrases} of ${overlap.goldBearingTurns} gold-bearing questions (${pct(overlap.share)}) share under ${pct(PARAPHRASE_THRESHOLD)} of their content words with their gold cards (median overlap ${pct(overlap.medianOverlap)})`,
    );
  const toLabel = s.dataset["all/all"]!.toLabelTurns;
  if (toLabel > 0)
    lines.push(
      `To label: ${toLabel} turn${toLabel === 1 ? "" : "s"} without must_cite_one_of (imported; they run and score nothing until labelled)`,
    );
  const graded = s.dataset["all/all"]!.relevanceOnlyTurns;
  if (graded > 0)
    lines.push(
      `Relevance only: ${graded} turn${graded === 1 ? "" : "s"} graded relevant without must_cite_one_of (scored for nDCG only, as eval scores them; mark a card citeable to give a turn hit@k and recall@k)`,
    );
  const synthetic = s.dataset["all/synthetic"]!.cases;
  if (synthetic > 0)
    lines.push(
      `Synthetic: ${synthetic} case${synthetic === 1 ? "" : "s"} from retrace cases synth, reported as a split of their own (docs/synthetic-cases.md)`,
    );
  lines.push(
    "multi-turn = cases with 2+ turns (share of cases); disjunctive = gold-bearing turns listing 2+ acceptable cards (share of gold-bearing turns)",
  );
  const generic = present.filter((l) => tableLocaleFor(l) === null);
  if (generic.length > 0)
    lines.push(
      `Built-in graph: generic rules (no follow-up, policy or refusal tables) for ${generic.join(", ")}; see docs/languages.md`,
    );
  lines.push(
    catalog !== undefined
      ? "Integrity: OK (every catalog line valid, every gold id names an entry of the case's locale)"
      : "Integrity: OK (every card valid, every gold id names a card of the case's locale)",
  );
  return lines.join("\n");
}

export function register(program: Command): void {
  const cmd = program
    .command("check")
    .description("Validate the knowledge base and the eval cases (the dataset-integrity gate) and print their counts")
    .option("--kb <dir>", "knowledge-base folder (cards under <dir>/cards/<locale>/)", "kb")
    .option("--cases <file>", "eval cases JSONL (default <kb>/eval/cases.jsonl)")
    .option(
      "--catalog <file>",
      "check the cases against this id<TAB>locale list instead of a KB (your documents live in your own store); needs --cases",
    )
    .option("--json", "print the counts as JSON");
  // run.maxCardBytes is a setting (--config, the project file); the project's kb, cases and catalog are its defaults.
  addRetired(
    addConfigOption(cmd, {
      retrievalWhy: "not a setting of retrace check (it retrieves nothing)",
      projectKeys: ["kb", "catalog", "cases"],
    }),
  ).action(
    action(
      async (
        opts: { kb?: string; cases?: string; catalog?: string; json?: boolean; maxCardBytes?: number },
        cmd: Command,
      ) => {
        // --kb has a default; with --catalog only a --kb typed by the user is a conflict.
        const kb =
          cmd.getOptionValueSource("kb") === "cli" ? opts.kb : opts.catalog === undefined ? opts.kb : undefined;
        const { paths, hashes, summary, overlap, split, catalog } = await checkData({ ...opts, kb });
        if (opts.json)
          out(
            JSON.stringify(
              {
                version: 1,
                valid: true,
                paths,
                ...(catalog !== undefined ? { catalog } : {}),
                hashes,
                ...summary,
                lexicalOverlap: overlap === null ? null : { threshold: PARAPHRASE_THRESHOLD, ...overlap },
                split,
              },
              null,
              2,
            ),
          );
        else
          outText(
            `${renderSummary(summary, paths, hashes, overlap, catalog)}\n${
              split === null
                ? "Split: none (no split.json beside the cases; every figure is on data that may have been tuned on)"
                : `Split ${split.file}: tune ${split.tune.cases} cases (${split.tune.turns} turns), holdout ${split.holdout.cases} cases (${split.holdout.turns} turns)`
            }`,
          );
      },
    ),
  );
}
