import { chromium, type Browser } from 'playwright-core';

/** Debian's Chromium (installed by .ci/ensure-packages.sh), headless. */
export const CHROMIUM = process.env.TANDEM_CHROMIUM ?? '/usr/bin/chromium';

export async function launchChromium(): Promise<Browser> {
  // --no-sandbox: CI runs as root, where Chromium refuses its sandbox.
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu'] });
}

/** Open `url` and collect console errors and uncaught page errors; optionally save a screenshot. */
export async function pageErrors(browser: Browser, url: string, screenshot?: string): Promise<{ errors: string[]; title: string }> {
  const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning') errors.push(`console ${message.type()}: ${message.text()}`);
  });
  page.on('pageerror', (error) => errors.push(`page error: ${error.message}`));
  try {
    await page.goto(url, { waitUntil: 'load' });
    if (screenshot) await page.screenshot({ path: screenshot, fullPage: false });
    return { errors, title: await page.title() };
  } finally {
    await page.close();
  }
}

/** The page's DOM as the predicates below use it (tests compile without the DOM types). */
interface PageDom {
  readonly document: { getElementById(id: string): { readonly dataset: Record<string, string | undefined>; readonly textContent: string | null } | null };
}

/**
 * Page predicates for `waitForFunction`. Functions, not strings: Playwright evaluates a string predicate with
 * `eval`, which a page with a strict CSP (the dashboard's) refuses.
 */
export const pagePredicates = {
  /** The dashboard's live region got its `end` event. */
  liveEnded: (): boolean => (globalThis as unknown as PageDom).document.getElementById('live')?.dataset.ended === 'true',
  /** The live region has been filled by the stream at least once. */
  liveUpdated: (): boolean => (globalThis as unknown as PageDom).document.getElementById('live')?.dataset.updatedAt !== undefined,
  /** The page's clock when the live region first holds `text`. */
  liveShows: (text: string): number | false =>
    (globalThis as unknown as PageDom).document.getElementById('live')?.textContent?.includes(text) ? Date.now() : false,
};
