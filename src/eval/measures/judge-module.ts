/**
 * `--judge MODULE`: load the judge's chat model from a user's module
 * (docs/langchain-integration.md). The module's default export (else its
 * `judge`, else its `model` export) is either a LangChain chat model (has
 * `invoke`) or a factory — a function, possibly async — returning one.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { InvalidArgumentError } from "../../errors.js";
import type { ChatModelLike } from "./judge.js";

function isChatModel(x: unknown): x is ChatModelLike {
  return typeof x === "object" && x !== null && typeof (x as { invoke?: unknown }).invoke === "function";
}

export async function loadJudgeModel(spec: string, cwd: string = process.cwd()): Promise<ChatModelLike> {
  const file = path.resolve(cwd, spec);
  if (!existsSync(file)) throw new InvalidArgumentError("--judge", "a module file exporting a LangChain chat model or a factory of one", spec);
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (e) {
    throw new InvalidArgumentError("--judge", `a module that loads (${(e as Error).message})`, spec);
  }
  const exported = mod.default ?? mod.judge ?? mod.model;
  const value = typeof exported === "function" && !isChatModel(exported) ? await (exported as () => unknown)() : exported;
  if (!isChatModel(value)) throw new InvalidArgumentError("--judge", "a module whose default (or `judge`/`model`) export is a chat model with invoke(), or a factory returning one", spec);
  return value;
}
