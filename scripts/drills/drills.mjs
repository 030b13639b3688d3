#!/usr/bin/env node
/**
 * Fault drills against retrace as a user runs it (issue 49): hostile graphs,
 * files and outputs, each run in its own process; prints a markdown table
 * drill → exit code, first stderr line, verdict. Run it against an installed
 * tarball (the point) or this checkout:
 *
 *   npm pack --pack-destination /tmp && mkdir /tmp/inst && cd /tmp/inst && npm init -y &&
 *     npm install /tmp/retrace-eval-*.tgz @langchain/core @langchain/langgraph
 *   node scripts/drills/drills.mjs --bin /tmp/inst/node_modules/.bin/retrace [--only NAME,NAME]
 *   node scripts/drills/drills.mjs            # this checkout's bin/retrace.mjs (build it first)
 *
 * The hostile graph (one module, its behaviour picked by DRILL), its catalog
 * and cases are written into a fresh temporary folder, which is also the
 * working directory of every run (a graph's @langchain packages are resolved
 * from --bin's installation: the folder gets a node_modules link to it).
 * Exit status: 0 when every drill held, 1 otherwise. Nothing reaches the network.
 */
import { spawnSync, spawn } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const argv = process.argv.slice(2);
const opt = (name) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const here = path.dirname(fileURLToPath(import.meta.url));
const BIN = path.resolve(opt("--bin") ?? path.join(here, "..", "..", "bin", "retrace.mjs"));
const only = opt("--only")?.split(",");
// The node_modules that holds the graph's @langchain packages: beside the installed bin, else the checkout's.
const MODULES = BIN.includes(`${path.sep}node_modules${path.sep}`)
  ? BIN.slice(0, BIN.lastIndexOf(`${path.sep}node_modules${path.sep}`) + "/node_modules".length)
  : path.join(here, "..", "..", "node_modules");

const dir = mkdtempSync(path.join(tmpdir(), "retrace-drills-"));
symlinkSync(MODULES, path.join(dir, "node_modules"), "dir");
const SECRETS = {
  GH_PAT: "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123",
  DB_PASS: "hunter2-correct-horse",
  OPENAI_APIKEY: "sk-drill-0123456789abcdefghij",
  OPENAI_API_KEY: "sk-drillkey-9876543210zyxwvut",
  SLACK_WEBHOOK_URL: "https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXXXXXXXXXXXXX",
};
const b64 = Buffer.from(SECRETS.OPENAI_API_KEY).toString("base64");

writeFileSync(
  path.join(dir, "agent.mjs"),
  `import { AIMessage } from "@langchain/core/messages";
import { BaseRetriever } from "@langchain/core/retrievers";
import { Document } from "@langchain/core/documents";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
const mode = process.env.DRILL ?? "";
if (mode === "tla-never") await new Promise(() => {});
class R extends BaseRetriever {
  lc_namespace = ["drills"];
  async _getRelevantDocuments(q) {
    return [new Document({ pageContent: "freeze your card", metadata: { id: "card-freeze" } }), new Document({ pageContent: "refunds", metadata: { id: "refunds" } })];
  }
}
const retriever = new R();
const hog = [];
function build() {
  return new StateGraph(MessagesAnnotation)
    .addNode("search", async (s, config) => {
      if (mode === "exit0") process.exit(0);
      if (mode === "exit1") process.exit(1);
      if (mode === "loop") { const t = Date.now(); while (Date.now() - t < 60000); }
      if (mode === "memory") for (;;) hog.push("x".repeat(1 << 20) + Math.random());
      if (mode === "log") console.log("graph says OPENAI_API_KEY=" + process.env.OPENAI_API_KEY);
      if (mode === "secrets") throw new Error("upstream 500: GH_PAT=" + process.env.GH_PAT + " db " + process.env.DB_PASS + " key " + process.env.OPENAI_APIKEY + " hook " + process.env.SLACK_WEBHOOK_URL + " b64 ${b64}");
      if (mode === "null-proto") throw Object.create(null);
      if (mode === "message-42") throw { message: 42 };
      await retriever.invoke(String(s.messages.at(-1)?.content ?? ""), config);
      return {};
    })
    .addNode("answer", async () => ({ messages: [new AIMessage("Freeze it in the app [card-freeze].")] }))
    .addEdge(START, "search").addEdge("search", "answer").addEdge("answer", END).compile();
}
export const graph = build();
export async function slowFactory() { await new Promise((r) => setTimeout(r, 3600000)); return build(); }
`,
);
cpSync(path.join(here, "..", "..", "test", "fixtures", "kb-mini"), path.join(dir, "kb"), { recursive: true });
writeFileSync(path.join(dir, "ids.tsv"), "card-freeze\ten\nrefunds\ten\n");
const CASE = {
  id: "c1",
  locale: "en",
  kind: "golden",
  turns: [{ user: "how do I freeze my card?", must_cite_one_of: ["card-freeze"], expect: "answer" }],
};
writeFileSync(path.join(dir, "cases.jsonl"), JSON.stringify(CASE) + "\n");
writeFileSync(path.join(dir, "deep.jsonl"), "[".repeat(100_000) + "\n");
writeFileSync(
  path.join(dir, "proto.jsonl"),
  JSON.stringify({ ...CASE, turns: [{ ...CASE.turns[0], relevant: { ["__proto__"]: 2 } }] }).replace(
    '"relevant":{}',
    '"relevant":{"__proto__":2}',
  ) + "\n",
);
const deep = (n) => '{"a":'.repeat(n) + "1" + "}".repeat(n);
writeFileSync(path.join(dir, "deep-config.json"), `{"run":{"configurable":${deep(100_000)}}}`);
writeFileSync(path.join(dir, "chat.jsonl"), "[".repeat(100_000) + "\n");

const CFG = '{"version":1,"run":{"turnTimeout":30}}';
const GRAPH = ["--graph", "agent.mjs#graph", "--catalog", "ids.tsv", "--cases", "cases.jsonl"];
const sha = (f) => (existsSync(path.join(dir, f)) ? readFileSync(path.join(dir, f), "utf8") : null);

/** One drill: its args, env, what must hold (a function of the run answering null when it held, else why not). */
const DRILLS = [
  {
    name: "process.exit(0) in a node, gated, json+junit",
    args: [...GRAPH, "--gate", "min-hit=0.99", "--out", "json:x0.json", "--out", "junit:x0.xml"],
    env: { DRILL: "exit0" },
    held: (r) => (r.code === 2 && !existsSync(path.join(dir, "x0.json")) ? null : "expected exit 2 and no report"),
  },
  {
    name: "process.exit(1) in a node",
    args: GRAPH,
    env: { DRILL: "exit1" },
    held: (r) => (r.code === 2 ? null : "expected exit 2"),
  },
  {
    name: "top-level await never settles",
    args: GRAPH,
    env: { DRILL: "tla-never" },
    held: (r) => (r.code === 2 ? null : "expected exit 2"),
  },
  {
    name: "async factory awaiting 1 h, run.loadTimeout 5",
    args: [
      "--graph",
      "agent.mjs#slowFactory",
      "--catalog",
      "ids.tsv",
      "--cases",
      "cases.jsonl",
      "--config",
      '{"run":{"loadTimeout":5,"turnTimeout":5}}',
    ],
    env: {},
    held: (r) => (r.code === 2 ? null : "expected exit 2"),
  },
  {
    name: "60 s synchronous loop, run.turnTimeout 5",
    args: [...GRAPH, "--config", '{"run":{"turnTimeout":5}}', "--out", "json:loop.json"],
    env: { DRILL: "loop" },
    held: (r) => (r.code !== 0 && r.ms < 30_000 ? null : "expected a failed run within 30 s, not a normal turn"),
  },
  {
    name: "unbounded memory, run.graphMemoryMb 64",
    args: [...GRAPH, "--config", '{"run":{"graphMemoryMb":64}}'],
    env: { DRILL: "memory" },
    held: (r) =>
      [1, 2, 3].includes(r.code) && r.first.startsWith("retrace:") && r.first.includes("agent.mjs")
        ? null
        : "expected a retrace: line naming the module and exit 1-3",
  },
  {
    name: "console.log under --json",
    args: [...GRAPH, "--json"],
    env: { DRILL: "log", OPENAI_API_KEY: SECRETS.OPENAI_API_KEY },
    held: (r) => {
      try {
        JSON.parse(r.stdout);
      } catch {
        return "stdout is not one JSON document";
      }
      return r.stdout.includes(SECRETS.OPENAI_API_KEY) ? "key printed" : null;
    },
  },
  {
    name: "secrets in a graph error (table/json/md/junit/html/step summary)",
    args: [
      ...GRAPH,
      "--verbose",
      "--out",
      "json:s.json",
      "--out",
      "markdown:s.md",
      "--out",
      "junit:s.xml",
      "--out",
      "html:s.html",
    ],
    env: { DRILL: "secrets", ...SECRETS, GITHUB_ACTIONS: "true", GITHUB_STEP_SUMMARY: path.join(dir, "summary.md") },
    held: (r) => {
      const all =
        r.stdout + r.stderr + ["s.json", "s.md", "s.xml", "s.html", "summary.md"].map((f) => sha(f) ?? "").join("");
      const leaked = [
        ...Object.entries(SECRETS)
          .filter(([k, v]) => k !== "OPENAI_API_KEY" && all.includes(v))
          .map(([k]) => k),
        ...(all.includes(b64) ? ["base64(OPENAI_API_KEY)"] : []),
      ];
      return leaked.length === 0 ? null : `leaked: ${leaked.join(", ")}`;
    },
  },
  {
    name: "throw Object.create(null)",
    args: GRAPH,
    env: { DRILL: "null-proto" },
    held: (r) => (r.code !== 70 ? null : "exit 70"),
  },
  {
    name: "throw {message: 42} with a credential set",
    args: GRAPH,
    env: { DRILL: "message-42", OPENAI_API_KEY: SECRETS.OPENAI_API_KEY },
    held: (r) => (r.code !== 70 ? null : "exit 70"),
  },
  {
    name: "check: JSONL line of 1e5 unclosed [",
    args: ["check", "--cases", "deep.jsonl", "--catalog", "ids.tsv"],
    cmd: true,
    held: (r) => (r.code === 2 ? null : "expected exit 2"),
  },
  {
    name: "cases import: JSONL line of 1e5 unclosed [",
    args: ["cases", "import", "chat.jsonl"],
    cmd: true,
    held: (r) => (r.code === 2 ? null : "expected exit 2"),
  },
  {
    name: "1e5-deep run.configurable",
    args: [...GRAPH, "--config", "deep-config.json"],
    env: {},
    held: (r) => (r.code === 2 ? null : "expected exit 2"),
  },
  {
    name: "step summary on /dev/full (ENOSPC)",
    args: [...GRAPH, "--out", "json:full.json"],
    env: { GITHUB_ACTIONS: "true", GITHUB_STEP_SUMMARY: "/dev/full" },
    held: (r) =>
      r.code === 3 && !existsSync(path.join(dir, "full.json")) ? null : "expected exit 3 and nothing published",
  },
  {
    name: "--json --out json:-",
    args: [...GRAPH, "--json", "--out", "json:-"],
    env: {},
    held: (r) => (r.code === 2 ? null : "expected exit 2"),
  },
  {
    name: "--out json:- --out html:/dev/stdout",
    args: [...GRAPH, "--out", "json:-", "--out", "html:/dev/stdout"],
    env: {},
    held: (r) => (r.code === 2 ? null : "expected exit 2"),
  },
  {
    name: "__proto__ grade in relevant",
    args: ["check", "--cases", "proto.jsonl", "--catalog", "ids.tsv"],
    cmd: true,
    held: (r) => (r.code === 2 ? null : "expected exit 2"),
  },
  {
    name: "newline in the --cases path",
    args: ["--graph", "agent.mjs#graph", "--catalog", "ids.tsv", "--cases", "x\n::warning::injected.jsonl"],
    env: {},
    held: (r) => (/^(::|##\[)/m.test(r.stderr + r.stdout) ? "a workflow command line was printed" : null),
  },
  {
    name: "--out over the cases file",
    args: [...GRAPH, "--out", "cases.jsonl"],
    env: {},
    held: (r) =>
      r.code === 2 && sha("cases.jsonl") === JSON.stringify(CASE) + "\n"
        ? null
        : "expected exit 2 and the cases unchanged",
  },
  {
    name: "--out json: over the catalog",
    args: [...GRAPH, "--out", "json:ids.tsv"],
    env: {},
    held: (r) =>
      r.code === 2 && sha("ids.tsv")?.startsWith("card-freeze") ? null : "expected exit 2 and the catalog unchanged",
  },
  {
    name: "--out html: over the --config file",
    args: [...GRAPH, "--config", "cfg.json", "--out", "html:cfg.json"],
    env: {},
    setup: () => writeFileSync(path.join(dir, "cfg.json"), CFG),
    held: (r) =>
      r.code === 2 && sha("cfg.json") === CFG && r.first.includes("not an input")
        ? null
        : "expected exit 2 naming the input, and the config unchanged",
  },
  {
    name: "--out json: over the graph module",
    args: [...GRAPH, "--out", "json:agent.mjs"],
    env: {},
    held: (r) =>
      r.code === 2 && sha("agent.mjs")?.startsWith("import") ? null : "expected exit 2 and the module unchanged",
  },
];

/** The first `retrace:` line (with the next line when it only counts data errors), else the first line. */
function firstLine(stderr) {
  const lines = stderr.split("\n");
  const i = lines.findIndex((l) => l.startsWith("retrace:"));
  if (i < 0) return lines.find((l) => l.trim() !== "") ?? "";
  return /data errors?:$/.test(lines[i]) ? `${lines[i]} ${lines[i + 1] ?? ""}` : lines[i];
}

function run(d) {
  d.setup?.();
  const args = d.cmd === true ? d.args : ["eval", ...d.args];
  const t0 = Date.now();
  const r = spawnSync(process.execPath, [BIN, ...args], {
    cwd: dir,
    env: { ...process.env, NO_COLOR: "1", GITHUB_ACTIONS: "", GITHUB_STEP_SUMMARY: "", ...(d.env ?? {}) },
    encoding: "utf8",
    timeout: 120_000,
    maxBuffer: 1 << 28,
  });
  const first = firstLine(r.stderr ?? "");
  return {
    code: r.status ?? (r.signal !== null ? `signal ${r.signal}` : null),
    stdout: r.stdout ?? "",
    stderr: r.stderr ?? "",
    first,
    ms: Date.now() - t0,
  };
}

/** A signal drill: the run is told to stop `after` ms after `pattern` appears on its stderr (or after `after` ms). */
async function signalDrill(name, args, signal, code, after, extra = {}) {
  const t0 = Date.now();
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: dir,
    env: { ...process.env, NO_COLOR: "1", RETRACE_LOG: "info", GITHUB_ACTIONS: "", GITHUB_STEP_SUMMARY: "", ...extra },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d));
  let sent = 0;
  setTimeout(() => {
    sent = Date.now();
    child.kill(signal);
  }, after);
  const killer = setTimeout(() => child.kill("SIGKILL"), after + 30_000);
  const [c, sig] = await new Promise((r) => child.on("close", (c, s) => r([c, s])));
  clearTimeout(killer);
  const status = c ?? (sig === signal ? code : `signal ${sig}`);
  const lines = stderr.split("\n").filter((l) => l.startsWith("retrace:"));
  const tmp = readdirSync(dir).filter((f) => f.endsWith(".tmp"));
  const stopMs = Date.now() - sent;
  const why =
    status !== code
      ? `expected ${code}`
      : stopMs > 2000
        ? `stopped after ${stopMs} ms`
        : lines.length !== 1
          ? `${lines.length} retrace: lines`
          : tmp.length > 0
            ? `left ${tmp.join(", ")}`
            : null;
  return {
    name: `${name} (${signal})`,
    code: status,
    first: lines[0] ?? stderr.split("\n")[0] ?? "",
    why,
    ms: Date.now() - t0,
    stopMs,
  };
}

const rows = [];
for (const d of DRILLS) {
  if (only !== undefined && !only.some((o) => d.name.includes(o))) continue;
  const r = run(d);
  const why = d.held(r);
  rows.push({ name: d.name, code: r.code, first: r.first, why, ms: r.ms });
  process.stderr.write(`${why === null ? "held" : "FAILED"}: ${d.name} (${r.code}, ${r.ms} ms)\n`);
}
if (only === undefined || only.includes("signals")) {
  // A FIFO nobody reads: the run stages its other outputs and waits on it.
  spawnSync("mkfifo", [path.join(dir, "fifo")]);
  for (const [s, c] of [
    ["SIGHUP", 129],
    ["SIGINT", 130],
    ["SIGTERM", 143],
  ]) {
    const r = await signalDrill(
      "output waiting on a FIFO",
      ["eval", ...GRAPH, "--out", "json:fifo", "--out", "markdown:staged.md"],
      s,
      c,
      8000,
    );
    rows.push(r);
    process.stderr.write(`${r.why === null ? "held" : "FAILED"}: ${r.name} (${r.code}, stop ${r.stopMs} ms)\n`);
  }
  for (const [s, c] of [
    ["SIGHUP", 129],
    ["SIGINT", 130],
    ["SIGTERM", 143],
  ]) {
    const r = await signalDrill(
      "a 60 s graph turn",
      ["eval", ...GRAPH, "--config", '{"run":{"turnTimeout":90}}'],
      s,
      c,
      6000,
      { DRILL: "loop" },
    );
    rows.push(r);
    process.stderr.write(`${r.why === null ? "held" : "FAILED"}: ${r.name} (${r.code}, stop ${r.stopMs} ms)\n`);
  }
}
/** A server on 127.0.0.1 answering every request with `answer(req, res)`, for the duration of `fn(url)`. */
async function withServer(answer, fn) {
  const server = http.createServer(answer);
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  try {
    return await fn(`http://127.0.0.1:${server.address().port}`);
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
}

/** `retrace ARGS` without blocking this process's event loop (a server of the drill answers meanwhile). */
function runAsync(args, env = {}) {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: dir,
      env: { ...process.env, NO_COLOR: "1", GITHUB_ACTIONS: "", GITHUB_STEP_SUMMARY: "", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d));
    const killer = setTimeout(() => child.kill("SIGKILL"), 120_000);
    child.on("close", (c, sig) => {
      clearTimeout(killer);
      resolve({ code: c ?? `signal ${sig}`, stdout, stderr, first: firstLine(stderr), ms: Date.now() - t0 });
    });
  });
}

const TOKEN = "chroma-drill-token-0123456789";
const tokenForms = [
  TOKEN,
  Buffer.from(TOKEN).toString("base64"),
  Buffer.from(TOKEN).toString("base64url"),
  Buffer.from(TOKEN).toString("hex"),
];
const STORE_DRILLS = [
  {
    name: "Chroma URL answering 200 with HTML",
    answer: (_q, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end("<html><body>proxy login</body></html>");
    },
    held: (r) => (r.code === 3 ? null : "expected exit 3"),
  },
  {
    name: "Chroma URL answering 500 echoing CHROMA_AUTH_TOKEN (plain, base64, base64url, hex)",
    answer: (_q, res) => {
      res.writeHead(500, { "content-type": "text/plain" });
      res.end(`internal error; request headers: x-chroma-token: ${tokenForms.join(" / ")}`);
    },
    held: (r) =>
      r.code !== 3
        ? "expected exit 3"
        : tokenForms.some((t) => (r.stdout + r.stderr).includes(t))
          ? "a form of the token was printed"
          : null,
  },
];
if (only === undefined || only.includes("store")) {
  for (const d of STORE_DRILLS) {
    const r = await withServer(d.answer, (url) =>
      runAsync(["eval", "--kb", "kb", "--store", url], { CHROMA_AUTH_TOKEN: TOKEN }),
    );
    const why = d.held(r);
    rows.push({ name: d.name, code: r.code, first: r.first, why });
    process.stderr.write(`${why === null ? "held" : "FAILED"}: ${d.name} (${r.code}, ${r.ms} ms)\n`);
  }
}
if (only === undefined || only.includes("signals")) {
  // retrace's own graph over the mini KB, repeated so that it is still sweeping when told to stop.
  for (const [s, c] of [
    ["SIGHUP", 129],
    ["SIGINT", 130],
    ["SIGTERM", 143],
  ]) {
    const r = await signalDrill(
      "own graph eval --repeat 1000",
      ["eval", "--kb", "kb", "--store", "memory", "--repeat", "1000", "--out", "json:own.json"],
      s,
      c,
      6000,
    );
    rows.push(r);
    process.stderr.write(`${r.why === null ? "held" : "FAILED"}: ${r.name} (${r.code}, stop ${r.stopMs} ms)\n`);
  }
}

const cell = (s) => String(s).replace(/\|/g, "\\|").replace(/\n/g, " ").slice(0, 160);
console.log(`retrace: ${BIN}\n\n| drill | exit | first stderr line | held |\n|---|---|---|---|`);
for (const r of rows)
  console.log(`| ${cell(r.name)} | ${r.code} | ${cell(r.first)} | ${r.why === null ? "yes" : `NO: ${cell(r.why)}`} |`);
rmSync(dir, { recursive: true, force: true });
process.exitCode = rows.every((r) => r.why === null) ? 0 : 1;
