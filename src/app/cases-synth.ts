/**
 * Use-case: `retrace cases synth` (`synthCases`): deterministic multi-turn
 * known-item cases from a KB's cards (`kb`) or a BEIR corpus (`beir`, one
 * document = one card of one chunk, bare keyword queries), no model
 * (src/research/synthetic.ts, synthetic-cases.ts; docs/synthetic-cases.md).
 * Or, with `generator`, a user's module returns the turns of each card
 * (e.g. by calling their LLM); its cases are validated the same way.
 *
 * Every case written is checked as `retrace check` checks it (the case
 * schema; with a KB, gold ids resolving to cards of the case's locale):
 * anything else is an internal error, never a file written. Cards with no
 * usable chunk (fewer distinct terms than the query needs) are skipped and
 * counted.
 */
import { DataValidationError, InternalError, InvalidArgumentError, type DataIssue } from "../errors.js";
import { loadBeirCorpus } from "../research/beir.js";
import {
  DEFAULT_QUERY_SETTINGS,
  CorpusStats,
  STRATEGIES,
  generatorName,
  type Strategy,
  type SynthDoc,
} from "../research/synthetic.js";
import {
  beirDocs,
  cardSchedule,
  synthCase,
  usableChunks,
  type CaseSettings,
  type SynthCase,
} from "../research/synthetic-cases.js";
import { syntheticVerdict } from "../eval/measures/synthetic-reference.js";
import { loadKnowledgeBase } from "../kb/cards.js";
import { parseCaseLine, validateCases } from "../kb/cases.js";
import { chunkKnowledgeBase } from "../kb/chunk.js";
import { MAX_SYNTH_TURNS, isBlankText } from "../kb/schemas.js";
import type { EvalCase, KnowledgeBase } from "../kb/types.js";
import { userModulePath } from "../user-module.js";
import { isolationLimits } from "./graph-isolation.js";
import { hostModule } from "./module-isolation.js";
import { DEFAULT_ANALYZERS, loadKbAnalyzers, type Analyzers } from "../retrieval/analyzer.js";

export interface SynthOptions {
  kb?: string;
  beir?: string;
  seed?: number;
  /** Cases to write (default one per usable card). */
  n?: number;
  turns?: number;
  topicShift?: number;
  noise?: number;
  strategy?: string;
  /** A module path: its default export returns the turns of a card. */
  generator?: string;
  /** Deadline of each call of the `--generator` module, seconds (`run.callTimeout`; default DEFAULT_TURN_TIMEOUT_S = 120). */
  callTimeout?: number;
  maxCardBytes?: number;
}

export interface SynthOutcome {
  text: string;
  cases: SynthCase[];
  turns: number;
  generator: { name: string; version: string };
  /** Cards skipped, with why. */
  skipped: Array<{ card: string; reason: string }>;
  skippedReasons: string;
  /** What the generator's τ says these cases can judge. */
  verdict: string;
  /** Settings that could not take effect (a `--topic-shift` with nowhere to shift), for stderr. */
  notes: string[];
}

/** What a `--generator` module's default export receives for each card. */
export interface GeneratorCard {
  id: string;
  locale: string;
  title: string;
  chunks: Array<{ id: string; section: string; text: string }>;
}

/** What it may return: 1 to MAX_SYNTH_TURNS turns about the card (gold is the card). */
export interface GeneratorTurn {
  user: string;
  standalone?: string;
}

/** A `--generator` module. */
export interface GeneratorModule {
  default: (
    card: GeneratorCard,
    context: { seed: number; index: number; random: () => number },
  ) => GeneratorTurn[] | Promise<GeneratorTurn[]>;
  name?: string;
  version?: string;
}

/** The cards of a KB, each with its chunks in order. */
function kbDocs(kb: KnowledgeBase): SynthDoc[] {
  const chunks = chunkKnowledgeBase(kb);
  const byCard = new Map<string, SynthDoc["chunks"][number][]>();
  for (const c of chunks) {
    const list = byCard.get(c.parentId) ?? [];
    list.push({ id: c.id, section: c.section, text: c.text });
    byCard.set(c.parentId, list);
  }
  return [...kb.cards]
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map((card) => ({ card: card.id, locale: card.locale, title: card.title, chunks: byCard.get(card.id) ?? [] }));
}

function checkStrategy(s: string | undefined): Strategy {
  if (s === undefined) return DEFAULT_QUERY_SETTINGS.strategy;
  if (!(STRATEGIES as readonly string[]).includes(s))
    throw new InvalidArgumentError("--strategy", `one of ${STRATEGIES.join(", ")}`, s);
  return s as Strategy;
}

/**
 * A `--generator` module, loaded, built and called in a thread of its own
 * (src/app/module-isolation.ts): a module that throws while loading, exports
 * no function, throws on a card, ends, hangs or floods its thread is exit 2
 * naming --generator. Each card's call gets the card and its seed; its
 * `random` is the same stream (`rngFor`) built in that thread.
 */
async function loadGenerator(
  spec: string,
  callTimeout: number | undefined,
): Promise<{
  call: (card: GeneratorCard, seed: number, index: number) => Promise<unknown>;
  name: string;
  version: string;
  close: () => Promise<void>;
}> {
  userModulePath(spec, "--generator");
  const hosted = await hostModule(
    { kind: "generator", spec, cwd: process.cwd() },
    `--generator ${spec}`,
    isolationLimits(callTimeout !== undefined ? { turnTimeout: callTimeout } : {}),
    "run.callTimeout",
  );
  return {
    call: (card, seed, index) => hosted.call({ card, seed, index }, `its call on card ${card.id}`),
    name: hosted.info.name ?? "generator",
    version: hosted.info.version ?? "unversioned",
    close: () => hosted.close(),
  };
}

/** A user generator's turns checked: an array of 1..MAX_SYNTH_TURNS `{user, standalone?}` with non-blank strings. */
function checkTurns(value: unknown, where: string): GeneratorTurn[] {
  const bad = (why: string): never => {
    throw new DataValidationError([
      {
        file: where,
        message: `expected the generator to return 1 to ${MAX_SYNTH_TURNS} turns {user, standalone?}: ${why}`,
      },
    ]);
  };
  if (!Array.isArray(value)) return bad(`got ${typeof value}`);
  if (value.length < 1 || value.length > MAX_SYNTH_TURNS) bad(`got ${value.length} turns`);
  return value.map((t: unknown, i) => {
    if (typeof t !== "object" || t === null) return bad(`turn ${i} is ${JSON.stringify(t)}`);
    const { user, standalone, ...rest } = t as Record<string, unknown>;
    if (Object.keys(rest).length > 0) bad(`turn ${i} has unknown keys ${Object.keys(rest).join(", ")}`);
    if (typeof user !== "string" || isBlankText(user)) bad(`turn ${i}'s user is ${JSON.stringify(user)}`);
    if (standalone !== undefined && (typeof standalone !== "string" || isBlankText(standalone)))
      bad(`turn ${i}'s standalone is ${JSON.stringify(standalone)}`);
    return { user: user as string, ...(standalone !== undefined ? { standalone: standalone as string } : {}) };
  });
}

/** The cases, checked as `retrace check` would check them; a failure here is a bug (or a user generator's bad output, named). */
function validate(cases: readonly SynthCase[], kb: KnowledgeBase | null, where: string, userGenerator: boolean): void {
  const parsed: EvalCase[] = [];
  const issues: DataIssue[] = [];
  cases.forEach((c, i) => {
    const r = parseCaseLine(JSON.stringify(c), where, i + 1);
    issues.push(...r.issues);
    if (r.case) parsed.push(r.case);
  });
  if (kb !== null) issues.push(...validateCases(parsed, kb, where));
  if (issues.length === 0) return;
  if (userGenerator) throw new DataValidationError(issues);
  throw new InternalError(
    `synthetic cases failed their own check: ${issues
      .slice(0, 3)
      .map((x) => `line ${x.line} ${x.field ?? ""}: ${x.message}`)
      .join("; ")}`,
  );
}

export async function synthCases(o: SynthOptions): Promise<SynthOutcome> {
  if ((o.kb === undefined) === (o.beir === undefined))
    throw new InvalidArgumentError(
      "--kb / --beir",
      "exactly one of --kb DIR or --beir DIR",
      o.kb === undefined ? "neither" : "both",
    );
  const strategy = checkStrategy(o.strategy);
  const seed = o.seed ?? 42;
  const user = o.generator !== undefined ? await loadGenerator(o.generator, o.callTimeout) : null;
  let docs: SynthDoc[];
  let kb: KnowledgeBase | null = null;
  let analyzers: Analyzers = DEFAULT_ANALYZERS;
  if (o.kb !== undefined) {
    kb = await loadKnowledgeBase(o.kb, o.maxCardBytes !== undefined ? { maxCardBytes: o.maxCardBytes } : {});
    analyzers = loadKbAnalyzers(o.kb).analyzers;
    docs = kbDocs(kb);
  } else {
    docs = beirDocs((await loadBeirCorpus(o.beir as string)).corpus);
  }
  const settings: CaseSettings = {
    ...DEFAULT_QUERY_SETTINGS,
    strategy,
    noise: o.noise ?? 0,
    seed,
    turns: o.turns ?? 2,
    topicShift: o.topicShift ?? 0,
    templates: o.kb !== undefined,
  };
  const skipped: SynthOutcome["skipped"] = [];
  const cases: SynthCase[] = [];
  if (user !== null) {
    for (const [i, doc] of cardSchedule(docs, o.n, seed).entries()) {
      const card: GeneratorCard = {
        id: doc.card,
        locale: doc.locale,
        title: doc.title,
        chunks: doc.chunks.map((c) => ({ ...c })),
      };
      const given = await user.call(card, seed, i);
      const turns = checkTurns(given, `${o.generator} (card ${doc.card})`);
      cases.push({
        id: `syn-${seed}-${i + 1}`,
        locale: doc.locale,
        kind: "synthetic",
        origin: {
          generator: user.name,
          version: user.version,
          seed,
          card: doc.card,
          chunk: doc.chunks[0]?.id ?? doc.card,
          chunks: turns.map(() => doc.chunks[0]?.id ?? doc.card),
        },
        turns: turns.map((t) => ({
          user: t.user,
          ...(t.standalone !== undefined ? { standalone: t.standalone } : {}),
          must_cite_one_of: [doc.card],
          expect: "answer" as const,
        })),
      });
    }
    await user.close();
  } else {
    const stats = new CorpusStats(docs, analyzers);
    const usable = docs.filter((d) => {
      if (usableChunks(stats, d, settings.minTerms).length > 0) return true;
      skipped.push({ card: d.card, reason: `no chunk with ${settings.minTerms}+ distinct terms` });
      return false;
    });
    for (const [i, doc] of cardSchedule(usable, o.n, seed).entries()) {
      const c = synthCase(stats, doc, i, settings, usable);
      if (c !== null) cases.push(c);
      else skipped.push({ card: doc.card, reason: "no query could be drawn" });
    }
  }
  // A topic shift moves the last of 2+ turns to another card of the case's locale: say when that cannot happen.
  const notes: string[] = [];
  if (settings.topicShift > 0 && user !== null)
    notes.push("--topic-shift does nothing with --generator (your function writes every turn)");
  else if (settings.topicShift > 0 && settings.turns < 2)
    notes.push(
      `--topic-shift does nothing with --turns ${settings.turns}: the shift replaces the last of two or more turns`,
    );
  else if (settings.topicShift > 0) {
    const perLocale = new Map<string, number>();
    for (const d of docs) perLocale.set(d.locale, (perLocale.get(d.locale) ?? 0) + 1);
    const single = [...perLocale]
      .filter(([, n]) => n < 2)
      .map(([l]) => l)
      .sort();
    if (single.length > 0)
      notes.push(
        `--topic-shift cannot apply to ${single.length === perLocale.size ? "any case" : `the cases of ${single.join(", ")}`}: a shift moves to another card of the case's locale, and ${single.join(", ")} ${single.length === 1 ? "has" : "have"} one card`,
      );
  }
  const where = o.generator ?? "retrace cases synth";
  validate(cases, kb, where, user !== null);
  const generator =
    user !== null
      ? { name: user.name, version: user.version }
      : { name: generatorName(strategy), version: cases[0]?.origin.version ?? "1" };
  const reasons = new Map<string, number>();
  for (const s of skipped) reasons.set(s.reason, (reasons.get(s.reason) ?? 0) + 1);
  return {
    text: cases.map((c) => `${JSON.stringify(c)}\n`).join(""),
    cases,
    turns: cases.reduce((n, c) => n + c.turns.length, 0),
    generator,
    skipped,
    skippedReasons: [...reasons].map(([r, n]) => `${n} ${r}`).join(", "),
    verdict: syntheticVerdict(generator.name, generator.version),
    notes,
  };
}
