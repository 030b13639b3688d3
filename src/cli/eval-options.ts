/**
 * The options of the commands that run an eval or a trace: what a run
 * retrieves with (`eval`, `start`, `trace`), what the sweep selects, gates on
 * and writes (`eval`, `start`), and the `--graph` and `--traces` options.
 * Which of them each source uses is the use-cases' to say
 * (each source's module in src/app/sources/). Their defaults are the use-cases' (EVAL_DEFAULTS,
 * src/app/eval-plan.ts).
 */
import { InvalidArgumentError as CommanderArgumentError, Option, type Command } from "commander";
import { InvalidArgumentError } from "../errors.js";
import { EVAL_DEFAULTS, MAX_REPEAT } from "../app/eval-defaults.js";
import { RETRIEVAL_CALLS } from "../eval/sweep/capture.js";
import { recordingsSourceHelp, TRACE_FORMATS } from "../eval/traces/formats/registry.js";
import { FLOOR_OPTIONS } from "../eval/gate/gate.js";
import { parseFloors } from "./floor-options.js";
import { countOption, positiveIntOption, probabilityOption } from "./options.js";
import { addConfigOption } from "./settings.js";
import { addOutOption } from "./out-formats.js";
import { parseShardOption } from "./shard.js";

const collect = (v: string, prev: string[] | undefined) => [...(prev ?? []), v];

/** `STAGE=VALUE`, repeatable, into `{ stage: value }`; the value in [0, 1]. Which stages exist is checked against the run (exit 2 listing them). */
function stageOption(flag: string) {
  return (v: string, prev: Record<string, number> | undefined): Record<string, number> => {
    const m = /^([a-z0-9_-]+)=(.+)$/i.exec(v.trim());
    const x = m === null ? NaN : Number(m[2]);
    if (m === null || !Number.isFinite(x) || x < 0 || x > 1)
      throw new CommanderArgumentError(
        new InvalidArgumentError(flag, "STAGE=VALUE with VALUE between 0 and 1 (e.g. fused=0.9)", v).message,
      );
    return { ...(prev ?? {}), [m[1] as string]: x };
  };
}

/** `on` / `off` (also `true` / `false`; `auto`: unset) for an option with an optional value (`--github [when]`); given alone it is on. */
export function onOffOption(flag: string): (v: string) => boolean | undefined {
  return (v: string) => {
    const w = v.trim().toLowerCase();
    if (w === "on" || w === "true") return true;
    if (w === "off" || w === "false") return false;
    if (w === "auto") return undefined;
    throw new CommanderArgumentError(new InvalidArgumentError(flag, "on, off or auto (or nothing: on)", v).message);
  };
}

/** The checks of `--gate NAME=VALUE`: each was an option of its own (`--min-hit 0.9` is `--gate min-hit=0.9`); VALUE is that option's value. */
export const GATE_CHECKS: readonly { name: string; flag: string }[] = [
  ...FLOOR_OPTIONS.map(({ flag }) => ({ name: flag.slice(2), flag })),
  ...[
    "min-stage",
    "max-drop",
    "max-flips",
    "max-stage-drop",
    "max-errors",
    "max-no-retrieval",
    "max-flaky",
    "max-unjudged",
  ].map((name) => ({ name, flag: `--${name}` })),
];

/**
 * The preAction hook of `--gate`: each value is set on the option it
 * replaces (as if typed, source `cli`), through that option's own parser, so
 * every check downstream (ranges, scopes, the mode rules) is the one the old
 * spelling had. (`--out` is parsed by the output registry's own hook,
 * src/cli/out-formats.ts.)
 */
export function applyOutputHooks(cmd: Command): Command {
  return cmd.hook("preAction", (_self, actionCmd) => {
    const gates = actionCmd.getOptionValue("gate") as string[] | undefined;
    for (const item of gates ?? []) {
      const eq = item.indexOf("=");
      const name = eq < 0 ? item : item.slice(0, eq);
      const known = gateChecksOf.get(actionCmd) ?? [];
      if (eq < 0 || !known.includes(name)) {
        actionCmd.error(
          `error: --gate ${JSON.stringify(item)}: expected NAME=VALUE with NAME one of ${known.join(", ")} (e.g. --gate min-hit=0.9)`,
          { exitCode: 2, code: "retrace.badGate" },
        );
      }
      // The attribute the check's old option had (`--min-hit` → minHit), which the use-cases read.
      const attr = name.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());
      let value: unknown = item.slice(eq + 1);
      try {
        value = GATE_PARSERS[name]!(item.slice(eq + 1), actionCmd.getOptionValue(attr) as never);
      } catch (e) {
        // A parser's error thrown in a hook is not printed by commander: say it, exit 2, as for any bad option value.
        actionCmd.error(`error: --gate ${JSON.stringify(item)}: ${(e as Error).message}`, {
          exitCode: 2,
          code: "commander.invalidArgument",
        });
      }
      actionCmd.setOptionValueWithSource(attr, value, "cli");
    }
    actionCmd.setOptionValueWithSource("gate", undefined, "cli");
    // As typed, for the "Next:" lines (src/cli/next-steps.ts): a followed line gates as this run did.
    if (gates !== undefined) actionCmd.setOptionValueWithSource("gatesTyped", [...gates], "cli");
  });
}

/** The options shared by `eval` and `start`: what to retrieve with (as `trace`) plus what the sweep and its gate do. */
export function addEvalOptions(cmd: Command): Command {
  return addSweepOptions(addRetrievalOptions(cmd));
}

/** What a run retrieves with: data, store and the settings file (eval, start and trace); the retrieval settings are keys of `--config`. */
export function addRetrievalOptions(cmd: Command): Command {
  cmd
    .option(
      "--store <auto|local|url|memory|none>",
      "auto: CHROMA_URL if set, else local; local: a Chroma started (and stopped) by retrace; a Chroma URL; memory: exact in-process dense index; none: store-less (retrieval not measured)",
      EVAL_DEFAULTS.store,
    )
    .option("--data-dir <dir>", "data folder of the local Chroma (default .retrace/chroma)")
    .option("--kb <dir>", "knowledge-base folder", "kb")
    .option("--cases <file>", "eval cases JSONL (default <kb>/eval/cases.jsonl)")
    .option("-k, --k <n>", "retrieval top-k: cards scored per turn", positiveIntOption("-k"), EVAL_DEFAULTS.k);
  return addConfigOption(cmd, { retrieval: true, projectOutputs: true });
}

/** The help of `--gate` for the checks `names`. */
function gateHelp(names: readonly string[]): string {
  return `a gate check, repeatable (all off by default): ${names.join(", ")}; floors take X or SCOPE=X,... (scopes all, golden, adversarial, tune, holdout or a locale), stage checks STAGE=X, max-drop X or auto (the default tolerance); a gate checks exactly the checks named; docs/gates-and-exit-codes.md`;
}

/** Each check's parser; its message names the check as the user types it (`--gate max-drop`). */
const g = (name: string) => `--gate ${name}`;
const GATE_PARSERS: Readonly<Record<string, (v: string, prev: never) => unknown>> = {
  ...Object.fromEntries(FLOOR_OPTIONS.map(({ flag }) => [flag.slice(2), parseFloors(g(flag.slice(2)))])),
  "min-stage": stageOption(g("min-stage")),
  "max-stage-drop": stageOption(g("max-stage-drop")),
  // A number in [0, 1], or `auto`: the default tolerance (docs/gates-and-exit-codes.md).
  "max-drop": (v: string) => (v.trim() === "auto" ? "auto" : probabilityOption(g("max-drop"))(v)),
  "max-flips": countOption(g("max-flips")),
  "max-errors": countOption(g("max-errors")),
  "max-no-retrieval": countOption(g("max-no-retrieval")),
  "max-flaky": countOption(g("max-flaky")),
  "max-unjudged": probabilityOption(g("max-unjudged")),
};

/** The checks each command's `--gate` takes (addGateOption). */
const gateChecksOf = new WeakMap<Command, readonly string[]>();

/** `--gate NAME=VALUE` for the checks `names` (GATE_CHECKS); each check's old option is a retired spelling (old-spellings.ts). */
export function addGateOption(cmd: Command, names: readonly string[]): Command {
  gateChecksOf.set(cmd, names);
  return cmd.option("--gate <check=value>", gateHelp(names), collect);
}

/**
 * `--json`, `--out FORMAT:FILE` (the report formats of the output registry,
 * src/cli/out-formats.ts; with `traces`, the write-back formats too) and
 * `--github [when]` (eval, start, merge), the old output options hidden.
 */
export function addOutputOptions(cmd: Command, what = "the report", { traces = false } = {}): Command {
  cmd.option("--json", `print ${what} as JSON (with a version field) instead of the table`);
  addOutOption(cmd, "report", `also ${what}`, traces ? ["--traces"] : []);
  cmd.option(
    "--github [when]",
    "GitHub output (on, off; default: on when GITHUB_ACTIONS=true): the markdown report appended to $GITHUB_STEP_SUMMARY and ::error annotations at the cases' lines (docs/ci.md)",
    onOffOption("--github"),
  );
  return cmd;
}

/** Every check `eval` and `start` gate on. */
export const EVAL_GATES = GATE_CHECKS.map((g) => g.name);

/** What the sweep selects, gates on and writes (eval and start; not trace). */
export function addSweepOptions(cmd: Command): Command {
  cmd
    .option("--case <id>", "only this case (repeatable)", collect)
    .option("--locale <locale>", "only cases of this locale (repeatable)", collect);
  addGateOption(cmd, EVAL_GATES)
    .option(
      "--baseline <file>",
      "the baseline file the baseline checks (--gate max-drop, max-flips, max-stage-drop) compare with, default <kb>/eval/baseline.json; it adds or removes no check; --update-baseline writes it there",
    )
    .option("--update-baseline", "write the baseline from this run (to --baseline, default <kb>/eval/baseline.json)")
    .option(
      "--quarantine <file>",
      "turns the gate leaves out, `caseId#turn reason` a line: they stay in the report (docs/ci.md)",
    );
  addOutputOptions(cmd, "the report", { traces: true })
    .option(
      "--repeat <n>",
      `run every case n times (at most ${MAX_REPEAT}), each on fresh threads; the report gives per-turn hit rates over the repeats, flaky turns, two-stage intervals and variance shares, and the baseline gate tests intervals (docs/ci.md); retrace's own graph is deterministic: its report says once that the repeats were identical`,
      positiveIntOption("--repeat"),
      1,
    )
    .option(
      "--shard <i/n>",
      "run only shard i of n of the selected cases (whole cases, balanced by turns) and write a partial, ungated report for `retrace merge` (docs/reliability.md)",
      parseShardOption,
    )
    .option(
      "--counterfactual [when]",
      "query attribution (on, off; default: on for retrace's own graph, off with --graph): also retrieve each gold-bearing turn with its raw message and standalone question (extra retriever calls, counted; with --graph the retriever must be side-effect free; not with --repeat; docs/query-attribution.md)",
      onOffOption("--counterfactual"),
    );
  return applyOutputHooks(cmd);
}

/** `eval --traces PATH`: score recorded traces (docs/recorded-traces.md); the options it adds to `eval` (its write-back files are `--out phoenix:` / `--out langsmith:`). */
export function addTracesOptions(cmd: Command): Command {
  cmd
    .option(
      "--traces <path>",
      `score recorded traces instead of running a graph: ${recordingsSourceHelp()}, a file or a folder of them; conversations join cases by id (docs/recorded-traces.md)`,
    )
    .addOption(
      new Option(
        "--traces-format <format>",
        "with --traces: the format of the files (default: detected per record)",
      ).choices([...TRACE_FORMATS]),
    );
  return cmd;
}

/** The `--graph` options (added to `eval` and, without the gate's max-errors/max-no-retrieval checks, to `trace`); `eval` has its own `--counterfactual [when]`. */
export function addGraphOptions(cmd: Command, { gate = true }: { gate?: boolean } = {}): Command {
  cmd
    .option(
      "--graph <file[#export]>",
      "evaluate your own LangGraph graph: a .ts/.mts/.js/.mjs module exporting a compiled graph or a factory (default export name: graph)",
    )
    .option(
      "--input <module[#export]>",
      "with --graph: a module whose function (turn, case) => input builds each turn's graph input (default: a human message on the messages channel)",
    )
    .option(
      "--id-key <field>",
      "with --graph: metadata field holding the card id (default: parentId, doc_id, id, source, then Document.id)",
    )
    .option(
      "--id-map <module[#export]>",
      "with --graph: a module whose function (document) => id maps a retrieved document to a card id",
    )
    .addOption(
      new Option(
        "--retrieval-call <which>",
        "with --graph: which retriever calls of a turn are scored: last = the last step (all calls overlapping in time), first = the first step, all = every call",
      )
        .choices([...RETRIEVAL_CALLS])
        .default("last"),
    )
    .option(
      "--catalog <file>",
      "with --graph: id<TAB>locale a line, standing in for --kb when your documents live in your own store",
    );
  if (!gate)
    cmd.option(
      "--counterfactual [when]",
      "with --graph: query attribution (on, off; default off) — after each gold-bearing turn, invoke the scored retriever again with the raw message and the standalone question (extra retriever calls; the retriever must be side-effect free; docs/query-attribution.md)",
      onOffOption("--counterfactual"),
    );
  return cmd;
}
