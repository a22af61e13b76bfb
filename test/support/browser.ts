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
