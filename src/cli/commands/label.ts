/**
 * `retrace label` (docs/labelling.md), three modes:
 *
 * - `retrace label CASES --out html:label.html`: the labelling page — per turn the
 *   pool of the systems named by `--pool` (src/app/label.ts), keyboard-first
 *   grading, Export of the labelled cases;
 * - `retrace label --merge EXPORTED --into CASES`: the export merged into the
 *   cases file (conflicts refused with file:line of both, exit 2; idempotent);
 * - `retrace label --agreement EXPORTED`: Cohen's κ (unweighted) between the
 *   judge's suggestions and the person's grades.
 *
 * Output paths are checked before any work (src/output-set.ts). Exit 0; 2 bad
 * usage or data (file, line and field named); 3 a store or model unavailable.
 */
import path from "node:path";
import { Option, type Command } from "commander";
import { buildLabelData, planLabel, type LabelOptions } from "../../app/label.js";
import { labelAgreement, mergeLabelFilesApart } from "../../app/label-files.js";
import { sourceFor } from "../../app/sources/registry.js";
import { recordingsHelp } from "../../eval/traces/formats/registry.js";
import { InvalidArgumentError } from "../../errors.js";
import { DEFAULT_DEPTH, DEFAULT_POOL, POOL_SYSTEMS } from "../../eval/label/pool.js";
import { RETRIEVAL_CALLS } from "../../eval/sweep/capture.js";
import { checkOutputs, writeOutputs } from "../../output-set.js";
import { labelPageNextSteps, mergeNextSteps } from "../next-steps.js";
import { log } from "../../log.js";
import { action, err, out } from "../io.js";
import { addRetired } from "../old-spellings.js";
import { addOutOption, outFile, outSpecs, renderOuts, type OutTarget } from "../out-formats.js";
import { findProject } from "../project.js";
import { addConfigOption } from "../settings.js";
import { positiveIntOption, refuseInMode } from "../options.js";

const collect = (v: string, prev: string[] | undefined) => [...(prev ?? []), v];

interface LabelCommandOptions extends Omit<LabelOptions, "cases" | "pool"> {
  /** `--out html:FILE` (the one output registry, src/cli/out-formats.ts). */
  outputs?: OutTarget[];
  pool?: string;
  merge?: string;
  into?: string;
  agreement?: string;
  json?: boolean;
}

/** Options of the page mode (refused with --merge / --agreement). */
const PAGE_ONLY = [
  "--kb",
  "--catalog",
  "--pool",
  "--depth",
  "--judge",
  "--case",
  "--locale",
  "--store",
  "--embedder",
  "--data-dir",
  "--timeout",
  "--graph",
  "--input",
  "--id-key",
  "--id-map",
  "--retrieval-call",
  "--configurable",
  "--turn-timeout",
  "--concurrency",
  "--max-card-bytes",
] as const;
/**
 * Options of the page mode --merge takes too: the ids' KB or catalog, and the
 * labelling run's source its Next: lines repeat (run.configurable, set by
 * `--config`, defines what the graph retrieves: the eval line after the merge
 * must repeat it; its retired flag names the setting here).
 */
const MERGE_KEEPS: ReadonlySet<string> = new Set([
  "--kb",
  "--catalog",
  "--max-card-bytes",
  "--configurable",
  "--graph",
  "--id-key",
  "--id-map",
  "--input",
  "--retrieval-call",
]);
/** `--out` given (its values parsed into `outputs` by the registry's hook). */
const OUT_GIVEN = { attribute: "outputs", shown: "option '--out'" };

const GRAPH_ONLY = [
  "--input",
  "--id-key",
  "--id-map",
  "--retrieval-call",
  "--configurable",
  "--turn-timeout",
  "--concurrency",
  "--catalog",
] as const;

async function pageCommand(typedCases: string | undefined, o: LabelCommandOptions): Promise<number> {
  // In a project (retrace.config.json, src/cli/project.ts): its cases, and the page at label.html, when not given.
  const project = findProject();
  const cases =
    typedCases ??
    project?.settings.cases ??
    (project?.settings.kb !== undefined ? path.join(project.settings.kb, "eval", "cases.jsonl") : undefined);
  // The project's graph or recording joins the default pool (typed, --graph / --traces ask for --pool to name them).
  if (
    project !== null &&
    o.pool === undefined &&
    (project.settings.graph !== undefined || project.settings.traces !== undefined)
  )
    o = {
      ...o,
      pool: [
        ...DEFAULT_POOL,
        ...(o.graph !== undefined ? ["graph"] : []),
        ...(o.traces !== undefined ? ["recorded"] : []),
      ].join(","),
    };
  if (project !== null && outFile(o.outputs, "html") === undefined)
    o = { ...o, outputs: [...(o.outputs ?? []), { format: "html", file: "label.html", option: "--out html:" }] };
  if (cases === undefined)
    throw new InvalidArgumentError(
      "CASES",
      "the cases file to label (retrace label CASES --out html:label.html)",
      undefined,
    );
  const html = outFile(o.outputs, "html");
  if (html === undefined)
    throw new InvalidArgumentError("--out", "the page to write (retrace label CASES --out html:label.html)", undefined);
  await checkOutputs(outSpecs(o.outputs)); // before anything is read or started
  const { outputs: targets, pool, merge: _m, into: _i, agreement: _a, json: _j, ...rest } = o;
  const plan = await planLabel({
    ...rest,
    cases,
    ...(pool !== undefined ? { pool: pool.split(",").map((s) => s.trim()) } : {}),
  });
  const data = await buildLabelData(plan);
  await writeOutputs((await renderOuts({ kind: "label", data }, targets)).outputs);
  const turns = data.cases.reduce((n, c) => n + c.turns.length, 0);
  const cards = data.cases.reduce((n, c) => n + c.turns.reduce((m, t) => m + t.pool.length, 0), 0);
  err(
    `Wrote ${html}: ${data.cases.length} case${data.cases.length === 1 ? "" : "s"}, ${turns} turns, ${cards} pooled cards (top ${data.depth} of ${data.systems.join(", ")})` +
      (plan.judge !== null
        ? `; judge ${plan.judge.name}: ${plan.judge.calls()} calls, ${plan.judge.unparsable()} replies without a grade`
        : "") +
      ".",
  );
  for (const line of labelPageNextSteps(o, html, data.exportName, cases)) log.info(line); // src/cli/next-steps.ts
  return 0;
}

async function mergeCommand(o: LabelCommandOptions): Promise<number> {
  if (o.into === undefined)
    throw new InvalidArgumentError(
      "--into",
      "the cases file to merge into (retrace label --merge EXPORTED --into CASES)",
      undefined,
    );
  if (o.kb !== undefined && o.catalog !== undefined)
    throw new InvalidArgumentError("--kb / --catalog", "one of them, not both", `${o.kb} / ${o.catalog}`);
  await checkOutputs([{ option: "--into", path: o.into, inPlace: true }]); // merging into the cases file is the purpose
  // The ids the export names are checked against the KB or the catalog, when one is given, before anything is merged.
  const given = o.kb !== undefined || o.catalog !== undefined;
  // In a thread of its own: a signal ends the run at any point of a large merge (docs/reliability.md).
  const r = await mergeLabelFilesApart({
    exported: o.merge!,
    into: o.into,
    ids: given
      ? {
          ...(o.kb !== undefined ? { kb: o.kb } : {}),
          ...(o.catalog !== undefined ? { catalog: o.catalog } : {}),
          ...(o.maxCardBytes !== undefined ? { maxCardBytes: o.maxCardBytes } : {}),
        }
      : null,
  });
  if (!given)
    log.warn(
      `the export's card ids were not checked against a KB or catalog: give --kb DIR or --catalog FILE to refuse ids that name no card (exit 2, file:line)`,
    );
  if (r.changed.length > 0 || r.appended.length > 0)
    await writeOutputs([{ option: "--into", path: o.into, data: r.text, inPlace: true }]);
  err(
    `Merged ${o.merge} into ${o.into}: ${r.changed.length} case${r.changed.length === 1 ? "" : "s"} updated, ${r.appended.length} appended, ${r.unchanged} unchanged` +
      (r.changed.length + r.appended.length === 0 ? " (nothing to write)" : "") +
      ".",
  );
  // The check against the KB or catalog given, then an eval of the labelling run's source (its --graph / --traces, repeated on --merge).
  for (const line of mergeNextSteps(o, o.into)) log.info(line); // src/cli/next-steps.ts
  return 0;
}

async function agreementCommand(o: LabelCommandOptions): Promise<number> {
  const r = await labelAgreement(o.agreement!);
  if (o.json) {
    out(JSON.stringify({ version: 1, measure: "cohen-kappa-unweighted", ...r }, null, 2));
    return 0;
  }
  const f = (x: number) => x.toFixed(3);
  const lines = [
    `Judge agreement in ${o.agreement}: Cohen's kappa (unweighted: every disagreement counts the same, 1 vs 2 as 0 vs 3)`,
    `  kappa ${r.kappa === null ? "undefined (both raters used one and the same grade throughout)" : f(r.kappa)}   n=${r.n} cards in ${r.turns} turns   observed agreement ${f(r.observed)}   chance agreement ${f(r.expected)}`,
    `  suggested but not graded by the person (left out): ${r.unconfirmed}`,
    `  rows: judge's grade, columns: person's grade`,
    `        ${r.categories.map((c) => String(c).padStart(5)).join("")}`,
    ...r.matrix.map(
      (row, i) => `  ${String(r.categories[i]).padStart(5)} ${row.map((x) => String(x).padStart(5)).join("")}`,
    ),
  ];
  out(lines.join("\n"));
  return 0;
}

export function register(program: Command): void {
  const cmd = program
    .command("label")
    .description(
      "Label your own cases: a self-contained page pooling several systems' top cards per turn (keyboard grading, export); --merge the export into the cases; --agreement of judge and person",
    )
    .argument("[cases]", "the cases file to label (e.g. from retrace cases import)");
  addOutOption(cmd, "label", "the labelling page");
  cmd
    .option(
      "--kb <dir>",
      "knowledge-base folder (default kb); with --merge, the cards the export's ids are checked against",
    )
    .option(
      "--catalog <file>",
      "with --graph and --pool graph: id<TAB>locale a line, standing in for --kb (card texts come from the graph's retrieved documents); with --merge, the ids the export's are checked against",
    )
    .option(
      "--pool <systems>",
      `comma-separated systems whose top cards are pooled: ${POOL_SYSTEMS.join(", ")} (graph needs --graph, recorded --traces; default ${DEFAULT_POOL.join(",")})`,
    )
    .option(
      "--depth <n>",
      `cards taken from each system's list (default ${DEFAULT_DEPTH})`,
      positiveIntOption("--depth"),
    )
    .option(
      "--judge <module>",
      "pre-fill a suggested grade per pooled card with the LangChain chat model this module exports (or a factory of one); the person confirms",
    )
    .option("--case <id>", "only this case (repeatable)", collect)
    .option("--locale <locale>", "only cases of this locale (repeatable)", collect)
    .option("--store <auto|local|url|memory>", "the store of retrace's own systems (as retrace eval)")
    .option("--data-dir <dir>", "data folder of the local Chroma (default .retrace/chroma)")
    .option(
      "--graph <file[#export]>",
      "your own LangGraph graph: its scored retriever call's cards are the pool's `graph` system",
    )
    .option(
      "--traces <path>",
      `recorded traces (${recordingsHelp()}, as eval --traces): their scored retriever call's cards, with the recorded texts, are the pool's \`recorded\` system (docs/recorded-traces.md)`,
    )
    .option(
      "--input <module[#export]>",
      "with --graph: a module whose function (turn, case) => input builds each turn's graph input",
    )
    .option("--id-key <field>", "with --graph: metadata field holding the card id")
    .option(
      "--id-map <module[#export]>",
      "with --graph: a module whose function (document) => id maps a retrieved document to a card id",
    )
    .addOption(
      new Option("--retrieval-call <which>", "with --graph: which retriever calls of a turn are pooled").choices([
        ...RETRIEVAL_CALLS,
      ]),
    )
    .option(
      "--merge <exported>",
      "merge this export of a labelling page into --into (conflicting judgments refused with file:line of both)",
    )
    .option("--into <cases>", "with --merge: the cases file to merge into (rewritten in place)")
    .option(
      "--agreement <exported>",
      "print Cohen's kappa (unweighted) between the judge's suggestions and the person's grades in this export",
    )
    .option("--json", "with --agreement: print the agreement as JSON (with a version field)");
  // retrieval.embedder and run.{timeout, maxCardBytes, configurable, turnTimeout, concurrency} are settings of --config, as on eval;
  // the project file's run-selecting keys are defaults (a flag typed wins), except for --merge and --agreement, which read an export.
  addRetired(
    addConfigOption(cmd, {
      retrievalWhy: "not a setting of retrace label (its systems retrieve with their defaults)",
      projectWhen: (c) => c.getOptionValue("merge") === undefined && c.getOptionValue("agreement") === undefined,
    }),
  );
  cmd.action(
    action((cases: string | undefined, o: LabelCommandOptions) => {
      if (o.merge !== undefined && o.agreement !== undefined)
        throw new InvalidArgumentError("--merge / --agreement", "one of them, not both", `${o.merge} / ${o.agreement}`);
      if (o.merge !== undefined || o.agreement !== undefined) {
        if (cases !== undefined)
          throw new InvalidArgumentError(
            "CASES",
            `no cases argument with ${o.merge !== undefined ? "--merge (the cases file is --into)" : "--agreement"}`,
            cases,
          );
        return o.merge !== undefined ? mergeCommand(o) : agreementCommand(o);
      }
      return pageCommand(cases, o);
    }),
  );
  refuseInMode<LabelCommandOptions>(cmd, [
    {
      when: (o) => o.merge !== undefined,
      mode: "with --merge (it merges an export into --into, checking its ids against --kb or --catalog)",
      // --kb / --catalog check the ids; --graph, --id-key, --id-map, --input and --retrieval-call only name the source the Next: eval line scores.
      unused: [...PAGE_ONLY.filter((x) => !MERGE_KEEPS.has(x)), "--json"],
      unusedValues: [OUT_GIVEN],
    },
    {
      when: (o) => o.agreement !== undefined,
      mode: "with --agreement (it reads an export)",
      unused: [...PAGE_ONLY, "--into"],
      unusedValues: [OUT_GIVEN],
    },
    { when: (o) => o.merge === undefined && o.agreement === undefined, mode: "without --merge", unused: ["--into"] },
    {
      when: (o) => o.merge === undefined && o.agreement === undefined,
      mode: "without --agreement",
      unused: ["--json"],
    },
    {
      when: (o) => o.merge === undefined && o.agreement === undefined && sourceFor(o).selectedBy === null,
      mode: "without --graph or --traces",
      unused: GRAPH_ONLY,
    },
    {
      when: (o) =>
        o.pool !== undefined && o.pool.split(",").every((s) => s.trim() === "graph" || s.trim() === "recorded"),
      mode: "with --pool graph or recorded alone (retrace's own systems, which these options set up, are not pooled)",
      unused: ["--store", "--embedder", "--data-dir", "--timeout"],
    },
  ]);
}
