/**
 * Entry of the thread a `--judge` or `--generator` module runs in (started
 * by ./module-isolation.ts; docs/reliability.md, "Your graph runs in a
 * thread of its own"): loads and builds the module, then answers each call
 * with plain data. retrace's own log lines go to the main thread; this
 * thread's stdout and stderr are the module's, captured there.
 *
 * While loading, the port to the main thread does not keep this thread
 * alive: when nothing is left to run, `beforeExit` comes as in a process of
 * its own, and a top-level await still pending can never settle
 * (`drained`). Once loaded, the port keeps it waiting for calls. A heartbeat
 * tells the main thread this thread still yields to its event loop.
 */
import path from "node:path";
import { HumanMessage, SystemMessage } from "@langchain/core/messages";
import { parentPort, workerData } from "node:worker_threads";
import { GraphInputError } from "../errors.js";
import { loadJudgeModel } from "../eval/measures/judge-module.js";
import { contentText, modelId, type ChatModelLike } from "../eval/measures/judge.js";
import { setLogSink } from "../log.js";
import { rngFor } from "../research/synthetic.js";
import { serializeError } from "../thread-errors.js";
import { buildWith, importUserModule, userFrame } from "../user-module.js";
import type { GeneratorCard, GeneratorModule } from "./cases-synth.js";
import type { ModuleHostCall, ModuleHostInit, ModuleHostMessage } from "./module-isolation.js";

const port = parentPort;
if (port === null)
  throw new Error("src/app/module-host-worker.ts runs in a worker thread (./module-isolation.ts starts it)");
const init = workerData as ModuleHostInit;
const post = (m: ModuleHostMessage) => port.postMessage(m);

setLogSink((level, msg) => post({ type: "log", level, msg }));

// process.exit in the module ends this thread only; the main thread is told who called it first.
const exit = process.exit.bind(process);
process.exit = ((code?: number | string | null) => {
  const at = userFrame(new Error("process.exit"), init.cwd);
  post({ type: "exit", code: code ?? process.exitCode ?? 0, ...(at !== undefined ? { at } : {}) });
  return exit(code);
}) as typeof process.exit;

// The module's stdout and stderr go to the main thread as messages (shown there with --verbose), never to retrace's.
for (const name of ["stdout", "stderr"] as const) {
  const stream = process[name];
  stream.write = ((chunk: string | Uint8Array, a?: unknown, b?: unknown) => {
    const text = typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8");
    post({ type: "output", stream: name, text });
    const cb = typeof a === "function" ? a : typeof b === "function" ? b : undefined;
    if (cb !== undefined) queueMicrotask(() => (cb as () => void)());
    return true;
  }) as typeof stream.write;
}

let loading = true;
process.on("beforeExit", () => {
  if (loading) post({ type: "drained" });
});
port.unref();
setInterval(() => post({ type: "beat" }), 250).unref();

/** What answers a call. */
type Handler = (args: unknown) => Promise<unknown>;

/** A judge: `{ messages: [{role: "system" | "human", content}] }` → its reply's text and token counts. */
async function judgeHandler(): Promise<{ info: Record<string, string>; handle: Handler }> {
  const model: ChatModelLike = await loadJudgeModel(init.spec, init.cwd);
  return {
    info: { id: modelId(model) },
    handle: async (args) => {
      const { messages } = args as { messages: { role: "system" | "human"; content: string }[] };
      const reply = await model.invoke(
        messages.map((m) => (m.role === "system" ? new SystemMessage(m.content) : new HumanMessage(m.content))),
      );
      const u = reply.usage_metadata;
      return {
        content: contentText(reply.content),
        ...(u !== undefined
          ? {
              usage_metadata: {
                ...(typeof u.input_tokens === "number" ? { input_tokens: u.input_tokens } : {}),
                ...(typeof u.output_tokens === "number" ? { output_tokens: u.output_tokens } : {}),
              },
            }
          : {}),
      };
    },
  };
}

/** A generator: `{ card, seed, index }` → what its default export returns for the card (checked by the caller). */
async function generatorHandler(): Promise<{ info: Record<string, string>; handle: Handler }> {
  const where = `--generator ${init.spec}`;
  const { file, exports } = await importUserModule(init.spec, "--generator", { cwd: init.cwd });
  const mod = exports as Partial<GeneratorModule>;
  const fn = mod.default;
  if (typeof fn !== "function")
    throw new GraphInputError(
      `${where}: expected a default export that is a function (card, context) => turns, got ${typeof mod.default}`,
    );
  const name =
    typeof mod.name === "string" && mod.name !== "" ? mod.name : path.basename(file).replace(/\.[cm]?[jt]s$/, "");
  const version = typeof mod.version === "string" && mod.version !== "" ? mod.version : "unversioned";
  return {
    info: { name, version },
    handle: async (args) => {
      const { card, seed, index } = args as { card: GeneratorCard; seed: number; index: number };
      // The user's function throwing is a problem of its module (exit 2 naming it), as one throwing while loading.
      return buildWith(
        () => fn(card, { seed, index, random: rngFor(seed, `${index}\u0000${card.id}`) }),
        true,
        where,
        `the turns of card ${card.id}`,
        `the generator threw on card ${card.id}`,
      );
    },
  };
}

try {
  const { info, handle } = init.kind === "judge" ? await judgeHandler() : await generatorHandler();
  loading = false;
  port.ref();
  port.on("message", (m: ModuleHostCall) => {
    void (async () => {
      let value: unknown;
      try {
        value = await handle(m.args);
      } catch (e) {
        post({ type: "result", id: m.id, error: serializeError(e) });
        return;
      }
      try {
        post({ type: "result", id: m.id, value });
      } catch (e) {
        post({
          type: "result",
          id: m.id,
          error: serializeError(
            new GraphInputError(
              `--${init.kind} ${init.spec}: returned a value that cannot be passed on as plain data (${(e as Error).message})`,
            ),
          ),
        });
      }
    })();
  });
  post({ type: "loaded", info });
} catch (e) {
  post({ type: "failed", error: serializeError(e) });
}
