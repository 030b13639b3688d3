// Measures for docs/decisions/0008-data-dir-lock-stays-hand-written.md; copy it into a folder where `npm install proper-lockfile@4.1.2` was run.
// node waiter.mjs DIR STALE: waits for the lock (polling every 200 ms) and says when it got it, relative to the holder's block start / lock time.
import lockfile from "proper-lockfile";
import { existsSync, readFileSync } from "node:fs";
const [dir, stale] = process.argv.slice(2);
while (!existsSync(`${dir}/locked`)) await new Promise((r) => setTimeout(r, 20));
const lockedAt = +readFileSync(`${dir}/locked`, "utf8");
const release = await lockfile.lock(dir, {
  lockfilePath: `${dir}/retrace.lock`,
  stale: +stale,
  realpath: false,
  retries: { retries: 1000, factor: 1, minTimeout: 200, maxTimeout: 200 },
});
const now = Date.now();
const bs = existsSync(`${dir}/block-start`) ? +readFileSync(`${dir}/block-start`, "utf8") : null;
console.log(
  JSON.stringify({
    waiter: "locked",
    sinceHolderLockedMs: now - lockedAt,
    sinceBlockStartMs: bs === null ? null : now - bs,
  }),
);
await release();
