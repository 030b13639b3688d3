/**
 * Use-case: `retrace label CASES --out html:label.html` (docs/labelling.md): the
 * labelling page of a cases file. For each turn of the selected cases, the
 * pool — the union of the top `depth` cards of the systems named by `pool`:
 * retrace's own graph in `bm25`, `dense` and `hybrid` mode (the store and
 * embedder an eval uses, `openEvalSystem`), and `graph`, the user's graph
 * (`--graph`) with its scored retriever call captured — each card with its
 * best-matching passage (a chunk of the KB, or the page content of a
 * captured document), the query's terms marked, and which systems ranked it
 * where; with `judge`, a suggested grade per pooled card. Every system's
 * lists come from the source registry (./sources/registry.ts `sourceTurns`),
 * the sweeps `eval` and `trace` run.
 *
 * `planLabel` checks everything that can be checked before a store or a
 * graph starts (options, data, case selection, the judge module).
 */
import { checkGivenSettings } from "./settings/read.js";
import { InvalidArgumentError } from "../errors.js";
import {
  bestPassage,
  DEFAULT_DEPTH,
  DEFAULT_POOL,
  markTerms,
  poolHash,
  poolOf,
  POOL_SYSTEMS,
  queryTerms,
  termStats,
  type LabelCase,
  type LabelPageData,
  type PoolSystem,
  type TermOf,
  type TermStats,
} from "../eval/label/pool.js";
import { loadCases } from "../kb/cases.js";
import { loadCatalog } from "../kb/catalog.js";
import { readTextFileOrThrow } from "../kb/text.js";
import type { EvalCase, KnowledgeBase, Locale } from "../kb/types.js";
import { DEFAULT_ANALYZERS, loadKbAnalyzers, type Analyzers } from "../retrieval/analyzer.js";
import type { RetrievalMode } from "../retrieval/types.js";
import { loadData, resolveStoreChoice } from "../system.js";
import { checkLocaleOptions, selectRunCases } from "./data.js";
import { EVAL_DEFAULTS } from "./eval-plan.js";
import type { ExternalGraphOptions } from "./graph-eval.js";
import { sourceTurns } from "./sources/registry.js";
import { isolationLimits } from "./graph-isolation.js";
import { openRelevanceJudge, type RelevanceJudge } from "./label-judge.js";

export interface LabelOptions extends Pick<
  ExternalGraphOptions,
  "graph" | "input" | "idKey" | "idMap" | "retrievalCall" | "configurable" | "turnTimeout" | "catalog" | "maxCardBytes"
> {
  /** The cases file to label (e.g. `retrace cases import`'s output). */
  cases: string;
  /** Recorded traces (a file or folder, as `eval --traces`): their retrieval is the pool's `recorded` system. */
  traces?: string;
  /** The KB folder (default `kb`); not with `catalog`. */
  kb?: string;
  /** The systems pooled (default DEFAULT_POOL: bm25, dense, hybrid); `graph` needs `graph`. */
  pool?: readonly string[];
  /** Cards taken from each system's list (default DEFAULT_DEPTH). */
  depth?: number;
  /** A judge module (the `eval --judge` interface): a suggested grade per pooled card. */
  judge?: string;
  case?: string[];
  locale?: string[];
  /** retrace's own graph: the store, embedder, Chroma data folder and request deadline (as `retrace eval`). */
  store?: string;
  embedder?: string;
  dataDir?: string;
  timeout?: number;
  /** Cases in flight of the graph sweep (default EVAL_DEFAULTS.concurrency). */
  concurrency?: number;
  /** The name the page's export downloads as (default `<cases file name>.labelled.jsonl`). */
  exportName?: string;
}

/** What `planLabel` read and checked. */
export interface LabelPlan {
  options: LabelOptions;
  systems: PoolSystem[];
  depth: number;
  kb: KnowledgeBase;
  /** Chunks of the KB by card id (none with a catalog). */
  chunkTexts: Map<string, string[]>;
  cases: EvalCase[];
  /** The selected cases' lines as parsed JSON, by case id (what the export writes back). */
  originals: Map<string, Record<string, unknown>>;
  judge: RelevanceJudge | null;
  /** The KB's analyzers (`<kb>/analyzers.json`; the defaults with a catalog): which query words are stop words. */
  analyzers: Analyzers;
}

const isPoolSystem = (s: string): s is PoolSystem => (POOL_SYSTEMS as readonly string[]).includes(s);
const OWN_MODES: readonly RetrievalMode[] = ["bm25", "dense", "hybrid"];

/** The pooled systems, checked (known names, no repeats, `graph` iff `--graph`, a catalog only with the graph alone). */
export function poolSystems(o: Pick<LabelOptions, "pool" | "graph" | "catalog" | "traces">): PoolSystem[] {
  const given = o.pool ?? DEFAULT_POOL;
  if (given.length === 0)
    throw new InvalidArgumentError("--pool", `a comma-separated list of ${POOL_SYSTEMS.join(", ")}`, given.join(","));
  const out: PoolSystem[] = [];
  for (const s of given) {
    if (!isPoolSystem(s))
      throw new InvalidArgumentError("--pool", `a comma-separated list of ${POOL_SYSTEMS.join(", ")}`, given.join(","));
    if (out.includes(s)) throw new InvalidArgumentError("--pool", "each system once", given.join(","));
    out.push(s);
  }
  if (out.includes("graph") && o.graph === undefined)
    throw new InvalidArgumentError(
      "--pool",
      "graph only with --graph FILE[#export] (the graph whose retrieved lists are pooled)",
      given.join(","),
    );
  if (!out.includes("graph") && o.graph !== undefined)
    throw new InvalidArgumentError(
      "--graph",
      "graph in --pool too (e.g. --pool bm25,dense,hybrid,graph): the graph is run only to pool its lists",
      o.graph,
    );
  if (out.includes("recorded") && o.traces === undefined)
    throw new InvalidArgumentError(
      "--pool",
      "recorded only with --traces PATH (the recorded traces whose retrieved lists are pooled)",
      given.join(","),
    );
  if (!out.includes("recorded") && o.traces !== undefined)
    throw new InvalidArgumentError(
      "--traces",
      "recorded in --pool too (e.g. --pool bm25,dense,hybrid,recorded): the traces are read only to pool their lists",
      o.traces,
    );
  if (o.catalog !== undefined && out.some((s) => s !== "graph" && s !== "recorded"))
    throw new InvalidArgumentError(
      "--pool",
      "graph or recorded alone with --catalog (bm25, dense and hybrid retrieve over a KB's cards; a catalog lists ids without texts)",
      given.join(","),
    );
  return out;
}

/** Reads and checks everything before a store or graph starts. */
export async function planLabel(o: LabelOptions): Promise<LabelPlan> {
  checkGivenSettings("label", o, "planLabel options"); // as the CLI checks them (src/app/settings/read.ts)
  const systems = poolSystems(o);
  const depth = o.depth ?? DEFAULT_DEPTH;
  if (!Number.isInteger(depth) || depth < 1) throw new InvalidArgumentError("--depth", "a positive integer", depth);
  checkLocaleOptions(o.locale);
  if (
    systems.some((s) => s !== "graph" && s !== "recorded") &&
    resolveStoreChoice(o.store ?? EVAL_DEFAULTS.store).kind === "none"
  )
    throw new InvalidArgumentError(
      "--store",
      "a store that retrieves (not none): the pool is what the systems retrieve",
      o.store,
    );
  let kb: KnowledgeBase;
  let cases: EvalCase[];
  const chunkTexts = new Map<string, string[]>();
  if (o.catalog !== undefined) {
    if (o.kb !== undefined)
      throw new InvalidArgumentError("--kb / --catalog", "one of them, not both", `${o.kb} / ${o.catalog}`);
    kb = await loadCatalog(o.catalog);
    cases = await loadCases(o.cases, kb);
  } else {
    const data = await loadData(
      o.kb ?? "kb",
      o.cases,
      o.maxCardBytes !== undefined ? { maxCardBytes: o.maxCardBytes } : {},
    );
    kb = data.kb;
    cases = data.cases;
    for (const ch of data.chunks) {
      const list = chunkTexts.get(ch.parentId) ?? [];
      list.push(ch.text);
      chunkTexts.set(ch.parentId, list);
    }
  }
  const selected = selectRunCases(cases, o);
  const lines = (await readTextFileOrThrow(o.cases)).split("\n");
  const originals = new Map(selected.map((c) => [c.id, JSON.parse(lines[c.line - 1]!) as Record<string, unknown>]));
  const judge = o.judge !== undefined ? await openRelevanceJudge(o.judge, isolationLimits(o)) : null;
  const analyzers = o.catalog !== undefined ? DEFAULT_ANALYZERS : loadKbAnalyzers(o.kb ?? "kb").analyzers;
  return { options: o, systems, depth, kb, chunkTexts, cases: selected, originals, judge, analyzers };
}

/** What each system retrieved for one turn, and the texts a graph returned. */
interface TurnLists {
  /** The query each system searched with. */
  queries: Partial<Record<PoolSystem, string>>;
  lists: Partial<Record<PoolSystem, string[]>>;
  texts: Map<string, string[]>;
}

const turnKey = (caseId: string, turn: number) => `${caseId}#${turn}`;

/** Runs retrace's own graph in each of `modes` over the cases (k = depth), through the source registry, and records each turn's list and query. */
async function ownLists(plan: LabelPlan, modes: readonly RetrievalMode[], into: Map<string, TurnLists>): Promise<void> {
  const o = plan.options;
  // The store, embedder and data folder of an eval (`openEvalSystem`); a store that retrieves was checked by planLabel.
  const own = {
    kb: o.kb ?? "kb",
    cases: o.cases,
    ...(o.store !== undefined ? { store: o.store } : {}),
    ...(o.embedder !== undefined ? { embedder: o.embedder } : {}),
    ...(o.dataDir !== undefined ? { dataDir: o.dataDir } : {}),
    ...(o.timeout !== undefined ? { timeout: o.timeout } : {}),
    ...(o.maxCardBytes !== undefined ? { maxCardBytes: o.maxCardBytes } : {}),
  };
  const lists = await sourceTurns(own, {
    cases: plan.cases,
    kb: plan.kb,
    k: plan.depth,
    evaluators: [],
    concurrency: 1,
    modes,
  });
  modes.forEach((mode, i) => {
    for (const { report, retrieval } of lists[i]!) {
      const trace = retrieval?.trace;
      const entry = into.get(turnKey(report.caseId, report.turn))!;
      entry.lists[mode] = trace?.retrievedIds ?? [];
      if (trace?.query !== undefined) entry.queries[mode] = trace.query;
    }
  });
}

/** Runs the user's graph over the cases (k = depth), or reads the recorded traces, through the source registry, and records each turn's scored list, query and documents' texts under `system`. */
async function graphLists(plan: LabelPlan, system: "graph" | "recorded", into: Map<string, TurnLists>): Promise<void> {
  const { traces, graph, ...o } = plan.options;
  // The pool system names its source: `graph` the graph module (--graph), `recorded` the recording (--traces).
  const options = system === "graph" ? { ...o, graph: graph! } : { ...o, traces: traces! };
  const [turns] = await sourceTurns(options, {
    cases: plan.cases,
    kb: plan.kb,
    k: plan.depth,
    // A recording is read for its lists alone; a graph's turns are scored as its eval scores them (not shown).
    ...(system === "recorded" ? { evaluators: [] } : {}),
    concurrency: o.concurrency ?? EVAL_DEFAULTS.concurrency,
  });
  for (const t of turns!) {
    const entry = into.get(turnKey(t.report.caseId, t.report.turn))!;
    entry.lists[system] = (t.retrieval?.retrievedIds ?? []).slice(0, plan.depth);
    if (t.retrieval !== null) entry.queries[system] = t.retrieval.query;
    for (const [id, texts] of Object.entries(t.retrieval?.texts ?? {})) {
      const list = entry.texts.get(id) ?? [];
      for (const x of texts) if (!list.includes(x)) list.push(x);
      entry.texts.set(id, list);
    }
  }
}

/** A locale's term function: the analysed term of a word with the KB's analyzer, null for a stop word (memoized by the analyzer). */
function termOfLocale(analyzers: Analyzers, locale: Locale): TermOf {
  const analyzer = analyzers.analyzerFor(locale);
  return (w) => analyzer.analyze(w)[0] ?? null;
}

/**
 * The document frequencies of one locale's cards, for the IDF floor of the
 * marked terms (docs/labelling.md): every card of the KB in that locale with
 * its chunks' texts, and every card a graph returned with its captured texts
 * (with a catalog, these are all the texts known).
 */
function localeStats(
  plan: LabelPlan,
  locale: Locale,
  lists: ReadonlyMap<string, TurnLists>,
  termOf: TermOf,
): TermStats {
  const texts = new Map<string, string[]>();
  for (const [id, chunks] of plan.chunkTexts) if (plan.kb.byId.get(id)?.locale === locale) texts.set(id, [...chunks]);
  for (const c of plan.cases) {
    if (c.locale !== locale) continue;
    c.turns.forEach((_, i) => {
      for (const [id, captured] of lists.get(turnKey(c.id, i))!.texts) {
        const list = texts.get(id) ?? [];
        for (const x of captured) if (!list.includes(x)) list.push(x);
        texts.set(id, list);
      }
    });
  }
  return termStats(texts.values(), termOf);
}

/** The labelling page's data: pools, passages, suggestions. */
export async function buildLabelData(plan: LabelPlan): Promise<LabelPageData> {
  const o = plan.options;
  const lists = new Map<string, TurnLists>();
  for (const c of plan.cases)
    c.turns.forEach((_, i) => lists.set(turnKey(c.id, i), { queries: {}, lists: {}, texts: new Map() }));
  const modes = OWN_MODES.filter((m) => plan.systems.includes(m));
  if (modes.length > 0) await ownLists(plan, modes, lists);
  if (plan.systems.includes("graph")) await graphLists(plan, "graph", lists);
  if (plan.systems.includes("recorded")) await graphLists(plan, "recorded", lists);
  const byLocale = new Map<Locale, { termOf: TermOf; stats: TermStats }>();
  const cases: LabelCase[] = [];
  for (const c of plan.cases) {
    let lang = byLocale.get(c.locale);
    if (lang === undefined) {
      const termOf = termOfLocale(plan.analyzers, c.locale);
      lang = { termOf, stats: localeStats(plan, c.locale, lists, termOf) };
      byLocale.set(c.locale, lang);
    }
    const { termOf, stats } = lang;
    const turns = [];
    for (const [i, t] of c.turns.entries()) {
      const entry = lists.get(turnKey(c.id, i))!;
      const searched = [
        ...new Set(plan.systems.flatMap((s) => (entry.queries[s] !== undefined ? [entry.queries[s]] : []))),
      ];
      const terms = queryTerms(searched.length > 0 ? searched : [t.user], termOf, stats);
      const pool = [];
      for (const p of poolOf(entry.lists, plan.systems, plan.depth)) {
        const texts = [...(plan.chunkTexts.get(p.id) ?? []), ...(entry.texts.get(p.id) ?? [])];
        const text = bestPassage(texts, terms, termOf) ?? "";
        const title = plan.kb.byId.get(p.id)?.title ?? p.id;
        const suggested =
          plan.judge !== null
            ? await plan.judge.grade(
                c.turns.slice(0, i).map((x) => x.user),
                t.user,
                title,
                text,
              )
            : null;
        pool.push({
          id: p.id,
          title,
          ranks: p.ranks,
          passage: markTerms(text, terms, termOf),
          ...(suggested !== null ? { suggested } : {}),
        });
      }
      const context = (t.context ?? []).map((m) => m.content);
      turns.push({ user: t.user, ...(context.length > 0 ? { context } : {}), queries: entry.queries, pool });
    }
    cases.push({ id: c.id, locale: c.locale, kind: c.kind, original: plan.originals.get(c.id)!, turns });
  }
  const base = o.cases.split(/[\\/]/).pop() ?? "cases.jsonl";
  return {
    kind: "label",
    title: `${base} (${cases.length} case${cases.length === 1 ? "" : "s"})`,
    poolHash: poolHash(cases, plan.systems, plan.depth),
    systems: plan.systems,
    depth: plan.depth,
    judge: plan.judge?.name ?? null,
    exportName: o.exportName ?? `${base.replace(/\.jsonl$/, "")}.labelled.jsonl`,
    cases,
  };
}
