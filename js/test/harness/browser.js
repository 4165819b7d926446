// Headless Chromium through playwright-core, using Debian's chromium (no
// browser download). Console errors of the page are collected so a test can
// show them when it fails.

import { chromium } from 'playwright-core';
import { chromiumPath } from '../paths.js';

/** Chromium's flags for the tests: headless, no sandbox (root in CI), no background traffic. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Opens a page at url; returns {page, logs, close}. */
export async function openPage(url) {
  const browser = await chromium.launch({ executablePath: chromiumPath, args: CHROMIUM_ARGS });
  const page = await browser.newPage();
  const logs = [];
  page.on('console', (m) => logs.push(`${m.type()}: ${m.text()}`));
  page.on('pageerror', (e) => logs.push(`pageerror: ${e.message}`));
  await page.goto(url);
  return { page, logs, close: () => browser.close() };
}
