/**
 * The figures about the shipped KB that README.md, docs/holdout.md and
 * docs/gates-and-exit-codes.md quote, regenerated from ONE run of the
 * shipped KB: `retrace start` (what `npm start` runs: a self-started local
 * Chroma, the default embedder, k = 5) with `--out json:FILE`, in a child
 * process, on a fresh temporary data dir and an empty models dir (so
 * `retrieval.embedder` `auto` resolves as on a fresh clone: the LSA embedder). Every
 * figure is computed from that report, the loaded KB and cases, and the
 * committed kb/eval/baseline.json; the examples of error messages come from
 * the functions that print them.
 *
 *   npm run docs:figures                  # run once, rewrite the marked regions that changed
 *   npm run docs:figures -- --check       # run once, write nothing; exit 1 naming each stale file and marker
 *   npm run docs:figures -- --report F    # use the report JSON F (a default run of the shipped KB) instead of running
 *   npm run docs:figures -- --model-report M   # and M as the model run (see MODEL FIGURES)
 *
 * test/docs/figures.int.test.ts runs the check.
 *
 * MODEL FIGURES. README.md's `readme.model` block sets a second run of the
 * shipped KB beside the default's: the same command with the real model
 * embedder named (`--config '{"retrieval":{"embedder":"Xenova/bge-small-en-v1.5"}}'`,
 * its weights from the models folder in effect: `$RETRACE_MODELS_DIR`, else
 * `<repo>/models`, then the folder `npm run models` fills). When the model is not there the script says so on stderr,
 * naming where it looked and how to fetch it, and leaves that block as
 * committed (it is then neither rewritten nor reported stale); every other
 * figure is still regenerated or checked.
 *
 * MARKER CONVENTION. The script owns exactly the text between
 * `<!-- fig:ID -->` and the next `<!-- /fig -->` (HTML comments: invisible
 * when the markdown is rendered). IDs are declared below, each for one file,
 * and must occur there exactly once; an unknown, missing, duplicated, nested
 * or unclosed marker is an error. Two forms:
 *   - inline, inside a sentence or a table cell:
 *       `is <!-- fig:readme.refusal -->0.803 (n = 259)<!-- /fig -->.`
 *   - block (a table or a fenced code block; HTML comments are not comments
 *     inside a code fence, so the markers go around it): the opening marker
 *     alone on its line, a blank line, the generated block, a blank line, the
 *     closing marker alone on its line; the block's lines and the closing
 *     marker are indented as the opening marker is (inside a list item).
 * Prose outside the markers is never touched: a sentence that stays true
 * whatever the numbers belongs outside, the numbers inside. A figure that is
 * a dated record of another measurement (docs/holdout.md, "measured once")
 * is not marked: it is not what the shipped KB produces now.
 */
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { isDeepStrictEqual } from "node:util";
import { checkBaselineBeforeRun } from "../src/app/baseline.js";
import { caseAndTurn } from "../src/cli/commands/trace.js";
import { baselineFromReport, readBaseline, type Baseline } from "../src/eval/gate/baseline.js";
import { smallKbWarning, chanceHit } from "../src/eval/measures/chance.js";
import { HIT_KEY, metricKey } from "../src/eval/measures/metrics.js";
import { gate } from "../src/eval/gate/gate.js";
import { metricLabel, retrievalConfigText } from "../src/eval/report/render/shared.js";
import { parseReport } from "../src/eval/report/schemas.js";
import { turnKey } from "../src/eval/stats/bootstrap.js";
import type { Aggregate, Report, TurnReport } from "../src/eval/report/types.js";
import { datasetHash } from "../src/kb/hash.js";
import { loadData, type LoadedData } from "../src/kb/load.js";
import {
  DEFAULT_EMBEDDING_MODEL,
  defaultModelsDir,
  locateModel,
  modelsCacheDir,
} from "../src/retrieval/embedders/transformers.js";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** The files whose figures this script owns, relative to the repository root. */
export const DOC_FILES = ["README.md", "docs/holdout.md", "docs/gates-and-exit-codes.md"] as const;
export type DocFile = (typeof DOC_FILES)[number];

/** Everything the figures are computed from. */
export interface Facts {
  /** The report of the one default run of the shipped KB. */
  report: Report;
  /** kb/ and kb/eval/cases.jsonl as the CLI loads them. */
  data: LoadedData;
  /** The committed kb/eval/baseline.json. */
  baseline: Baseline;
  /** Cases that existed before the split (kb/eval/split.json's note: `--original N`); later ones were written fresh. */
  preSplitCases: number;
  /** The run with the model embedder named (FIGURES_MODEL), or why there is none (the model is not in the models folder; not asked for). */
  model?: { model: string; report: Report } | { model: string; missing: string };
}

/** The model embedder of README.md's `readme.model` figures. */
export const FIGURES_MODEL = DEFAULT_EMBEDDING_MODEL;

export interface Figure {
  file: DocFile;
  id: string;
  block: boolean;
  text: string;
  /** Why this region is left as committed (its inputs are missing, e.g. the model weights): neither rewritten nor stale. */
  keep?: string;
}

export interface Problem {
  file: string;
  /** The marker id, when the problem is about one marker. */
  id?: string;
  message: string;
}

const KB_DIR = "kb";
const CASES_FILE = "kb/eval/cases.jsonl";
const BASELINE_FILE = "kb/eval/baseline.json";
const SPLIT_FILE = "kb/eval/split.json";

// ---------------------------------------------------------------- the run

/**
 * Runs `retrace start --out json:FILE` on the shipped KB in a child process
 * (src/cli/run.ts through tsx, as `npm start` does) and returns its report.
 * `workDir` holds the Chroma data dir, an empty models dir and the report;
 * a temporary folder (removed afterwards) when not given.
 */
export async function runShippedEval(
  opts: {
    root?: string;
    workDir?: string;
    stderr?: (chunk: string) => void;
    /** Name this model embedder (`--config '{"retrieval":{"embedder":…}}'`), loaded from `modelsDir`; default: none, an empty models dir. */
    model?: { id: string; modelsDir: string };
  } = {},
): Promise<Report> {
  const root = opts.root ?? ROOT;
  const work = opts.workDir ?? (await mkdtemp(path.join(os.tmpdir(), "retrace-doc-figures-")));
  try {
    const models = opts.model?.modelsDir ?? path.join(work, "no-models");
    await mkdir(models, { recursive: true });
    const tag = opts.model === undefined ? "" : "-model";
    const reportFile = path.join(work, `report${tag}.json`);
    const args = [
      "--import",
      "tsx",
      path.join(root, "src", "cli", "run.ts"),
      "start",
      "--store",
      "local",
      "--data-dir",
      path.join(work, `chroma${tag}`),
      "--out",
      `json:${reportFile}`,
      ...(opts.model === undefined ? [] : ["--config", JSON.stringify({ retrieval: { embedder: opts.model.id } })]),
    ];
    const env = { ...process.env, CHROMA_URL: "", RETRACE_MODELS_DIR: models, NO_COLOR: "1" };
    const child = spawn(process.execPath, args, { cwd: root, env, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (d: string) => {
      stderr += d;
      opts.stderr?.(d);
    });
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once("error", reject);
      child.once("close", (c) => resolve(c));
    });
    if (code !== 0) throw new Error(`retrace start exited ${code}; its stderr:\n${stderr}`);
    return await readReportFile(reportFile);
  } finally {
    if (opts.workDir === undefined) await rm(work, { recursive: true, force: true });
  }
}

async function readReportFile(file: string): Promise<Report> {
  return parseReport(JSON.parse(await readFile(file, "utf8")), file);
}

/** The report (run now, or read from `reportFile`) and the data and baseline the figures also need. */
export async function collectFacts(
  opts: {
    root?: string;
    reportFile?: string;
    workDir?: string;
    stderr?: (chunk: string) => void;
    /** Also run the shipped KB with FIGURES_MODEL when its weights are present (default true); `modelReportFile`: use that report instead. */
    model?: boolean;
    modelReportFile?: string;
  } = {},
): Promise<Facts> {
  const root = opts.root ?? ROOT;
  const data = await loadData(path.join(root, KB_DIR), path.join(root, CASES_FILE));
  const report =
    opts.reportFile !== undefined
      ? await readReportFile(opts.reportFile)
      : await runShippedEval({
          root,
          ...(opts.workDir !== undefined ? { workDir: opts.workDir } : {}),
          ...(opts.stderr !== undefined ? { stderr: opts.stderr } : {}),
        });
  if (
    report.run.datasetHash !== data.hashes.dataset ||
    report.run.kbHash !== data.hashes.kb ||
    report.shard !== undefined
  )
    throw new Error(
      "the report is not a full run of the shipped KB and cases as they are now (its datasetHash or kbHash differs, or it is a shard)",
    );
  const baseline = await readBaseline(path.join(root, BASELINE_FILE));
  const note = (JSON.parse(await readFile(path.join(root, SPLIT_FILE), "utf8")) as { note?: string }).note ?? "";
  const original = /--original (\d+)/.exec(note);
  if (original === null)
    throw new Error(`${SPLIT_FILE}: its note no longer records the number of pre-split cases (--original N)`);
  const facts: Facts = { report, data, baseline, preSplitCases: Number(original[1]) };
  if (opts.model !== false) facts.model = await modelFacts(root, opts);
  return facts;
}

/** The model run of the shipped KB (or why there is none): FIGURES_MODEL from the models folder in effect. */
async function modelFacts(
  root: string,
  opts: { workDir?: string; stderr?: (chunk: string) => void; modelReportFile?: string },
): Promise<NonNullable<Facts["model"]>> {
  const model = FIGURES_MODEL;
  if (opts.modelReportFile !== undefined) return { model, report: await readReportFile(opts.modelReportFile) };
  // The folders the runtime looks in, a repository's own `models/` for the cwd: $RETRACE_MODELS_DIR, else <repo>/models,
  // then the folder `npm run models` fills (so CI, which fetches the model there, checks the model block too).
  const dirs = process.env.RETRACE_MODELS_DIR ? [defaultModelsDir()] : [path.join(root, "models"), modelsCacheDir()];
  let modelsDir: string | undefined;
  let where: Awaited<ReturnType<typeof locateModel>> | undefined;
  const lookedIn: string[] = [];
  for (const d of dirs) {
    where = await locateModel(model, { modelsDir: d });
    if (where.found) {
      modelsDir = d;
      break;
    }
    lookedIn.push(...where.lookedIn);
  }
  if (where === undefined || !where.found || modelsDir === undefined)
    return {
      model,
      missing: `${model} is not in ${lookedIn.join(", ")}; fetch it with \`npm run models\``,
    };
  opts.stderr?.(`doc-figures: a second run of the shipped KB with ${model} (${where.dtype}, ${where.dir}) …\n`);
  const report = await runShippedEval({
    root,
    model: { id: model, modelsDir },
    ...(opts.workDir !== undefined ? { workDir: opts.workDir } : {}),
    ...(opts.stderr !== undefined ? { stderr: opts.stderr } : {}),
  });
  return { model, report };
}

// ---------------------------------------------------------------- formatting

const f3 = (x: number) => x.toFixed(3);
const pct = (a: number, b: number) => `${((100 * a) / b).toFixed(1)}%`;
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const WORDS = ["no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"];
const inWords = (n: number) => WORDS[n] ?? String(n);

/** `0.803 [0.752, 0.852] n=259 (123 cases)`, plus `; chance 0.478` for retrieval keys: the figures `npm start` prints. */
function aggText(a: Aggregate | undefined, opts: { chance?: boolean } = {}): string {
  if (a === undefined) return "not measured";
  const ci = a.ci95 === undefined ? "(no CI)" : `[${f3(a.ci95[0])}, ${f3(a.ci95[1])}]`;
  const cases = a.nCases === undefined ? "" : ` (${plural(a.nCases, "case")})`;
  const chance = opts.chance !== false && a.chance !== undefined ? `; chance ${f3(a.chance)}` : "";
  return `${f3(a.mean)} ${ci} n=${a.n}${cases}${chance}`;
}

function byLocale<T>(locales: readonly string[], count: (l: string) => T): string {
  return locales.map((l) => `${l} ${count(l)}`).join(", ");
}

/** "a, b and c" */
function listText(xs: readonly string[]): string {
  return xs.length <= 1 ? xs.join("") : `${xs.slice(0, -1).join(", ")} and ${xs[xs.length - 1]}`;
}

// ---------------------------------------------------------------- the figures

/** Every marked figure of every file, computed from `facts`. */
export function figuresOf(facts: Facts): Figure[] {
  const { report, data, baseline } = facts;
  const k = report.run.k;
  const turns = report.turns;
  const locales = Object.keys(report.chance?.cardsPerLocale ?? {});
  const cardsPer = report.chance?.cardsPerLocale ?? {};
  const caseIds = [...new Set(turns.map((t) => t.caseId))];
  const partOf = (t: TurnReport) => t.part;
  const inPart = (p: string) => turns.filter((t) => partOf(t) === p);
  const casesIn = (ts: readonly TurnReport[]) => new Set(ts.map((t) => t.caseId)).size;
  const hit = (t: TurnReport) => t.results.find((r) => r.key === HIT_KEY)?.score;
  const heldOut = report.answerSide?.scope === "holdout";
  const isAnswerSide = (key: string) => report.answerSide?.keys.includes(key) ?? false;
  const label = (key: string) => `${metricLabel(key, k)}${heldOut && isAnswerSide(key) ? " (held-out)" : ""}`;

  // The split's history: the first `preSplitCases` cases existed before it; every later one was written fresh.
  const preSplit = new Set(data.cases.slice(0, facts.preSplitCases).map((c) => c.id));
  const fresh = data.cases.slice(facts.preSplitCases);
  const freshTurns = turns.filter((t) => !preSplit.has(t.caseId));
  const mustRefuse = (ts: readonly TurnReport[]) => ts.filter((t) => t.kind === "adversarial" && t.expect === "refuse");
  const refused = (ts: readonly TurnReport[]) => ts.filter((t) => t.refused).length;
  const heldOutMustRefuse = mustRefuse(inPart("holdout"));
  const freshMustRefuse = heldOutMustRefuse.filter((t) => !preSplit.has(t.caseId));
  const preSplitMustRefuse = heldOutMustRefuse.filter((t) => preSplit.has(t.caseId));

  const runConfigs = Object.values(report.run.retrieval ?? {});
  const sameConfig = runConfigs.length > 0 && runConfigs.every((c) => isDeepStrictEqual(c, runConfigs[0]));
  const retrievalLine = sameConfig
    ? `\`${retrievalConfigText(runConfigs[0]!)}\``
    : Object.entries(report.run.retrieval ?? {})
        .map(([l, c]) => `${l}: \`${retrievalConfigText(c)}\``)
        .join("; ");
  const denseWeights = [
    ...new Set(
      runConfigs
        .map((c) => (c.settings?.weights as { dense?: number } | undefined)?.dense)
        .filter((w): w is number => w !== undefined),
    ),
  ];

  const embedderLine = `embedder \`${report.run.embedder}\`, ${report.run.storeKind === "local" ? "local Chroma" : `store ${report.run.store}`}, ${report.run.mode} retrieval, k = ${k}`;
  const baselineSame = isDeepStrictEqual({ ...baselineFromReport(report), created: "" }, { ...baseline, created: "" });

  const figures: Figure[] = [];
  const add = (file: DocFile, id: string, text: string, block = false) => figures.push({ file, id, block, text });

  // ---- README.md
  add("README.md", "readme.markets", `${inWords(locales.length)} markets (${locales.join(", ")})`);
  add(
    "README.md",
    "readme.kb-counts",
    `${data.kb.cards.length} cards, ${caseIds.length} eval cases, ${turns.length} turns (${turns.filter((t) => hit(t) !== undefined).length} carry gold)`,
  );
  const headline = [
    `Run: ${embedderLine}; ${retrievalLine}. Intervals: 95% ${report.bootstrap?.unit ?? "case"}-level bootstrap, seed ${report.bootstrap?.seed ?? "?"}; n counts turns.${heldOut ? ` Answer-side rows are on the ${report.answerSide?.turns.holdout} held-out turns of ${turns.length}.` : ""}`,
    "",
    "| metric | mean [95% interval] n (cases) |",
    "|---|---|",
    ...Object.entries(report.aggregates).map(([key, a]) => `| ${label(key)} | ${aggText(a)} |`),
    ...report.vacuous.map((key) => `| ${label(key)} | ${report.vacuousReasons[key] ?? "not measured"} |`),
  ].join("\n");
  add("README.md", "readme.headline", headline, true);
  const warned = locales.filter((l) => smallKbWarning(l, cardsPer[l]!, k) !== null);
  const chanceOf = (l: string) => {
    const p = chanceHit(cardsPer[l]!, 1, k);
    return p === 0.5 ? "half" : `${Math.round(100 * p)}%`;
  };
  add(
    "README.md",
    "readme.small-locales",
    warned.length === 0
      ? `With the shipped KB, every locale has more than ${3 * k} cards, so no locale is small against k = ${k}.`
      : warned.every((l) => cardsPer[l] === cardsPer[warned[0]!])
        ? `With the shipped KB, ${listText(warned)} ${warned.length === 1 ? "has" : "have"} ${cardsPer[warned[0]!]} cards${warned.length === 1 ? "" : " each"}, so at k = ${k} a random top-${k} already has a one-card gold ${chanceOf(warned[0]!)} of the time, and the report warns about it.`
        : `With the shipped KB, ${listText(warned.map((l) => `${l} has ${cardsPer[l]} cards`))}, so at k = ${k} a random top-${k} already has a one-card gold ${listText(warned.map(chanceOf))} of the time respectively, and the report warns about it.`,
  );
  add(
    "README.md",
    "readme.refused-default",
    `${refused(heldOutMustRefuse)} of ${heldOutMustRefuse.length} (${pct(refused(heldOutMustRefuse), heldOutMustRefuse.length)}; ${refused(freshMustRefuse)} of ${freshMustRefuse.length} on the fresh cases)`,
  );
  const refusal = (heldOut ? report.splits.part?.holdout : report.aggregates)?.refusal_correctness;
  add("README.md", "readme.refusal", refusal === undefined ? "not measured" : `${f3(refusal.mean)} (n = ${refusal.n})`);
  add(
    "README.md",
    "readme.dense-weight",
    denseWeights.length === 1
      ? denseWeights[0]!.toFixed(2)
      : `${denseWeights.map((w) => w.toFixed(2)).join(" / ")} by locale`,
  );
  const missed = turns.filter((t) => hit(t) === 0);
  const example = missed[0];
  add(
    "README.md",
    "readme.trace-example",
    example === undefined
      ? "```sh\nnpx retrace trace en-freeze-001 --top 3   # the default run misses no turn\n```"
      : `\`\`\`sh\nnpx retrace trace ${example.caseId} --turn ${example.turn} --top 3   # a turn the default run misses\n\`\`\``,
    true,
  );

  figures.push(modelFigure(facts));

  // ---- docs/holdout.md
  const preSplitHoldout = data.cases
    .slice(0, facts.preSplitCases)
    .filter((c) => data.split?.partOf.get(c.id) === "holdout");
  const preSplitTune = data.cases.slice(0, facts.preSplitCases).filter((c) => data.split?.partOf.get(c.id) === "tune");
  const strata = (cs: readonly { locale: string; kind: string }[]) =>
    new Set(cs.flatMap((c) => [`locale ${c.locale}`, `kind ${c.kind}`]));
  const tuneStrata = strata(preSplitTune);
  const holdoutStrata = strata(preSplitHoldout);
  const everyStratumInBoth = [...new Set([...tuneStrata, ...holdoutStrata])].every(
    (s) => tuneStrata.has(s) && holdoutStrata.has(s),
  );
  add("docs/holdout.md", "holdout.pre-split-cases", String(facts.preSplitCases));
  add(
    "docs/holdout.md",
    "holdout.pre-split-result",
    `${preSplitTune.length} tune, ${preSplitHoldout.length} holdout (${everyStratumInBoth ? "every locale and kind has cases in both parts" : "some locale or kind is missing from one part"})`,
  );
  add(
    "docs/holdout.md",
    "holdout.fresh-cases",
    `${fresh.length} new cases (${freshTurns.length} turns: ${byLocale(locales, (l) => freshTurns.filter((t) => t.locale === l).length)})`,
  );
  const freshAdversarial = freshTurns.filter((t) => t.kind === "adversarial");
  const freshMustRefuseAll = mustRefuse(freshTurns);
  add(
    "docs/holdout.md",
    "holdout.fresh-adversarial",
    `${freshAdversarial.length} of their turns are adversarial, ${freshMustRefuseAll.length} of those must be refused (${byLocale(locales, (l) => freshMustRefuseAll.filter((t) => t.locale === l).length)})`,
  );
  add(
    "docs/holdout.md",
    "holdout.totals",
    `${caseIds.length} cases, ${turns.length} turns; \`tune\` ${casesIn(inPart("tune"))} cases (${inPart("tune").length} turns), \`holdout\` ${casesIn(inPart("holdout"))} cases (${inPart("holdout").length} turns)`,
  );
  add("docs/holdout.md", "holdout.pre-split-in-holdout", String(preSplitHoldout.length));
  add(
    "docs/holdout.md",
    "holdout.pre-split-refusals",
    refused(preSplitMustRefuse) === preSplitMustRefuse.length
      ? `${plural(preSplitMustRefuse.length, "adversarial refusal turn")} ${preSplitMustRefuse.length === 1 ? "is" : "are all"} refused`
      : `adversarial refusal turns: ${refused(preSplitMustRefuse)} of ${preSplitMustRefuse.length} refused`,
  );
  const part = report.splits.part ?? {};
  const kind = report.splits.kind ?? {};
  // The headline key first, then the others in report order.
  const answerKeys = (report.answerSide?.keys ?? [])
    .filter((key) => part.holdout?.[key] !== undefined)
    .sort((a, b) => Number(b === "refusal_correctness") - Number(a === "refusal_correctness"));
  const noChance = { chance: false };
  const defaultRun = [
    `Store-backed, the default run (\`npm start\`, i.e. \`retrace start\`: ${embedderLine}; ${retrievalLine}). ${
      baselineSame
        ? "`kb/eval/baseline.json` (written with `retrace eval --update-baseline`) holds exactly this run's figures."
        : "`kb/eval/baseline.json` was written by another run: its figures differ from this run's (`retrace eval --update-baseline` refreshes it)."
    }`,
    "",
    "| key | holdout (headline) | tune (fitted on) |",
    "|---|---|---|",
    ...answerKeys.map((key) => {
      const kinds = ["golden", "adversarial"]
        .filter((x) => kind[x]?.[key] !== undefined)
        .map((x) => `${x} ${f3(kind[x]![key]!.mean)} n=${kind[x]![key]!.n}`);
      return `| ${key} | ${aggText(part.holdout?.[key], noChance)}${kinds.length > 0 ? `; ${kinds.join(", ")}` : ""} | ${aggText(part.tune?.[key], noChance)} |`;
    }),
    "",
    `In this run the answerer refuses ${refused(heldOutMustRefuse)}/${heldOutMustRefuse.length} (${pct(refused(heldOutMustRefuse), heldOutMustRefuse.length)}) of the held-out adversarial must-refuse turns (${byLocale(
      locales,
      (l) => {
        const ts = heldOutMustRefuse.filter((t) => t.locale === l);
        return `${refused(ts)}/${ts.length}`;
      },
    )}): ${refused(freshMustRefuse)}/${freshMustRefuse.length} on the fresh cases, ${refused(preSplitMustRefuse)}/${preSplitMustRefuse.length} on the pre-split ones. The figures measured once above were taken with the built-in embedder: the answerer's evidence check sees what was retrieved, so another embedder gives other answer-side figures.`,
  ].join("\n");
  add("docs/holdout.md", "holdout.default-run", defaultRun, true);

  // ---- docs/gates-and-exit-codes.md
  const turnExample = data.cases.find((c) => c.id === "en-freeze-001") ?? data.cases[0]!;
  add(
    "docs/gates-and-exit-codes.md",
    "gates.turn-range",
    `\`\`${errorMessage(() => caseAndTurn(data.cases, turnExample.id, "-3", CASES_FILE))}\`\``,
  );
  // The message of `retrace eval --locale en --gate max-flips=0` against the committed baseline (the prose around the marker names the command).
  const enCases = data.cases.filter((c) => c.locale === "en");
  const mismatch = errorMessage(() =>
    checkBaselineBeforeRun(
      baseline,
      {
        kb: KB_DIR,
        k,
        mode: "hybrid",
        embedder: "auto",
        locale: ["en"],
        baselineFile: BASELINE_FILE,
        baselineIsDefault: true,
        gates: ["max-flips=0"],
      },
      {
        datasetHash: datasetHash(enCases),
        fullDatasetHash: data.hashes.dataset,
        selected: enCases.length,
        total: data.cases.length,
      },
    ),
  ).replace(/"[0-9a-f]{64}"/g, '"…"');
  add("docs/gates-and-exit-codes.md", "gates.baseline-mismatch", `\`\`\`\n${mismatch}\n\`\`\``, true);
  // Flips against a baseline in which the run's first two missed turns were hits: the gate's own message.
  const flipped = missed.slice(0, 2);
  const doctored = baselineFromReport(report);
  for (const t of flipped)
    doctored.perTurn[turnKey(t.caseId, t.turn)] = { ...doctored.perTurn[turnKey(t.caseId, t.turn)], [HIT_KEY]: 1 };
  const flips = gate(report, { maxFlips: 0 }, doctored).failures.find((f) => f.kind === "flips");
  const flipLine =
    flips === undefined
      ? "(no turn misses in the default run)"
      : `[${flips.kind}] ${flips.reason.split(" | ")[0]}${flipped.length > 1 ? " | …" : ""}`;
  add("docs/gates-and-exit-codes.md", "gates.flips", `\`\`\`\n${flipLine}\n\`\`\``, true);

  return figures;
}

/**
 * README.md's `readme.model`: the held-out part of the shipped KB under the
 * default embedder and under FIGURES_MODEL, per locale and in all: the mean
 * over held-out gold-bearing turns of hit@k, nDCG@k and MRR@k (each run's own
 * per-turn scores, so the two columns are over the same turns).
 */
function modelFigure(facts: Facts): Figure {
  const base = { file: "README.md" as const, id: "readme.model", block: true };
  const m = facts.model;
  if (m === undefined) return { ...base, text: "", keep: "the model run was not asked for" };
  if ("missing" in m) return { ...base, text: "", keep: m.missing };
  const def = facts.report;
  const mod = m.report;
  const k = def.run.k;
  const keys = [metricKey("hit"), metricKey("ndcg"), metricKey("mrr")];
  const held = (r: Report) => r.turns.filter((t) => t.part === "holdout" && t.results.some((x) => x.key === HIT_KEY));
  const locales = [...new Set(held(def).map((t) => t.locale))].sort();
  const mean = (ts: readonly TurnReport[], key: string) => {
    const v = ts.map((t) => t.results.find((x) => x.key === key)?.score).filter((x): x is number => x !== undefined);
    return v.length === 0 ? NaN : v.reduce((a, b) => a + b, 0) / v.length;
  };
  const row = (label: string, pick: (t: TurnReport) => boolean) => {
    const a = held(def).filter(pick);
    const b = held(mod).filter(pick);
    return `| ${label} | ${a.length} | ${keys.map((key) => `${f3(mean(a, key))} / ${f3(mean(b, key))}`).join(" | ")} |`;
  };
  const cfg = (r: Report) => {
    const c = Object.values(r.run.retrieval ?? {})[0];
    return c === undefined ? "" : `; \`${retrievalConfigText(c)}\``;
  };
  /** The ONNX precision the description names (`fp32 onnx`, `q8 onnx`), when the id does not. */
  const precisionText = (r: Report) => {
    const d = /\b(fp32|q8) onnx\b/.exec(r.run.embedderDescription ?? "")?.[1];
    return d === undefined || (r.run.embedder ?? "").includes(d) ? "" : ` (${d})`;
  };
  const text = [
    `Default: embedder \`${def.run.embedder}\`${cfg(def)}. Model: embedder \`${mod.run.embedder}\`${precisionText(mod)}${cfg(mod)}. Both: local Chroma, ${def.run.mode} retrieval, k = ${k}; mean over the held-out part's gold-bearing turns (default / model).`,
    "",
    `| held-out turns | n | ${keys.map((key) => metricLabel(key, k)).join(" | ")} |`,
    `|---|---:|${keys.map(() => "---|").join("")}`,
    ...locales.map((l) => row(l, (t) => t.locale === l)),
    row("all", () => true),
  ].join("\n");
  return { ...base, text };
}

/** The message `fn` throws (it must throw). */
function errorMessage(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error("expected an error to show as an example, but none was thrown");
}

// ---------------------------------------------------------------- markers

const OPEN = /<!-- fig:([A-Za-z0-9._-]+) -->/g;
const CLOSE = "<!-- /fig -->";

/** What goes between the markers: the text itself (inline), or the block between blank lines, each line indented as the opening marker is. */
function regionText(f: Figure, indent: string): string {
  if (!f.block) return f.text;
  return `\n\n${f.text
    .split("\n")
    .map((l) => (l === "" ? "" : `${indent}${l}`))
    .join("\n")}\n\n${indent}`;
}

/** The first line (0-based, within the region) where `a` and `b` differ, and both versions of it. */
function firstDifference(a: string, b: string): { line: number; committed: string; now: string } {
  const la = a.split("\n");
  const lb = b.split("\n");
  let i = 0;
  while (i < Math.max(la.length, lb.length) - 1 && la[i] === lb[i]) i++;
  return { line: i, committed: la[i] ?? "(no line)", now: lb[i] ?? "(no line)" };
}

/**
 * `text` (the content of `file`) with every marked region set to its
 * figure, and the problems found: stale regions (only counted, the text is
 * fixed in the result), and marker errors (unknown, missing, duplicated,
 * nested, unclosed: the text is returned unchanged).
 */
export function applyFigures(
  file: string,
  text: string,
  figures: readonly Figure[],
): { text: string; stale: Problem[]; errors: Problem[] } {
  const mine = new Map(figures.filter((f) => f.file === file).map((f) => [f.id, f]));
  const errors: Problem[] = [];
  const stale: Problem[] = [];
  const seen = new Map<string, number>();
  let out = "";
  let at = 0;
  for (const m of text.matchAll(OPEN)) {
    const start = m.index;
    if (start < at) continue; // inside a region already reported as nested
    const id = m[1]!;
    const contentStart = start + m[0].length;
    const end = text.indexOf(CLOSE, contentStart);
    const nextOpen = text.slice(contentStart).search(/<!-- fig:/);
    if (end === -1 || (nextOpen !== -1 && contentStart + nextOpen < end)) {
      errors.push({ file, id, message: `${file}: <!-- fig:${id} --> has no closing ${CLOSE} before the next marker` });
      at = contentStart;
      continue;
    }
    seen.set(id, (seen.get(id) ?? 0) + 1);
    const committed = text.slice(contentStart, end);
    const fig = mine.get(id);
    out += text.slice(at, contentStart);
    if (fig === undefined) {
      errors.push({
        file,
        id,
        message: `${file}: <!-- fig:${id} --> is not a figure this script generates for ${file} (scripts/doc-figures.ts)`,
      });
      out += committed;
    } else if (fig.keep !== undefined) {
      out += committed; // its inputs are missing: left as committed, not stale (main() says why)
    } else {
      const lineStart = text.lastIndexOf("\n", start - 1) + 1;
      const indent = text.slice(lineStart, start);
      if (fig.block && !/^[ \t]*$/.test(indent))
        errors.push({ file, id, message: `${file}: the block marker <!-- fig:${id} --> must start its line` });
      const want = regionText(fig, fig.block ? indent : "");
      if (committed !== want) {
        const d = firstDifference(committed, want);
        const line = text.slice(0, contentStart).split("\n").length + d.line;
        stale.push({
          file,
          id,
          message: `${file}:${line}: figure <!-- fig:${id} --> differs from what the shipped KB produces now: committed ${JSON.stringify(d.committed)}, the run gives ${JSON.stringify(d.now)}`,
        });
      }
      out += want;
    }
    at = end;
  }
  out += text.slice(at);
  const regions = [...seen.values()].reduce((a, b) => a + b, 0);
  if (errors.length === 0 && text.split(CLOSE).length - 1 !== regions)
    errors.push({ file, message: `${file}: a ${CLOSE} closes no <!-- fig:ID --> marker` });
  for (const [id, n] of seen)
    if (n > 1) errors.push({ file, id, message: `${file}: <!-- fig:${id} --> occurs ${n} times (once only)` });
  for (const id of mine.keys())
    if (!seen.has(id))
      errors.push({ file, id, message: `${file}: the marker <!-- fig:${id} --> … ${CLOSE} is missing` });
  return { text: errors.length > 0 ? text : out, stale, errors };
}

/** Checks (or, with `write`, rewrites) the marked figures of every DOC_FILES file under `docsRoot`. */
export async function updateDocs(
  docsRoot: string,
  figures: readonly Figure[],
  opts: { write: boolean },
): Promise<{ stale: Problem[]; errors: Problem[]; written: string[] }> {
  const stale: Problem[] = [];
  const errors: Problem[] = [];
  const written: string[] = [];
  for (const file of DOC_FILES) {
    const full = path.join(docsRoot, file);
    const text = await readFile(full, "utf8");
    const r = applyFigures(file, text, figures);
    stale.push(...r.stale);
    errors.push(...r.errors);
    if (opts.write && r.errors.length === 0 && r.text !== text) {
      await writeFile(full, r.text);
      written.push(file);
    }
  }
  return { stale, errors, written };
}

// ---------------------------------------------------------------- command line

async function main(argv: string[]): Promise<number> {
  const check = argv.includes("--check");
  const reportAt = argv.indexOf("--report");
  const reportFile = reportAt === -1 ? undefined : argv[reportAt + 1];
  const modelAt = argv.indexOf("--model-report");
  const modelReportFile = modelAt === -1 ? undefined : argv[modelAt + 1];
  const known = new Set([
    "--check",
    "--report",
    "--model-report",
    ...(reportFile !== undefined ? [reportFile] : []),
    ...(modelReportFile !== undefined ? [modelReportFile] : []),
  ]);
  const unknown = argv.filter((a) => !known.has(a));
  if (
    unknown.length > 0 ||
    (reportAt !== -1 && reportFile === undefined) ||
    (modelAt !== -1 && modelReportFile === undefined)
  ) {
    process.stderr.write(
      `usage: tsx scripts/doc-figures.ts [--check] [--report REPORT.json] [--model-report MODEL-REPORT.json]\n`,
    );
    return 2;
  }
  if (reportFile === undefined)
    process.stderr.write("doc-figures: one run of the shipped KB (retrace start --out json:FILE) …\n");
  const facts = await collectFacts({
    ...(reportFile !== undefined ? { reportFile: path.resolve(reportFile) } : {}),
    ...(modelReportFile !== undefined ? { modelReportFile: path.resolve(modelReportFile) } : {}),
    stderr: (d) => process.stderr.write(d),
  });
  const figures = figuresOf(facts);
  const { stale, errors, written } = await updateDocs(ROOT, figures, { write: !check });
  for (const f of figures)
    if (f.keep !== undefined)
      process.stderr.write(`note: ${f.file} <!-- fig:${f.id} --> not regenerated, left as committed: ${f.keep}\n`);
  for (const p of errors) process.stderr.write(`error: ${p.message}\n`);
  if (errors.length > 0) return 1;
  if (check) {
    for (const p of stale) process.stderr.write(`stale: ${p.message}\n`);
    if (stale.length > 0) {
      process.stderr.write(
        `${plural(stale.length, "figure")} ${stale.length === 1 ? "differs" : "differ"} from the run; regenerate with \`npm run docs:figures\`\n`,
      );
      return 1;
    }
    process.stdout.write(`every figure in ${DOC_FILES.join(", ")} is what the shipped KB produces now\n`);
    return 0;
  }
  process.stdout.write(
    written.length === 0
      ? "every figure was already current\n"
      : `${plural(stale.length, "figure")} regenerated in ${written.join(", ")}\n`,
  );
  return 0;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  process.exitCode = await main(process.argv.slice(2));
}
