/**
 * Real browsers for the HTML report's tests (docs/html-report.md), behind one
 * small driver so each scenario is written once and runs in every browser:
 *
 * - Chromium: Debian's package, driven by playwright-core (CDP);
 * - Firefox: Debian's firefox-esr, driven by puppeteer-core over WebDriver BiDi.
 *
 * One launch per browser per test file. A browser whose executable is missing
 * is skipped and the reason printed (never counted as a pass). Neither client
 * downloads a browser: both are given the system executable.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { chromium } from "playwright-core";
import { launch as launchPuppeteer } from "puppeteer-core";

export type BrowserName = "chromium" | "firefox";

export interface BrowserTarget {
  name: BrowserName;
  /** How the tests name it: `Chromium (playwright-core)`. */
  label: string;
  executable: string;
  /** null when the executable exists; otherwise why this browser's tests are skipped. */
  skipReason: string | null;
}

function target(name: BrowserName, label: string, executable: string, install: string, envVar: string): BrowserTarget {
  return {
    name,
    label,
    executable,
    skipReason: existsSync(executable)
      ? null
      : `${label} browser tests skipped: no ${name} at ${executable} (install Debian's package: ${install}, or set ${envVar})`,
  };
}

/** Every browser the HTML tests run in, in this order. */
export const BROWSERS: readonly BrowserTarget[] = [
  target(
    "chromium",
    "Chromium (playwright-core)",
    process.env.RETRACE_CHROMIUM ?? "/usr/bin/chromium",
    "apt-get install -y chromium",
    "RETRACE_CHROMIUM",
  ),
  target(
    "firefox",
    "Firefox (puppeteer-core, WebDriver BiDi)",
    process.env.RETRACE_FIREFOX ?? "/usr/bin/firefox-esr",
    "apt-get install -y firefox-esr",
    "RETRACE_FIREFOX",
  ),
];

/** The few DOM members the in-page functions use (the project's tsconfig has no DOM lib). */
export interface PageElement {
  textContent: string | null;
  getAttribute(name: string): string | null;
  querySelector(selector: string): PageElement | null;
  querySelectorAll(selector: string): Iterable<PageElement> & ArrayLike<PageElement>;
}

/** One open page, the same calls in every browser. Selectors are CSS; a missing element throws. */
export interface BrowserPage {
  /**
   * What must not happen, in arrival order: a request to anything but the file
   * itself (data: URLs, which never leave the browser, excepted), a dialog
   * (dismissed), an uncaught page error, a console error (Chromium reports CSP
   * violations there, Firefox as page errors).
   */
  readonly events: string[];
  /** Clicks the element (waits until it is visible, as a person would). */
  click(selector: string): Promise<void>;
  /** Picks the option with this value in a `<select>` (fires input and change). */
  select(selector: string, value: string): Promise<void>;
  /** Types into an input (fires input events). */
  fill(selector: string, text: string): Promise<void>;
  /** Presses one key on the page's keyboard (`0`, `c`, `/`, `Escape`, `Enter`), as a person would. */
  press(key: string): Promise<void>;
  /** Reloads the page (its storage kept) and waits until it has settled again, as `open` does. */
  reload(): Promise<void>;
  text(selector: string): Promise<string | null>;
  attribute(selector: string, name: string): Promise<string | null>;
  /** Runs `fn` in the page on every element matching `selector` (possibly none). */
  evalAll<T>(selector: string, fn: (elements: PageElement[]) => T): Promise<T>;
  /** Runs `fn` in the page. */
  evaluate<T>(fn: () => T): Promise<T>;
  /** A PNG of the 1280×800 viewport. */
  screenshot(file: string): Promise<void>;
  close(): Promise<void>;
}

export interface OpenOptions {
  /** Script text run in the page before any of its own scripts (outside the page's CSP), e.g. to remove an API. */
  initScript?: string;
}

export interface BrowserDriver {
  readonly target: BrowserTarget;
  /** The driven browser's own version string (`Chromium 156.0…`, `firefox/153.8.0esr`), printed by the tests. */
  readonly version: string;
  /**
   * Opens `file` (an absolute path) from disk, offline, in a fresh 1280×800
   * page, and waits until the page has left its loading state (`#app`'s
   * `data-state` is no longer `loading`: the embedded data was unpacked and
   * drawn, or the page said why not).
   */
  open(file: string, opts?: OpenOptions): Promise<BrowserPage>;
  close(): Promise<void>;
}

const VIEWPORT = { width: 1280, height: 800 };
/** Matches once the page script has unpacked and drawn its data, or given up (src/eval/report/html/client.ts). */
const SETTLED = '#app:not([data-state="loading"])';

function unexpectedRequest(url: string, file: string): boolean {
  return url !== pathToFileURL(file).href && !url.startsWith("data:");
}

const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** What a launch may be given: `downloadDir`, where the pages' downloads are saved (under their suggested names); default: none saved. */
export interface LaunchOptions {
  downloadDir?: string;
}

async function launchChromium(t: BrowserTarget, lo: LaunchOptions = {}): Promise<BrowserDriver> {
  const browser = await chromium.launch({ executablePath: t.executable, headless: true, args: CHROMIUM_ARGS });
  return {
    target: t,
    version: `Chromium ${browser.version()}`,
    async open(file, opts = {}) {
      // A fresh context per page: its own storage, offline.
      const context = await browser.newContext({
        viewport: VIEWPORT,
        offline: true,
        acceptDownloads: lo.downloadDir !== undefined,
      });
      const page = await context.newPage();
      const dir = lo.downloadDir;
      if (dir !== undefined) page.on("download", (d) => void d.saveAs(path.join(dir, d.suggestedFilename())));
      if (opts.initScript !== undefined) await page.addInitScript({ content: opts.initScript });
      const events: string[] = [];
      page.on("request", (r) => {
        if (unexpectedRequest(r.url(), file)) events.push(`request ${r.url()}`);
      });
      page.on("dialog", (d) => {
        events.push(`dialog ${d.message()}`);
        void d.dismiss();
      });
      page.on("pageerror", (e) => events.push(`pageerror ${e.message}`));
      page.on("console", (m) => {
        if (m.type() === "error") events.push(`console.error ${m.text()}`);
      });
      await page.goto(pathToFileURL(file).href);
      await page.waitForSelector(SETTLED, { state: "attached" });
      return {
        events,
        click: (s) => page.click(s),
        select: async (s, v) => void (await page.selectOption(s, v)),
        fill: (s, v) => page.fill(s, v),
        press: (k) => page.keyboard.press(k),
        reload: async () => {
          await page.reload();
          await page.waitForSelector(SETTLED, { state: "attached" });
        },
        text: (s) => page.$eval(s, (e) => e.textContent),
        attribute: (s, n) => page.$eval(s, (e, name) => e.getAttribute(name), n),
        evalAll: (s, fn) => page.$$eval(s, fn as (elements: unknown[]) => never),
        evaluate: (fn) => page.evaluate(fn),
        screenshot: async (f) => void (await page.screenshot({ path: f })),
        close: () => context.close(),
      };
    },
    close: () => browser.close(),
  };
}

/**
 * Prefs on top of puppeteer's defaults (which already switch off updates,
 * telemetry and safe browsing): no connectivity or captive-portal probes, and
 * Firefox's own file:// origin policy back on (puppeteer relaxes it), so the
 * page is tested as a person opening it from disk gets it.
 */
const FIREFOX_PREFS: Record<string, unknown> = {
  "security.fileuri.strict_origin_policy": true,
  "network.captive-portal-service.enabled": false,
  "network.connectivity-service.enabled": false,
  "browser.region.network.url": "",
};

async function launchFirefox(t: BrowserTarget, lo: LaunchOptions = {}): Promise<BrowserDriver> {
  const browser = await launchPuppeteer({
    browser: "firefox",
    executablePath: t.executable,
    protocol: "webDriverBiDi",
    headless: true,
    // Downloads go to downloadDir, never to the user's own Downloads folder (none: they are refused).
    extraPrefsFirefox: {
      ...FIREFOX_PREFS,
      "browser.download.folderList": 2,
      "browser.download.dir": lo.downloadDir ?? "/nonexistent-retrace-downloads",
      "browser.download.useDownloadDir": true,
      "browser.download.always_ask_before_handling_new_types": false,
    },
    // Sized at launch, not emulated: puppeteer's setViewport (and a non-null
    // defaultViewport, which calls it for every new page) sends
    // emulation.setScreenOrientationOverride, which Firefox ESR's WebDriver
    // BiDi does not know (140 ESR: "unknown command"). The headless screen is
    // set to the viewport's size and kiosk mode fills it with the page (a
    // plain --width/--height window keeps ~86 px of toolbars: 1280×714);
    // test/html/html-report.int.test.ts checks the page sees 1280×800.
    defaultViewport: null,
    args: ["--kiosk"],
    env: { ...process.env, MOZ_HEADLESS_WIDTH: String(VIEWPORT.width), MOZ_HEADLESS_HEIGHT: String(VIEWPORT.height) },
  });
  const version = await browser.version();
  return {
    target: t,
    version,
    async open(file, opts = {}) {
      const context = await browser.createBrowserContext();
      const page = await context.newPage();
      await page.setOfflineMode(true);
      if (opts.initScript !== undefined) await page.evaluateOnNewDocument(opts.initScript);
      const events: string[] = [];
      page.on("request", (r) => {
        if (unexpectedRequest(r.url(), file)) events.push(`request ${r.url()}`);
      });
      page.on("dialog", (d) => {
        events.push(`dialog ${d.message()}`);
        void d.dismiss();
      });
      page.on("pageerror", (e) => events.push(`pageerror ${e instanceof Error ? e.message : String(e)}`));
      page.on("console", (m) => {
        if (m.type() === "error") events.push(`console.error ${m.text()}`);
      });
      await page.goto(pathToFileURL(file).href);
      await page.waitForSelector(SETTLED);
      return {
        events,
        click: (s) => page.locator(s).click(),
        select: async (s, v) => void (await page.select(s, v)),
        fill: (s, v) => page.locator(s).fill(v),
        press: (k) => page.keyboard.press(k as Parameters<typeof page.keyboard.press>[0]),
        reload: async () => {
          await page.reload();
          await page.waitForSelector(SETTLED);
        },
        text: (s) => page.$eval(s, (e) => e.textContent),
        attribute: (s, n) => page.$eval(s, (e, name) => e.getAttribute(name), n),
        evalAll: (s, fn) => page.$$eval(s, fn as (elements: unknown[]) => never) as Promise<never>,
        evaluate: (fn) => page.evaluate(fn) as Promise<never>,
        screenshot: async (f) => void (await page.screenshot({ path: f as `${string}.png` })),
        close: () => context.close(),
      };
    },
    close: () => browser.close(),
  };
}

/**
 * Launches `t` (its executable must exist: check `t.skipReason` first) and
 * prints which version was driven, so a CI log shows the browsers it tested.
 * A browser that is installed but cannot be driven throws: its tests fail,
 * they are never skipped.
 */
export async function launchDriver(t: BrowserTarget, lo: LaunchOptions = {}): Promise<BrowserDriver> {
  const driver = t.name === "chromium" ? await launchChromium(t, lo) : await launchFirefox(t, lo);
  process.stdout.write(`browser tests drive ${t.label}: ${driver.version} (${t.executable})\n`);
  return driver;
}
