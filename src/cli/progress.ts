/**
 * Progress on stderr: a bar (done/total, elapsed, ETA) when stderr is a TTY
 * and NO_COLOR is unset; otherwise a plain line at every quarter, so logs of
 * non-interactive runs stay short.
 */
import cliProgress from "cli-progress";
import { log } from "../log.js";

export interface Progress {
  update(done: number, total: number): void;
  stop(): void;
}

export function progressReporter(label: string, unit: string): Progress {
  if (process.stderr.isTTY && (process.env.NO_COLOR ?? "") === "") {
    const bar = new cliProgress.SingleBar(
      {
        stream: process.stderr,
        format: `${label} [{bar}] {value}/{total} ${unit} | elapsed {duration_formatted} | ETA {eta_formatted}`,
        hideCursor: true,
        etaBuffer: 20,
      },
      cliProgress.Presets.legacy,
    );
    let started = false;
    return {
      update(done, total) {
        if (!started) {
          bar.start(total, done);
          started = true;
        } else bar.update(done);
      },
      stop() {
        if (started) bar.stop();
        started = false;
      },
    };
  }
  const t0 = performance.now();
  let lastQuarter = 0;
  return {
    update(done, total) {
      const quarter = total === 0 ? 4 : Math.floor((4 * done) / total);
      if (done > 0 && quarter > lastQuarter) {
        lastQuarter = quarter;
        const elapsed = (performance.now() - t0) / 1000;
        const eta = done >= total ? 0 : (elapsed / done) * (total - done);
        log.info(`${label}: ${done}/${total} ${unit}, elapsed ${elapsed.toFixed(1)} s, ETA ${eta.toFixed(1)} s`);
      }
    },
    stop() {},
  };
}
