/**
 * Headless Chromium for the browser tests (Debian's package, driven by
 * playwright-core). One launch per test file. When no Chromium is installed
 * the tests are skipped and the reason is printed: the only allowed skip.
 */
import { existsSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";

export const CHROMIUM_PATH = process.env.RETRACE_CHROMIUM ?? "/usr/bin/chromium";

/** null when Chromium can run here; otherwise the reason the browser tests are skipped. */
export function browserSkipReason(): string | null {
  if (existsSync(CHROMIUM_PATH)) return null;
  return `browser tests skipped: no Chromium at ${CHROMIUM_PATH} (install Debian's package: apt-get install -y chromium, or set RETRACE_CHROMIUM)`;
}

const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** One Chromium for a test file (playwright gives it a fresh temporary profile); open pages with `newContext({ offline: true })`. */
export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: ARGS });
}
