// Home-realm discovery on the login form, in Chromium (issue 31): the address typed as the
// username decides where the user signs in. Two walks, each in a fresh browser context:
//  routed: a request of the client (no login_hint) shows the login form; with the keyboard only,
//    the user types ROUTED_EMAIL (at the domain of an organization with its own identity
//    provider), tabs past the empty password and presses Enter: the browser goes to that
//    provider (UPSTREAM_ISSUER). Back returns to a working login form, which sends them there
//    again; they sign in there as UPSTREAM_USER and come back to the client with a code.
//  unrouted: UNROUTED_USER (a domain no organization routes) with an empty password is asked
//    for the password, the name kept.
// test_organizations.py sets the servers up, runs it (conftest.run_browser_program), redeems
// the code and checks the rest. Screenshots: <walk>-<nn>-<page>.png under ARTIFACTS_DIR.
import { chromium } from 'playwright-core';
import { env, giveUpAfter, runAndReport } from './report.mjs';
import { authorizationRequest, chromiumOptions, focusedElement, landed, navigation, screenshot, watchedPage } from './shared.mjs';

const ISSUER = env('ISSUER');
const UPSTREAM = env('UPSTREAM_ISSUER');
const REDIRECT = env('REDIRECT_URI');
const PASSWORD = env('PASSWORD');
const ARTIFACTS = env('ARTIFACTS_DIR');
const WAIT_MS = Number(process.env.WAIT_MS || 10000);
giveUpAfter(90);

const seen = { console: [], page_errors: [], error_responses: [], screenshots: [] };
let browser;
let page;

const shot = (walk, n, name) => screenshot(page, seen, ARTIFACTS, `${walk}-${String(n).padStart(2, '0')}-${name}.png`, WAIT_MS);
const atUpstream = (u) => u.toString().startsWith(UPSTREAM);
const atClient = (u) => u.toString().split('?')[0] === REDIRECT;

/// What the login form shows: the alert, the fields as a user finds them, the note.
const loginForm = () => page.evaluate(() => {
  const pw = document.querySelector('#password');
  const note = pw && document.getElementById(pw.getAttribute('aria-describedby') || '');
  return {
    path: location.pathname,
    heading: document.querySelector('h1')?.textContent.trim() ?? null,
    alert: document.querySelector('[role=alert]')?.textContent.trim() ?? null,
    username: document.querySelector('#username')?.value ?? null,
    password_required: pw ? pw.required : null,
    password_note: note ? note.textContent.trim() : null,
  };
});

/// Types `text` into the focused element, one key at a time as a person does.
const type = (text) => page.keyboard.type(text);

async function routed() {
  page = await watchedPage(browser, seen, WAIT_MS);
  const out = {};
  const req = authorizationRequest(ISSUER, { clientId: env('CLIENT_ID'), redirectUri: REDIRECT, scope: 'openid email' });
  out.request = { state: req.state, nonce: req.nonce, verifier: req.verifier };
  const first = await page.goto(req.url, { waitUntil: 'load' });
  out.login = { status: first.status(), ...(await loginForm()), focused: await focusedElement(page) };
  await shot('routed', 1, 'login');

  // Keyboard only: the username field has the focus; Tab to the password, left empty; Enter.
  await type(env('ROUTED_EMAIL'));
  await page.keyboard.press('Tab');
  out.tabbed_to = await focusedElement(page);
  await Promise.all([page.waitForURL(atUpstream, { waitUntil: 'load' }), page.keyboard.press('Enter')]);
  const there = new URL(page.url());
  out.upstream = { path: there.pathname, login_hint: there.searchParams.get('login_hint'), client_id: there.searchParams.get('client_id'),
    username: await page.locator('#username').inputValue() };
  await shot('routed', 2, 'upstream-login');

  // Back: Authrim's login form again, working (a fresh challenge, not an error page); the same
  // keyboard steps send the browser to the provider again.
  const back = await page.goBack({ waitUntil: 'load' });
  out.back = { url_is_issuer: page.url().startsWith(ISSUER), status: back?.status() ?? null, ...(await loginForm()),
    focused: await focusedElement(page) };
  await shot('routed', 3, 'back');
  await page.locator('#username').focus();
  await page.keyboard.press('ControlOrMeta+A');
  await type(env('ROUTED_EMAIL'));
  await page.keyboard.press('Tab');
  await Promise.all([page.waitForURL(atUpstream, { waitUntil: 'load' }), page.keyboard.press('Enter')]);
  out.again_upstream_path = new URL(page.url()).pathname;

  // At the provider: its own login form (the address came along as its login_hint).
  await page.locator('#username').fill(env('UPSTREAM_USER'));
  await page.locator('#password').fill(PASSWORD);
  await Promise.all([page.waitForURL((u) => !u.pathname.endsWith('/authorize') || !atUpstream(u), { waitUntil: 'load' }),
    page.locator('#password').press('Enter')]);
  // The provider's consent for Authrim, then Authrim's consent for the client, if they come.
  for (let i = 0; i < 4 && !atClient(page.url()); i++) {
    const allow = page.getByRole('button', { name: 'Allow' });
    await Promise.race([page.waitForURL(atClient), allow.waitFor()]);
    if (atClient(page.url())) break;
    out.consents = [...(out.consents || []), new URL(page.url()).origin === new URL(ISSUER).origin ? 'issuer' : 'upstream'];
    const from = page.url();
    await Promise.all([page.waitForURL((u) => u.toString() !== from), allow.click()]);
  }
  await page.waitForURL(atClient);
  out.redirect = Object.fromEntries(new URL(page.url()).searchParams);
  await shot('routed', 4, 'client');
  return out;
}

async function unrouted() {
  page = await watchedPage(browser, seen, WAIT_MS);
  const out = {};
  const req = authorizationRequest(ISSUER, { clientId: env('CLIENT_ID'), redirectUri: REDIRECT, scope: 'openid email' });
  await page.goto(req.url, { waitUntil: 'load' });
  // The autofocus lands at the next rendering update after `load` (later on a busy machine):
  // typing before it lost the first key.
  out.focused = await focusedElement(page);
  await type(env('UNROUTED_USER'));
  await page.keyboard.press('Tab');
  const next = navigation(page, (u) => u.pathname === '/login');
  await page.keyboard.press('Enter');
  const res = await landed(page, await next);
  out.answer = { status: res.status(), ...(await loginForm()), url_is_issuer: page.url().startsWith(ISSUER) };
  await shot('unrouted', 1, 'password-missing');
  return out;
}

async function main() {
  browser = await chromium.launch(chromiumOptions());
  return { routed: await routed(), unrouted: await unrouted(), seen };
}

runAndReport(main, () => ({ page, seen }), async () => { await browser?.close(); });
