// The first hour in a real browser (Debian's Chromium, headless, playwright-core): the start
// page, the demo application and a passkey, on a server test_demo.py started as the README
// says (`authrim serve --demo`, no issuer set: the default, http://localhost:PORT).
//
// SCENARIO=walk, one browser profile with a DevTools virtual authenticator (CTAP2, internal,
// resident keys, user verification) added before anything else (with no credential on it,
// the login page's conditional request stays pending, like an autofill offer nobody takes):
//   1. "/": its links (demo, account, console, discovery) and no "passkeys are off" notice;
//      "Open the demo application" → /demo.
//   2. "Sign in to the demo" → /authorize (state, nonce, PKCE) → the login page (demo /
//      PASSWORD) → consent (Allow) → /demo/callback: the ID token's and the access token's
//      claims as tables, userinfo as JSON (all reported).
//   3. "Sign out" → /logout (id_token_hint, post_logout_redirect_uri) → /demo, which says
//      the user signed out; "Sign in to the demo" asks for the password again (the session
//      ended), then the callback; there "Sign in again" comes back to the callback through
//      the still-open session (a new sign-in, a new nonce).
//   4. /account: "Add a passkey" ("Create the passkey", answered by the authenticator) lists
//      it; "Sign out" (its confirmation); /demo's "Sign in to the demo": the login page's
//      conditional request is answered by the passkey, nothing typed, and the callback's
//      ID token says how (acr/amr, reported).
//   Every new page (start, demo, callback, signed out) is checked by axe-core (WCAG 2.2 AA)
//   in light and dark, and at 390x844 (a phone) for horizontal overflow, in English; the start
//   and demo pages in Japanese and French too.
// SCENARIO=ip (a server whose issuer is http://127.0.0.1:PORT, passkeys off): "/", the login
//   page (from /demo/start) and, once signed in, /account each report their "passkeys are
//   off" notice, with axe on each.
//
// Input, from the environment: SCENARIO, ISSUER, PASSWORD (the demo user's), CHROMIUM,
// ARTIFACTS_DIR (screenshots; on failure the page's HTML and a screenshot), WAIT_MS. Output:
// one line of JSON, what the browser saw.
import { chromium } from 'playwright-core';
import { env, giveUpAfter, runAndReport } from './report.mjs';
import { AXE, chromiumOptions, go, navigation as nav, landed, runAxe, screenshot } from './shared.mjs';

const SCENARIO = env('SCENARIO');
const ISSUER = env('ISSUER');
const PASSWORD = env('PASSWORD');
const ARTIFACTS = env('ARTIFACTS_DIR');
const WAIT_MS = Number(process.env.WAIT_MS || 10000);
const PHONE = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 };

giveUpAfter(100);

const seen = { console: [], page_errors: [], failed_requests: [], error_responses: [], screenshots: [], webauthn: [] };
let browser;
const contexts = [];
let page;

const url = (path) => new URL(path, ISSUER).href;
const text = async (p = page) => (await p.locator('main').innerText()).replace(/\s+/g, ' ').trim();
const heading = (p = page) => p.locator('h1').first().textContent({ timeout: WAIT_MS }).then((t) => t.trim());
const shot = (name, p = page) => screenshot(p, seen, ARTIFACTS, `${SCENARIO}-${name}.png`, WAIT_MS);
const axe = (scheme, p = page) => runAxe(p, scheme, AXE);

async function newPage(options = {}) {
  const context = await browser.newContext({ bypassCSP: true, ...options }); // axe-core is injected inline
  contexts.push(context);
  const p = await context.newPage();
  p.setDefaultTimeout(WAIT_MS);
  p.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') seen.console.push(m.text()); });
  p.on('pageerror', (e) => seen.page_errors.push(String(e)));
  p.on('requestfailed', (r) => seen.failed_requests.push(`${r.method()} ${r.url()} ${r.failure()?.errorText}`));
  p.on('response', (r) => { if (r.status() >= 500) seen.error_responses.push(`${r.status()} ${r.url()}`); });
  return p;
}

// Click `locator` and wait for the main-frame navigation whose URL passes `pred`, loaded.
async function press(locator, pred, p = page) {
  const next = p.waitForResponse((r) => r.request().isNavigationRequest() && r.frame() === p.mainFrame() && pred(new URL(r.url())));
  await locator.click();
  const res = await next;
  await p.waitForURL((u) => u.href === res.url(), { waitUntil: 'load' });
  return res;
}

// A page as the checks want it: where, heading, text, axe in light and dark.
async function record(name, p = page, { withAxe = true } = {}) {
  const rec = { name, path: new URL(p.url()).pathname, search: new URL(p.url()).search, heading: await heading(p),
    text: await text(p), lang: await p.locator('html').getAttribute('lang') };
  if (withAxe) rec.axe = [await axe('light', p), await axe('dark', p)];
  await shot(name, p);
  return rec;
}

// Horizontal overflow at a phone's width: what sticks out, if anything.
const widths = (p) => p.evaluate(() => ({ scroll_width: document.documentElement.scrollWidth,
  client_width: document.documentElement.clientWidth,
  overflowing: [...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > document.documentElement.clientWidth + 0.5)
    .slice(0, 5).map((e) => `${e.tagName.toLowerCase()}${e.className ? '.' + e.className : ''}: right ${Math.round(e.getBoundingClientRect().right)}`) }));

// The page as it stands, at a phone's width (then back): what overflows.
async function atPhoneWidth(name) {
  const before = page.viewportSize();
  await page.setViewportSize(PHONE.viewport);
  const w = await widths(page);
  await shot(`${name}-phone`);
  await page.setViewportSize(before);
  return w;
}

// The callback page: its tables and the userinfo JSON.
const callbackFacts = () => page.evaluate(() => {
  const table = (id) => Object.fromEntries([...document.querySelectorAll(`h2#${id} + div table tbody tr`)]
    .map((tr) => [tr.querySelector('th').textContent.trim(), tr.querySelector('td code').textContent.trim()]));
  return { id_token: table('id-token'), access_token: table('access-token'),
    userinfo: JSON.parse(document.querySelector('pre').textContent),
    buttons: [...document.querySelectorAll('main button')].map((b) => b.textContent.trim()) };
});

// The login page: the demo user and password, then consent if it is asked.
async function signInWithPassword() {
  await page.locator('#username').fill('demo');
  await page.locator('#password').fill(PASSWORD);
  const res = await press(page.getByRole('button', { name: 'Sign in', exact: true }),
    (u) => u.pathname === '/consent' || u.pathname === '/demo/callback');
  if (new URL(res.url()).pathname === '/consent') {
    return press(page.getByRole('button', { name: 'Allow' }), (u) => u.pathname === '/demo/callback');
  }
  return res;
}

async function phoneAndLanguages(paths) {
  const out = {};
  const phone = await newPage(PHONE);
  for (const path of paths) {
    await phone.goto(url(path), { waitUntil: 'load' });
    out[path] = { widths: await widths(phone) };
    await shot(`phone${path.replaceAll('/', '-') || '-start'}`, phone);
  }
  for (const lang of ['ja', 'fr']) {
    const p = await newPage({ locale: lang, extraHTTPHeaders: { 'accept-language': lang } });
    for (const path of ['/', '/demo']) {
      await p.goto(url(path), { waitUntil: 'load' });
      out[`${lang}${path}`] = { lang: await p.locator('html').getAttribute('lang'), heading: await heading(p),
        text: await text(p), axe: [await axe('light', p), await axe('dark', p)] };
    }
  }
  return out;
}

async function walk() {
  page = await newPage();
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', { options: {
    protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true,
    isUserVerified: true, automaticPresenceSimulation: true } });
  cdp.on('WebAuthn.credentialAdded', () => seen.webauthn.push('added'));
  cdp.on('WebAuthn.credentialAsserted', () => seen.webauthn.push('asserted'));
  const out = { pages: [] };

  // 1. The start page.
  await go(page, url('/'));
  const start = await record('01-start');
  start.links = await page.locator('main a').evaluateAll((l) => l.map((a) => ({ text: a.textContent.trim(), href: a.getAttribute('href') })));
  start.passkeys_off = await page.locator('#passkeys-off').count();
  out.pages.push(start);
  await press(page.getByRole('link', { name: 'Open the demo application' }), (u) => u.pathname === '/demo');
  out.pages.push(await record('02-demo'));

  // 2. Sign in through the demo client.
  const authorize = nav(page, (u) => u.pathname === '/authorize');
  await press(page.getByRole('link', { name: 'Sign in to the demo' }), (u) => u.pathname === '/authorize');
  const query = new URL((await authorize).url()).searchParams;
  out.authorize = Object.fromEntries(['client_id', 'response_type', 'scope', 'code_challenge_method', 'redirect_uri']
    .map((k) => [k, query.get(k)]).concat([['has_state', query.has('state')], ['has_nonce', query.has('nonce')], ['has_code_challenge', query.has('code_challenge')]]));
  out.login = await record('03-login', page, { withAxe: false });
  await signInWithPassword();
  const first = await record('04-callback');
  first.facts = await callbackFacts();
  first.widths = await atPhoneWidth('04-callback');
  out.pages.push(first);

  // 3. Sign out, back on the demo page; sign in again (the password: the session ended).
  await press(page.getByRole('button', { name: 'Sign out' }), (u) => u.pathname === '/demo');
  const signedOut = await record('05-signed-out');
  signedOut.notice = await page.getByRole('status').textContent().then((t) => t.trim()).catch(() => null);
  signedOut.widths = await atPhoneWidth('05-signed-out');
  out.pages.push(signedOut);
  await press(page.getByRole('link', { name: 'Sign in to the demo' }), (u) => u.pathname === '/login' || u.pathname === '/authorize');
  out.after_sign_out = { path: new URL(page.url()).pathname, heading: await heading(), password_field: await page.locator('#password').count() };
  await signInWithPassword();
  const second = { facts: await callbackFacts() };
  const again = await press(page.getByRole('button', { name: 'Sign in again' }), (u) => u.pathname === '/demo/callback' || u.pathname === '/consent');
  if (new URL(again.url()).pathname === '/consent') {
    await press(page.getByRole('button', { name: 'Allow' }), (u) => u.pathname === '/demo/callback');
  }
  const third = { path: new URL(page.url()).pathname, facts: await callbackFacts() };
  out.sign_ins = [first.facts.id_token, second.facts.id_token, third.facts.id_token];
  out.third_path = third.path;

  // 4. A passkey on the account page, then a sign-in to the demo with it alone.
  await go(page, url('/account'));
  out.account = { path: new URL(page.url()).pathname, passkeys_off: await page.locator('#passkeys-off').count() };
  await press(page.getByRole('button', { name: 'Add a passkey' }), (u) => u.pathname === '/account/passkeys/new');
  await press(page.getByRole('button', { name: 'Create the passkey' }), (u) => u.pathname === '/account');
  out.account.after_add = await text();
  await shot('06-account-passkey');
  await press(page.getByRole('link', { name: 'Sign out' }), (u) => u.pathname === '/logout');
  await press(page.getByRole('button', { name: 'Sign out', exact: true }), (u) => u.pathname.startsWith('/logout'));
  await go(page, url('/demo'));
  // The login page's conditional request is answered by the passkey: no click, no typing.
  const landedOn = nav(page, (u) => u.pathname === '/demo/callback' || u.pathname === '/consent');
  await page.getByRole('link', { name: 'Sign in to the demo' }).click();
  let res = await landedOn;
  await landed(page, res);
  if (new URL(res.url()).pathname === '/consent') {
    res = await press(page.getByRole('button', { name: 'Allow' }), (u) => u.pathname === '/demo/callback');
  }
  out.passkey_sign_in = (await callbackFacts()).id_token;
  await shot('07-callback-passkey');
  const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
  out.credentials = credentials.map((c) => ({ rp_id: c.rpId, resident: c.isResidentCredential }));

  out.webauthn = seen.webauthn;
  out.more = await phoneAndLanguages(['/', '/demo']);
  return out;
}

async function ipIssuer() {
  page = await newPage();
  const out = {};
  await go(page, url('/'));
  out.start = await record('01-start');
  out.start.notice = await page.locator('#passkeys-off').textContent().then((t) => t.trim()).catch(() => null);
  await go(page, url('/demo/start'));
  out.login = await record('02-login');
  out.login.notice = await page.locator('#passkeys-off').textContent().then((t) => t.trim()).catch(() => null);
  out.login.passkey_button = await page.getByRole('button', { name: 'Sign in with a passkey' }).count();
  await go(page, url('/account'));
  await page.locator('#username').fill('demo');
  await page.locator('#password').fill(PASSWORD);
  await press(page.getByRole('button', { name: 'Sign in', exact: true }), (u) => u.pathname === '/account');
  out.account = await record('03-account');
  out.account.notice = await page.locator('#passkeys-off').textContent().then((t) => t.trim()).catch(() => null);
  out.account.add_passkey = await page.getByRole('button', { name: 'Add a passkey' }).count();
  return out;
}

await runAndReport(async () => {
  browser = await chromium.launch(chromiumOptions());
  return SCENARIO === 'ip' ? ipIssuer() : walk();
}, () => ({ page, seen }), async () => {
  for (const c of contexts) await c.close().catch(() => {});
  await browser?.close().catch(() => {});
});
