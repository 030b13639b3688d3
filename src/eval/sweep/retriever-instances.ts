/**
 * Which retriever instance ran a captured retriever run
 * (docs/query-attribution.md, "`--graph`"). LangChain's callbacks describe a
 * retriever run with a serialized description (`toJSON()`), never the
 * instance, so a captured call cannot be re-invoked from the callbacks alone.
 * For `--graph --counterfactual` the sweep therefore wraps
 * `BaseRetriever.prototype.invoke` of every @langchain/core copy it can find
 * (`baseRetrieversFor`: the copy the graph module resolves, ESM and CommonJS
 * builds, any CommonJS build already loaded, and the BaseRetriever found by
 * LangChain's own markers in the prototype chain of the module's exports and
 * the graph's nodes) and retrace's own: the wrapper
 * runs the original `invoke` inside an AsyncLocalStorage holding `this`, so a
 * callback handler awaited inside that call (`RetrieverCapture`, whose
 * `handleRetrieverStart` LangChain awaits in the caller's async context) reads
 * the instance of the run it is told about — the innermost one when
 * retrievers nest. Nothing else changes: same arguments, same result, same
 * run ids.
 *
 * The wrap is process-wide by nature (a prototype), so it lives on the
 * prototype itself under a `Symbol.for` key, counts its users, and is removed
 * when the last recorder is released. It is installed only while a sweep with
 * counterfactual retrieval runs.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { BaseRetriever } from "@langchain/core/retrievers";

const PATCH = Symbol.for("retrace-eval.retrieverInvokeRecorder");

interface Patch {
  original: (...args: unknown[]) => unknown;
  wrapper: (...args: unknown[]) => unknown;
  als: AsyncLocalStorage<object>;
  users: number;
}

type Invokable = { invoke: (...args: unknown[]) => unknown; [PATCH]?: Patch };

/** Records the retriever instance whose `invoke` is running; `release` when the sweep is done. */
export interface RetrieverRecorder {
  /** The innermost retriever instance whose `invoke` is running in this async context, if any. */
  current(): object | undefined;
  /** Removes the wrap once no recorder uses it any more (idempotent). */
  release(): void;
  /** How many distinct BaseRetriever classes are recorded. */
  readonly classes: number;
}

function prototypeOf(base: unknown): Invokable | null {
  if (typeof base !== "function") return null;
  const proto = (base as { prototype?: unknown }).prototype;
  if (typeof proto !== "object" || proto === null || typeof (proto as Invokable).invoke !== "function") return null;
  return proto as Invokable;
}

/**
 * Starts recording the instances of `bases` (BaseRetriever classes; retrace's
 * own @langchain/core copy is always added; duplicates and non-classes are
 * skipped).
 */
export function recordRetrieverInvocations(bases: readonly unknown[] = []): RetrieverRecorder {
  const protos = [...new Set([BaseRetriever, ...bases].map(prototypeOf).filter((p): p is Invokable => p !== null))];
  const patches: Patch[] = [];
  for (const proto of protos) {
    let patch = Object.prototype.hasOwnProperty.call(proto, PATCH) ? proto[PATCH] : undefined;
    if (patch === undefined) {
      const original = proto.invoke;
      const als = new AsyncLocalStorage<object>();
      const wrapper = function (this: object, ...args: unknown[]) {
        return als.run(this, () => original.apply(this, args));
      };
      patch = { original, wrapper, als, users: 0 };
      Object.defineProperty(proto, PATCH, { value: patch, configurable: true, enumerable: false, writable: true });
      proto.invoke = wrapper;
    }
    patch.users += 1;
    patches.push(patch);
  }
  let released = false;
  return {
    classes: protos.length,
    current() {
      for (const p of patches) {
        const inst = p.als.getStore();
        if (inst !== undefined) return inst;
      }
      return undefined;
    },
    release() {
      if (released) return;
      released = true;
      protos.forEach((proto, i) => {
        const patch = patches[i] as Patch;
        patch.users -= 1;
        if (patch.users > 0) return;
        // Someone wrapped it after us: leave their wrap (ours then only runs the original, with nobody reading the store).
        if (proto.invoke === patch.wrapper) proto.invoke = patch.original;
        delete proto[PATCH];
      });
    },
  };
}

/**
 * True for the prototype of LangChain's `BaseRetriever`, of any copy of
 * `@langchain/core` (never `instanceof` against retrace's copy): by the
 * class's own markers — a class named `BaseRetriever` whose prototype itself
 * defines `invoke` and `_getRelevantDocuments`.
 */
export function isBaseRetrieverPrototype(p: unknown): boolean {
  if (typeof p !== "object" || p === null) return false;
  const own = (k: string) =>
    Object.prototype.hasOwnProperty.call(p, k) && typeof (p as Record<string, unknown>)[k] === "function";
  return (
    own("constructor") &&
    (p as { constructor: { name?: unknown } }).constructor.name === "BaseRetriever" &&
    own("invoke") &&
    own("_getRelevantDocuments")
  );
}

/** The `BaseRetriever` class in the prototype chain of `x` (a retriever instance, or a retriever class), of whichever @langchain/core copy; null when there is none. */
export function baseRetrieverOf(x: unknown): unknown {
  let p: unknown = typeof x === "function" ? (x as { prototype?: unknown }).prototype : x;
  for (let depth = 0; typeof p === "object" && p !== null && depth < 64; depth++) {
    if (isBaseRetrieverPrototype(p)) return (p as { constructor: unknown }).constructor;
    p = Object.getPrototypeOf(p);
  }
  return null;
}

/** The loaded CommonJS builds of `@langchain/core/retrievers`, of every copy (Node's CommonJS cache; never loads one). */
function loadedCommonJsBases(req: NodeJS.Require): unknown[] {
  return Object.keys(req.cache)
    .filter((f) => /[\\/]@langchain[\\/]core[\\/]dist[\\/]retrievers[\\/]index\.cjs$/.test(f))
    .map((f) => (req.cache[f]?.exports as { BaseRetriever?: unknown } | undefined)?.BaseRetriever);
}

/** What a graph module gave, searched for retrievers: its exports (one level into plain objects and arrays) and the graph's nodes. */
export interface RetrieverSearchRoots {
  /** The module's exports. */
  exports?: Record<string, unknown>;
  /** The compiled graph (its `nodes`' bound runnables are searched: a retriever added as a node). */
  graph?: unknown;
}

function candidates(roots: RetrieverSearchRoots): unknown[] {
  const out: unknown[] = [];
  const add = (v: unknown) => {
    if ((typeof v === "object" && v !== null) || typeof v === "function") out.push(v);
  };
  for (const v of Object.values(roots.exports ?? {})) {
    add(v);
    if (Array.isArray(v)) v.forEach(add);
    else if (typeof v === "object" && v !== null && Object.getPrototypeOf(v) === Object.prototype)
      Object.values(v).forEach(add);
  }
  const nodes = (roots.graph as { nodes?: unknown } | null | undefined)?.nodes;
  if (typeof nodes === "object" && nodes !== null)
    for (const n of Object.values(nodes)) add((n as { bound?: unknown } | null)?.bound);
  return out;
}

/**
 * The BaseRetriever classes a graph module at `moduleFile` uses, as far as
 * they can be found: `@langchain/core/retrievers` as the module's own folder
 * resolves it — the ESM build (`import`), and the CommonJS build (`require`)
 * when it is already loaded (call this after loading the module) —, every
 * other CommonJS build already loaded, and the BaseRetriever in the
 * prototype chain of what `roots` holds (the module's exported retrievers or
 * retriever classes, the graph's nodes), recognised by its markers
 * (`baseRetrieverOf`). Retrace's own copy is always recorded besides these.
 */
export async function baseRetrieversFor(moduleFile: string, roots: RetrieverSearchRoots = {}): Promise<unknown[]> {
  const out: unknown[] = [];
  const req = createRequire(path.resolve(moduleFile));
  out.push(...loadedCommonJsBases(req), ...candidates(roots).map(baseRetrieverOf));
  let pkgJson: string | undefined;
  try {
    pkgJson = req.resolve("@langchain/core/package.json");
  } catch {
    // the module's folder does not resolve @langchain/core: what was found above
  }
  if (pkgJson !== undefined) {
    try {
      // The CommonJS build only when something already loaded it (a CommonJS graph module, loaded before this is called): never load a copy for nothing.
      const cjs = req.resolve("@langchain/core/retrievers");
      if (req.cache[cjs] !== undefined) out.push((req(cjs) as { BaseRetriever?: unknown }).BaseRetriever);
    } catch {
      // no CommonJS build: the ESM one below
    }
    try {
      const pkg = JSON.parse(readFileSync(pkgJson, "utf8")) as { exports?: Record<string, unknown> };
      const entry = pkg.exports?.["./retrievers"] as { import?: string | { default?: string } } | string | undefined;
      const rel =
        typeof entry === "string" ? entry : typeof entry?.import === "string" ? entry.import : entry?.import?.default;
      if (rel !== undefined) {
        const file = path.resolve(path.dirname(pkgJson), rel);
        if (existsSync(file))
          out.push(((await import(pathToFileURL(file).href)) as { BaseRetriever?: unknown }).BaseRetriever);
      }
    } catch {
      // an unreadable package.json or a build that does not load: that copy is not recorded
    }
  }
  return [...new Set(out.filter((b) => b !== undefined && b !== null))];
}
