// Measures for docs/decisions/0008-data-dir-lock-stays-hand-written.md; copy it into a folder where `npm install proper-lockfile@4.1.2` was run.
// node holder.mjs DIR BLOCK_MS STALE UPDATE MODE(block|die): takes the lock, then blocks its event loop (or dies by SIGKILL).
import lockfile from "proper-lockfile";
import { writeFileSync } from "node:fs";
const [dir, blockMs, stale, update, mode] = process.argv.slice(2);
const t0 = Date.now();
const release = await lockfile.lock(dir, {
  lockfilePath: `${dir}/retrace.lock`,
  stale: +stale,
  update: +update,
  realpath: false,
  onCompromised: (e) => {
    console.log(JSON.stringify({ holder: "compromised", atMs: Date.now() - t0, msg: e.message }));
    process.exitCode = 3;
  },
});
console.log(JSON.stringify({ holder: "locked", atMs: Date.now() - t0 }));
writeFileSync(`${dir}/locked`, String(Date.now()));
await new Promise((r) => setTimeout(r, 1500)); // some ordinary async work first (two updates could run)
if (mode === "die") process.kill(process.pid, "SIGKILL");
const b = Date.now();
writeFileSync(`${dir}/block-start`, String(b));
while (Date.now() - b < +blockMs) Math.sqrt(Math.random()); // synchronous work
console.log(JSON.stringify({ holder: "block-end", atMs: Date.now() - t0 }));
await new Promise((r) => setTimeout(r, 2000));
await release().catch((e) => console.log(JSON.stringify({ holder: "release-failed", msg: e.message })));
console.log(JSON.stringify({ holder: "released", atMs: Date.now() - t0 }));
