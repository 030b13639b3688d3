/**
 * The entry of a self-started Chroma server process (started by
 * ./chroma-process.ts; docs/decisions/0005-self-started-chroma.md). It does
 * what chromadb's own `dist/cli.mjs` does — load the native binding and hand
 * it the command line — except that it tries each candidate binding the
 * parent resolved (RETRACE_CHROMA_BINDINGS, ./chroma-binding.ts) and takes
 * the first that loads. Before the server starts it prints one line naming
 * the binding it chose; when none loads, one line with every failure, and
 * exits NO_BINDING_EXIT.
 */
import { createRequire } from "node:module";
import {
  BINDINGS_ENV,
  chooseBinding,
  CHOSEN_MARKER,
  NO_BINDING_EXIT,
  NONE_MARKER,
  type BindingCandidate,
} from "./chroma-binding.js";

interface ChromaBinding {
  cli(argv: string[]): void;
}

const candidates = JSON.parse(process.env[BINDINGS_ENV] ?? "[]") as BindingCandidate[];
const require = createRequire(import.meta.url);
const { chosen, failures } = chooseBinding(candidates, (file) => require(file) as ChromaBinding);
if (chosen === undefined) {
  process.stderr.write(`${NONE_MARKER}${JSON.stringify({ failures })}\n`);
  process.exit(NO_BINDING_EXIT);
}
process.stderr.write(`${CHOSEN_MARKER}${JSON.stringify({ chosen: chosen.candidate, failures })}\n`);
// As chromadb's CLI: SIGINT ends the process (the server shuts down with it).
process.on("SIGINT", () => process.exit(0));
chosen.binding.cli(["chroma", ...process.argv.slice(2)]);
