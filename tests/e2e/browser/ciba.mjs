// The user's side of CIBA in a real browser (Debian's Chromium, headless, driven by
// Playwright): the account page as the authentication device. test_ciba.py has a client
// (openid-client, ../openid-client/ciba.mjs) ask for a sign-in by login_hint with a binding
// message, then runs this: /account through its own sign-in (the password), the request
// listed under "Sign-in requests" with the application's name and the message, and its
// Approve or Deny button; then the page again, with the notice and no request left.
//
// Input, from the environment: ISSUER, USERNAME, PASSWORD, BINDING_MESSAGE, DECISION
// ("approve" or "deny"), CHROMIUM, ARTIFACTS_DIR (on failure the page's HTML and a
// screenshot). Output: one line of JSON, what the browser saw.
import { chromium } from 'playwright-core';
import { env, giveUpAfter, runAndReport } from './report.mjs';
import { chromiumOptions } from './shared.mjs';

const ISSUER = env('ISSUER');
const MESSAGE = env('BINDING_MESSAGE');
const DECISION = env('DECISION');

giveUpAfter(60);

const seen = { console: [] };
let browser;
let page;

async function main() {
  browser = await chromium.launch(chromiumOptions());
  const context = await browser.newContext({ locale: 'en-US' });
  page = await context.newPage();
  page.on('console', (m) => seen.console.push(m.text()));
  await page.goto(new URL('/account', ISSUER).toString());
  // The account page signs in first (its own client, through /authorize).
  await page.fill('#username', env('USERNAME'));
  await page.fill('#password', env('PASSWORD'));
  await Promise.all([
    page.waitForURL((u) => u.pathname === '/account'),
    page.locator(`form[action$="/login"] button[type=submit]`).click(),
  ]);
  const items = page.locator('ul.requests > li');
  const item = items.filter({ hasText: MESSAGE });
  const listed = { all: await items.count(), matching: await item.count(), text: await item.first().innerText() };
  const heading = await page.locator('h2#requests').innerText();
  await Promise.all([
    page.waitForURL((u) => u.searchParams.has('done')),
    item.first().locator(`form[action$="/account/requests/${DECISION}"] button`).click(),
  ]);
  return {
    heading,
    listed,
    notice: await page.locator('p.notice').innerText(),
    left: await page.locator('ul.requests > li').count(),
    url: page.url(),
  };
}

await runAndReport(main, () => ({ page, seen }), async () => browser?.close());
