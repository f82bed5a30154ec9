// The device authorization grant's verification page in Chromium (RFC 8628 §3.3), while
// openid-client (tests/e2e/openid-client/device.mjs) polls as the device. WALKS, from the
// environment, is a JSON list of walks, each in a fresh browser context:
//  { name, kind: "allow" | "deny", uri }: opens `uri` (the device's verification_uri_complete),
//    signs in, reads the page that asks (which application, the code, the scopes) and answers;
//  { name, kind: "guess", uri, codes }: opens `uri` (the bare verification_uri), signs in, and
//    types each of `codes` into the page's form, recording each answer.
// test_device.py starts the devices, runs this and checks what both saw. Screenshots:
// <walk>-<nn>-<page>.png under ARTIFACTS_DIR.
import { chromium } from 'playwright-core';
import { env, giveUpAfter, runAndReport } from './report.mjs';
import { chromiumOptions, landed, navigation, screenshot, watchedPage } from './shared.mjs';

const USERNAME = env('USERNAME');
const PASSWORD = env('PASSWORD');
const ARTIFACTS = env('ARTIFACTS_DIR');
const WAIT_MS = Number(process.env.WAIT_MS || 10000);
giveUpAfter(90);

const seen = { console: [], page_errors: [], error_responses: [], screenshots: [] };
let browser;
let page;

/// What the device page shows.
const devicePage = (res) => page.evaluate(() => ({
  path: location.pathname,
  heading: document.querySelector('h1')?.textContent.trim() ?? null,
  alert: document.querySelector('[role=alert]')?.textContent.trim() ?? null,
  status_text: document.querySelector('[role=status]')?.textContent.trim() ?? null,
  user_code: document.querySelector('.user-code')?.textContent.trim() ?? null,
  scopes: [...document.querySelectorAll('main ul li')].map((li) => li.textContent.trim()),
  buttons: [...document.querySelectorAll('main button')].map((b) => b.textContent.trim()),
})).then((p) => ({ status: res.status(), ...p }));

/// Submit the form of `button` (a locator) and wait for the answer page, loaded.
async function submit(button, pathname) {
  const next = navigation(page, (u) => u.pathname === pathname);
  await button.click();
  return landed(page, await next);
}

async function signIn(uri) {
  await page.goto(uri, { waitUntil: 'load' });
  await page.locator('#username').fill(USERNAME);
  await page.locator('#password').fill(PASSWORD);
  return submit(page.getByRole('button', { name: 'Sign in', exact: true }), '/device');
}

async function answer(walk) {
  const out = { name: walk.name };
  const asked = await signIn(walk.uri);
  out.asked = await devicePage(asked);
  await screenshot(page, seen, ARTIFACTS, `${walk.name}-01-asked.png`, WAIT_MS);
  // The buttons wait a moment before they take a click (confirm-delay, against clickjacking):
  // Playwright's click waits for them to be enabled.
  const button = page.getByRole('button', { name: walk.kind === 'allow' ? 'Allow' : 'Deny', exact: true });
  out.answered = await devicePage(await submit(button, '/device/decide'));
  await screenshot(page, seen, ARTIFACTS, `${walk.name}-02-answered.png`, WAIT_MS);
  return out;
}

async function guess(walk) {
  const out = { name: walk.name, tries: [] };
  const entry = await signIn(walk.uri);
  out.entry = await devicePage(entry);
  let n = 1;
  for (const code of walk.codes) {
    await page.locator('#user_code').fill(code);
    const res = await submit(page.getByRole('button', { name: 'Continue' }), '/device');
    out.tries.push({ code, ...(await devicePage(res)) });
    await screenshot(page, seen, ARTIFACTS, `${walk.name}-${String(n++).padStart(2, '0')}-tried.png`, WAIT_MS);
  }
  return out;
}

async function main() {
  browser = await chromium.launch(chromiumOptions());
  const walks = [];
  for (const walk of JSON.parse(env('WALKS'))) {
    page = await watchedPage(browser, seen, WAIT_MS);
    walks.push(walk.kind === 'guess' ? await guess(walk) : await answer(walk));
  }
  return { walks, seen };
}

runAndReport(main, () => ({ page, seen }), async () => { await browser?.close(); });
