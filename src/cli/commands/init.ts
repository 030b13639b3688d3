/**
 * `retrace init`: writes the project file (src/cli/project.ts,
 * docs/configuration.md "The project file") from the flags of a run, so that
 * afterwards `npx retrace eval`, `trace CASE` and `eval --update-baseline`
 * need none:
 *
 *     retrace init --graph ./agent.ts --kb helpcentre --id-key articleId
 *
 * The `--config` values (files or inline JSON) become its `retrieval`,
 * `locales` and `run` sections; `--gate` and `--out` its `gates` and
 * `outputs`. The file is checked against the project schema before it is
 * written; an existing one is kept (exit 2) unless `--force`.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import type { Command } from "commander";
import { DataValidationError, InvalidArgumentError } from "../../errors.js";
import { parseJsonOrThrow } from "../../kb/json.js";
import { readTextFileOrThrow } from "../../kb/text.js";
import { log } from "../../log.js";
import { checkOutputs, writeOutputs } from "../../output-set.js";
import { action } from "../io.js";
import { positiveIntOption } from "../options.js";
import { OutFormatError, parseOut } from "../out-formats.js";
import { PROJECT_FILE, PROJECT_SCHEMA, type ProjectSettings } from "../project.js";

const collect = (v: string, prev: string[] | undefined) => [...(prev ?? []), v];

interface InitOptions {
  graph?: string;
  traces?: string;
  kb?: string;
  catalog?: string;
  cases?: string;
  idKey?: string;
  idMap?: string;
  input?: string;
  store?: string;
  k?: number;
  baseline?: string;
  gate?: string[];
  out?: string[];
  config?: string[];
  force?: boolean;
}

type Json = Record<string, unknown>;
const isObject = (x: unknown): x is Json => typeof x === "object" && x !== null && !Array.isArray(x);

async function initCommand(o: InitOptions): Promise<number> {
  const file = PROJECT_FILE;
  if (existsSync(file) && o.force !== true)
    throw new InvalidArgumentError(
      file,
      "a new file (it exists: edit it, or rewrite it with --force)",
      path.resolve(file),
    );
  const sections: Json = {};
  for (const value of o.config ?? []) {
    const inline = value.trimStart().startsWith("{");
    const raw = parseJsonOrThrow(inline ? value : await readTextFileOrThrow(value), {
      file: inline ? "--config" : value,
      expected: "a retrace config JSON object (docs/configuration.md)",
    });
    if (!isObject(raw)) throw new InvalidArgumentError("--config", "a JSON object of settings", value);
    for (const key of ["retrieval", "locales", "run"])
      if (isObject(raw[key])) sections[key] = { ...(sections[key] as Json | undefined), ...raw[key] };
  }
  for (const value of o.out ?? [])
    try {
      parseOut(value, "report", "eval", o.traces !== undefined ? ["--traces"] : []);
    } catch (e) {
      if (e instanceof OutFormatError) throw new InvalidArgumentError("--out", "FORMAT:FILE of retrace eval", value);
      throw e;
    }
  const settings: ProjectSettings = {
    version: 1,
    ...(o.graph !== undefined ? { graph: o.graph } : {}),
    ...(o.traces !== undefined ? { traces: o.traces } : {}),
    ...(o.kb !== undefined ? { kb: o.kb } : {}),
    ...(o.catalog !== undefined ? { catalog: o.catalog } : {}),
    ...(o.cases !== undefined ? { cases: o.cases } : {}),
    ...(o.idKey !== undefined ? { idKey: o.idKey } : {}),
    ...(o.idMap !== undefined ? { idMap: o.idMap } : {}),
    ...(o.input !== undefined ? { input: o.input } : {}),
    ...(o.store !== undefined ? { store: o.store } : {}),
    ...(o.k !== undefined ? { k: o.k } : {}),
    ...(o.baseline !== undefined ? { baseline: o.baseline } : {}),
    ...(o.gate !== undefined ? { gates: o.gate } : {}),
    ...(o.out !== undefined ? { outputs: o.out } : {}),
    ...sections,
  };
  const parsed = PROJECT_SCHEMA.safeParse(settings); // the same schema the file is read with
  if (!parsed.success)
    throw new DataValidationError(
      parsed.error.issues.map((i) => ({
        file: "retrace init",
        field: [...i.path, ...(i.code === "unrecognized_keys" ? [i.keys.join(", ")] : [])].join(".") || "(root)",
        message: i.code === "unrecognized_keys" ? "unknown key (docs/configuration.md)" : i.message,
      })),
    );
  const checked = parsed.data;
  await checkOutputs([{ option: "retrace init", path: file }]);
  await writeOutputs([{ option: "retrace init", path: file, data: `${JSON.stringify(checked, null, 2)}\n` }]);
  log.info(`wrote ${file}: ${Object.keys(checked).length - 1} settings`);
  log.info("Next: npx retrace eval   (every command run in this folder or below reads it; a flag typed wins)");
  return 0;
}

export function register(program: Command): void {
  program
    .command("init")
    .description(
      "Write the project file (retrace.config.json) from the flags of a run, so that eval, trace and label need none there",
    )
    .option("--graph <file[#export]>", "your LangGraph graph module")
    .option("--traces <path>", "recorded traces (instead of --graph)")
    .option("--kb <dir>", "knowledge-base folder")
    .option("--catalog <file>", "id<TAB>locale a line, standing in for --kb")
    .option("--cases <file>", "eval cases JSONL")
    .option("--id-key <field>", "metadata field holding the card id")
    .option("--id-map <module[#export]>", "a module mapping a retrieved document to a card id")
    .option("--input <module[#export]>", "a module building each turn's graph input")
    .option("--store <auto|local|url|memory|none>", "the store of retrace's own graph")
    .option("-k, --k <n>", "cards scored per turn", positiveIntOption("-k"))
    .option("--baseline <file>", "the baseline file the baseline checks compare with")
    .option("--gate <check=value>", "a gate check, repeatable (as on retrace eval)", collect)
    .option("--out <format:file>", "an output of every eval, repeatable (as on retrace eval)", collect)
    .option("--config <file|json>", "settings (retrieval, locales, run sections), repeatable (later wins)", collect)
    .option("--force", "rewrite an existing retrace.config.json")
    .action(action((o: InitOptions) => initCommand(o)));
}
