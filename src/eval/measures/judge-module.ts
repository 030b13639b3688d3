/**
 * `--judge MODULE`: load the judge's chat model from a user's module
 * (docs/langchain-integration.md), a .ts/.mts/.js/.mjs file loaded by the one
 * user-module loader (src/user-module.ts). The module's default export (else
 * its `judge`, else its `model` export) is either a LangChain chat model (has
 * `invoke`: recognised by shape, so a model of the project's own
 * `@langchain/core` copy is one too) or a factory — a function, possibly
 * async — returning one. A module that throws while loading, or a factory
 * that throws (a `ChatOpenAI` without its API key), is exit 2 naming the
 * module.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { GraphInputError, InvalidArgumentError } from "../../errors.js";
import { buildWith, importUserModule } from "../../user-module.js";
import type { ChatModelLike } from "./judge.js";

function isChatModel(x: unknown): x is ChatModelLike {
  return typeof x === "object" && x !== null && typeof (x as { invoke?: unknown }).invoke === "function";
}

export async function loadJudgeModel(spec: string, cwd: string = process.cwd()): Promise<ChatModelLike> {
  if (!existsSync(path.resolve(cwd, spec)))
    throw new InvalidArgumentError(
      "--judge",
      "a module file exporting a LangChain chat model or a factory of one",
      spec,
    );
  const { exports: mod } = await importUserModule(spec, "--judge", { cwd });
  const exported = mod.default ?? mod.judge ?? mod.model;
  const value = await buildWith(
    exported,
    typeof exported === "function" && !isChatModel(exported),
    `--judge ${spec}`,
    "the chat model",
  );
  if (!isChatModel(value))
    throw new GraphInputError(
      `--judge ${spec}: expected the default (or \`judge\`/\`model\`) export to be a chat model with invoke(), or a factory returning one, got ${value === null ? "null" : typeof value}`,
    );
  return value;
}
