// Every page of Authrim in a real browser (Debian's Chromium, headless, driven by Playwright)
// for accessibility and languages. test_pages.py starts two servers with a localhost issuer
// (passkeys on: the login page shows its passkey form), the second with
// AUTHRIM_ACCOUNT_REAUTH_MAX_AGE=1, registers a client and, for each walk below, the users
// alice-<walk> (a password only), bob-<walk> (an authenticator app: a second factor) and, on
// the second server, carol-<walk>; then checks what this prints.
//
// A full walk, in one new browser context per server (nothing carried from one walk to the
// next), takes every page in this order and "visits" each (see visit()):
//   on ISSUER:        landing (/), error (/authorize with an unknown client_id, 400), login
//                     (the client's /authorize), login-error (alice's wrong password, 401),
//                     consent (her right one), account (/account, through the account client),
//                     add-passkey, add-authenticator-app (its QR code; Cancel), recovery-codes
//                     ("Make new recovery codes"; Done), logout (the account page's "Sign out"
//                     link), signed-out (its button), second-factor (bob's password);
//   on REAUTH_ISSUER: reauth (carol signed in to /account, 2.5 s later a change: 403).
// Buttons and links are found by the forms they post to and where they lead, not by their
// words, so the same walk runs in every language.
//
// SCENARIO=languages: walks "en" (browser locale en-US) and "ja" (ja-JP): each page's
//   Content-Language, <html lang>, title, heading, text, which element has the focus, and a
//   full-page screenshot (<walk>-<nn>-<page>.png; a few also in the dark theme, -dark.png);
//   on the login page the keyboard (below). Walk "ui-locales": an English browser, ui_locales=ja
//   on /authorize (login, login-error, consent, second-factor) and on /logout (logout,
//   signed-out), /account without it in between. Walk "fr" (fr-FR): landing, login, consent
//   and account.
// SCENARIO=mobile: walks "mobile-en" and "mobile-ja" at a 390x844 viewport (a phone: isMobile,
//   touch, 2x pixels): each page's scroll and client widths, and a screenshot.
// SCENARIO=axe: walks "axe-en" and "axe-ja" in contexts with bypassCSP (the pages' CSP allows
//   only their own scripts; axe-core is injected into each page, so only these contexts
//   bypass it: the other scenarios' contexts keep the CSP and report any violation): axe-core
//   with the WCAG 2.0/2.1/2.2 A and AA rules (AXE_TAGS) on each page in the light theme, then in
//   the dark one (prefers-color-scheme emulated, as a browser with colorScheme 'dark' has it),
//   after a control page made to fail (axeControl) proves the harness.
// Every page also reports its text with the language each piece is marked as (for WCAG 3.1.2),
// what sticks out of its box (shared.outOfBox: a control wider than its card or cell), and the
// languages and mobile scenarios whether Chromium has a Japanese font at all.
//
// Keyboard, on the login page ("en" and "ja"): the focus on load (the username field has
// autofocus); Shift+Tab from there (nothing before it: the focus leaves the page) and Tab
// back in, the first control reached from the page's start; the order of the next Tabs (the
// password, the submit button, the passkey button); after a wrong password, whether the
// error (role=alert) has the focus (/assets/ui.js moves it there) and where Tab goes next.
//
// Input, from the environment: SCENARIO, ISSUER, REAUTH_ISSUER, CLIENT_ID, REDIRECT_URI,
// PASSWORD (every user's), CHROMIUM, ARTIFACTS_DIR (screenshots; on failure the page's HTML
// and a screenshot) and WAIT_MS (the longest any one wait may take). Output: one line of
// JSON, what the browser saw. Any failed step exits 1 with the browser's console, CSP reports
// and the current page on stderr.
import { chromium } from 'playwright-core';
import { createHash, randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { env, giveUpAfter, runAndReport } from './report.mjs';
import { AXE_CONTROL_CONTEXT, axeControlRuns, chromiumOptions, japaneseFont as sharedJapaneseFont, outOfBox, runAxe, screenshot,
  textParts, focusedElement } from './shared.mjs';

const require = createRequire(import.meta.url);
const AXE_SCRIPT = require.resolve('axe-core/axe.min.js');
const AXE_VERSION = require('axe-core/package.json').version;
const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'];

const SCENARIO = env('SCENARIO');
const ISSUER = env('ISSUER');
const REAUTH_ISSUER = env('REAUTH_ISSUER');
const ARTIFACTS = env('ARTIFACTS_DIR');
const WAIT_MS = Number(process.env.WAIT_MS || 10000);

giveUpAfter(150);

const PHONE = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 };
// Pages also screenshotted in the dark theme (scenario languages).
const DARK_SHOTS = new Set(['error', 'login-error', 'consent', 'account', 'add-authenticator-app']);
const WALKS = {
  languages: [
    { name: 'en', kind: 'full', locale: 'en-US', shots: true, keyboard: true },
    { name: 'ja', kind: 'full', locale: 'ja-JP', shots: true, keyboard: true },
    { name: 'ui-locales', kind: 'ui_locales', locale: 'en-US', shots: true },
    { name: 'fr', kind: 'fr', locale: 'fr-FR', shots: true },
  ],
  mobile: [
    { name: 'mobile-en', kind: 'full', locale: 'en-US', shots: true, phone: true },
    { name: 'mobile-ja', kind: 'full', locale: 'ja-JP', shots: true, phone: true },
  ],
  axe: [
    { name: 'axe-en', kind: 'full', locale: 'en-US', axe: true },
    { name: 'axe-ja', kind: 'full', locale: 'ja-JP', axe: true },
  ],
}[SCENARIO];
if (!WALKS) throw new Error(`unknown SCENARIO ${SCENARIO}`);

// What the browser reports along the way, for the checks and for a failure's diagnosis;
// every entry names the walk it came from.
const seen = { walks: [], pages: [], keyboard: {}, console: [], page_errors: [], csp_violations: [],
  failed_requests: [], error_responses: [], screenshots: [], japanese_font: null, axe_control: null };
let browser;
let context;
let page;
let walk;

const path = (url) => new URL(url).pathname;
const heading = () => page.locator('h1').first().textContent({ timeout: WAIT_MS });
const text = async () => (await page.locator('body').innerText()).replace(/\s+/g, ' ').trim();

// The next main-frame navigation response whose URL passes `pred`.
const navigation = (pred) => page.waitForResponse((r) => r.request().isNavigationRequest()
  && r.frame() === page.mainFrame() && pred(new URL(r.url())));

// Once the response `res` has arrived: its document committed and loaded.
async function landed(res) {
  await page.waitForURL((u) => u.href === res.url(), { waitUntil: 'load' });
  return res;
}

// Press (click) `selector` and return the navigation response passing `pred`, once loaded.
async function press(selector, pred) {
  const next = navigation(pred);
  await page.locator(selector).click();
  return landed(await next);
}

async function go(url) {
  const res = await page.goto(url, { waitUntil: 'load' });
  if (!res) throw new Error(`no response for ${url}`);
  return res;
}

// The focused element, described: what a keyboard user is on (shared.focusedElement).
const focused = () => focusedElement(page);

async function newContext(issuer) {
  const options = { locale: walk.locale, colorScheme: 'light', bypassCSP: Boolean(walk.axe),
    ...(walk.phone ? PHONE : { viewport: { width: 1280, height: 800 } }) };
  context = await browser.newContext(options);
  context.setDefaultTimeout(WAIT_MS);
  context.setDefaultNavigationTimeout(WAIT_MS);
  await context.exposeBinding('__authrimCspViolation', ({ frame }, v) => seen.csp_violations.push({ walk: walk.name, ...v, frame: frame.url() }));
  await context.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => window.__authrimCspViolation({
      documentURI: e.documentURI, blockedURI: e.blockedURI, effectiveDirective: e.effectiveDirective,
      originalPolicy: e.originalPolicy, disposition: e.disposition, sourceFile: e.sourceFile, lineNumber: e.lineNumber,
    }));
  });
  page = await context.newPage();
  const w = walk.name;
  page.on('console', (m) => seen.console.push({ walk: w, type: m.type(), text: m.text(), url: m.location().url }));
  page.on('pageerror', (e) => seen.page_errors.push({ walk: w, error: String(e) }));
  page.on('requestfailed', (r) => seen.failed_requests.push({ walk: w, url: r.url(), error: r.failure()?.errorText }));
  page.on('response', (r) => {
    if (r.status() >= 400) seen.error_responses.push({ walk: w, method: r.request().method(), url: r.url(), status: r.status() });
  });
  page.on('request', (r) => {
    if (r.isNavigationRequest() && !walk.accept_language) walk.accept_language = r.headers()['accept-language'] ?? null;
  });
  // Every page of this issuer is opened by its URL (the issuer's own host, localhost).
  return (p) => new URL(p, issuer).toString();
}

async function closeContext() {
  await context?.close().catch(() => {});
  context = undefined;
  page = undefined;
}

// The client's authorization request (code flow, PKCE S256), with `extra` parameters.
function authorizeUrl(at, extra = {}) {
  const verifier = randomBytes(32).toString('base64url');
  const q = new URLSearchParams({ response_type: 'code', client_id: env('CLIENT_ID'), redirect_uri: env('REDIRECT_URI'),
    scope: 'openid profile email', state: randomBytes(12).toString('base64url'), nonce: randomBytes(12).toString('base64url'),
    code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256', ...extra });
  return at(`/authorize?${q}`);
}

async function signIn(username, password, pred) {
  await page.locator('#username').fill(username);
  await page.locator('#password').fill(password);
  return press('form[action="/login"] button[type=submit]', pred);
}

// axe-core on the page as it stands, in `scheme` (light or dark), with AXE_TAGS' rules.
async function axe(scheme) {
  return runAxe(page, scheme, { script: AXE_SCRIPT, tags: AXE_TAGS });
}

// A page reached by `res`: what it says and in which language; then, as the walk asks, its
// screenshots, axe-core's findings or its widths.
async function visit(name, res) {
  const n = seen.pages.filter((p) => p.walk === walk.name).length + 1;
  const rec = { walk: walk.name, n, name, path: path(page.url()), method: res.request().method(), status: res.status(),
    content_language: res.headers()['content-language'] ?? null, vary: res.headers().vary ?? null,
    html_lang: await page.locator('html').getAttribute('lang'), title: await page.title(),
    heading: (await heading()).trim(), text: await text(), focused: await focused(),
    alerts: await page.locator('[role=alert]:visible').evaluateAll((l) => l.map((e) => e.textContent.trim())),
    parts: await parts(), out_of_box: await outOfBox(page) };
  if (walk.shots) {
    const base = `${walk.name}-${String(n).padStart(2, '0')}-${name}`;
    await shot(`${base}.png`);
    if (DARK_SHOTS.has(name) && SCENARIO === 'languages' && walk.kind === 'full') {
      await page.emulateMedia({ colorScheme: 'dark' });
      await shot(`${base}-dark.png`);
      await page.emulateMedia({ colorScheme: 'light' });
    }
  }
  if (walk.axe) rec.axe = [await axe('light'), await axe('dark')];
  if (walk.phone) {
    rec.widths = await page.evaluate(() => ({ scroll_width: document.documentElement.scrollWidth,
      client_width: document.documentElement.clientWidth, inner_width: window.innerWidth,
      // What sticks out on the right, if anything does.
      overflowing: [...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > document.documentElement.clientWidth + 0.5)
        .slice(0, 5).map((e) => `${e.tagName.toLowerCase()}${e.className ? '.' + e.className : ''}: right ${Math.round(e.getBoundingClientRect().right)}`) }));
  }
  seen.pages.push(rec);
  return rec;
}

// Every piece of text a reader meets (visible text nodes; accessible names, placeholders and
// titles from attributes; the document's title) with the language it is marked as being in:
// the nearest lang attribute (WCAG 3.1.2, language of parts).
const parts = () => textParts(page);

// Whether this Chromium has a font for Japanese: two different kana drawn differently (with
// no such font both are the same empty box, and the screenshots show boxes).
const japaneseFont = () => sharedJapaneseFont(page);

const shot = (file) => screenshot(page, seen, ARTIFACTS, file, WAIT_MS);

// The login page with the keyboard: see the header.
async function keyboardOnLogin() {
  const out = { on_load: await focused() };
  await page.keyboard.press('Shift+Tab');
  out.before_first = await focused();
  await page.keyboard.press('Tab');
  out.first_tab = await focused();
  out.order = [out.first_tab];
  for (let i = 0; i < 4; i++) {
    await page.keyboard.press('Tab');
    const f = await focused();
    out.order.push(f);
    if (!f) break;
  }
  // Back where a user starts: the username field.
  await page.locator('#username').focus();
  return out;
}

async function keyboardAfterError() {
  const out = await page.evaluate(() => {
    const error = document.querySelector('p.error:not([hidden])');
    return { error_role: error?.getAttribute('role') ?? null, error_tabindex: error?.getAttribute('tabindex') ?? null,
      error_text: error?.textContent.trim() ?? null, error_focused: Boolean(error) && document.activeElement === error,
      username_value: document.getElementById('username')?.value ?? null,
      username_autofocus: document.getElementById('username')?.hasAttribute('autofocus') ?? null };
  });
  out.focused = await focused();
  await page.keyboard.press('Tab');
  out.tab_after = await focused();
  return out;
}

async function fullWalk() {
  const user = (who) => `${who}-${walk.name}`;
  const password = env('PASSWORD');
  {
    const at = await newContext(ISSUER);
    await visit('landing', await go(at('/')));
    seen.japanese_font ??= await japaneseFont();
    await visit('error', await go(at(`/authorize?${new URLSearchParams({ client_id: 'no-such-client', response_type: 'code',
      redirect_uri: env('REDIRECT_URI'), scope: 'openid' })}`)));

    await visit('login', await go(authorizeUrl(at)));
    if (walk.keyboard) seen.keyboard[walk.name] = { login: await keyboardOnLogin() };
    await visit('login-error', await signIn(user('alice'), `${password} (wrong)`, (u) => u.pathname === '/login'));
    if (walk.keyboard) seen.keyboard[walk.name].after_wrong_password = await keyboardAfterError();
    await visit('consent', await signIn(user('alice'), password, (u) => u.pathname === '/consent'));

    // The account page: her session from the sign-in above is enough; a login page if not.
    let res = await go(at('/account'));
    if (path(page.url()) !== '/account') res = await signIn(user('alice'), password, (u) => u.pathname === '/account');
    await visit('account', res);
    await visit('add-passkey', await press('form[action="/account/passkeys/new"] button', (u) => u.pathname === '/account/passkeys/new'));
    await press('a[href="/account"]', (u) => u.pathname === '/account');
    await visit('add-authenticator-app', await press('form[action="/account/totp/new"] button', (u) => u.pathname === '/account/totp/new'));
    await press('a[href="/account"]', (u) => u.pathname === '/account');
    await visit('recovery-codes', await press('form[action="/account/recovery-codes"] button', (u) => u.pathname === '/account/recovery-codes'));
    await press('a[href="/account"]', (u) => u.pathname === '/account');
    await visit('logout', await press('a[href="/logout"]', (u) => u.pathname === '/logout'));
    await visit('signed-out', await press('form[action="/logout/confirm"] button', (u) => u.pathname.startsWith('/logout')));

    await go(authorizeUrl(at));
    await visit('second-factor', await signIn(user('bob'), password, (u) => u.pathname === '/login'));
    await closeContext();
  }
  {
    const at = await newContext(REAUTH_ISSUER);
    await go(at('/account'));
    await signIn(user('carol'), password, (u) => u.pathname === '/account');
    await page.waitForTimeout(2500);
    await page.reload({ waitUntil: 'load' });
    await visit('reauth', await press('form[action="/account/totp/new"] button', (u) => u.pathname === '/account/totp/new'));
    await closeContext();
  }
}

// An English browser; ui_locales=ja on the authorization and logout requests.
async function uiLocalesWalk() {
  const user = (who) => `${who}-${walk.name}`;
  const password = env('PASSWORD');
  const at = await newContext(ISSUER);
  await visit('login', await go(authorizeUrl(at, { ui_locales: 'ja' })));
  await visit('login-error', await signIn(user('alice'), `${password} (wrong)`, (u) => u.pathname === '/login'));
  await visit('consent', await signIn(user('alice'), password, (u) => u.pathname === '/consent'));
  let res = await go(at('/account'));
  if (path(page.url()) !== '/account') res = await signIn(user('alice'), password, (u) => u.pathname === '/account');
  await visit('account', res);
  await visit('logout', await go(at('/logout?ui_locales=ja')));
  await visit('signed-out', await press('form[action="/logout/confirm"] button', (u) => u.pathname.startsWith('/logout')));
  await go(authorizeUrl(at, { ui_locales: 'ja' }));
  await visit('second-factor', await signIn(user('bob'), password, (u) => u.pathname === '/login'));
  await closeContext();
}

async function frenchWalk() {
  const at = await newContext(ISSUER);
  await visit('landing', await go(at('/')));
  await visit('login', await go(authorizeUrl(at)));
  await visit('consent', await signIn(`alice-${walk.name}`, env('PASSWORD'), (u) => u.pathname === '/consent'));
  let res = await go(at('/account'));
  if (path(page.url()) !== '/account') res = await signIn(`alice-${walk.name}`, env('PASSWORD'), (u) => u.pathname === '/account');
  await visit('account', res);
  await closeContext();
}

// The harness itself, before any page of Authrim: axe-core on a page made to fail, with text
// too faint in both themes (.faint: #aaa on #fff, 2.3:1), text too faint in the dark theme
// only (.dark-only: #555 on #333), and a field without a label. What it finds proves that the
// script is injected, that the rules run and that the dark theme is what they see.
async function axeControl() {
  context = await browser.newContext(AXE_CONTROL_CONTEXT);
  page = await context.newPage();
  const control = await axeControlRuns(page, axe);
  await closeContext();
  return control;
}

async function main() {
  browser = await chromium.launch(chromiumOptions());
  if (SCENARIO === 'axe') seen.axe_control = await axeControl();
  for (const w of WALKS) {
    walk = { ...w };
    const started = Date.now();
    await { full: fullWalk, ui_locales: uiLocalesWalk, fr: frenchWalk }[w.kind]();
    seen.walks.push({ ...walk, ms: Date.now() - started });
  }
  return { scenario: SCENARIO, axe_version: AXE_VERSION, axe_tags: AXE_TAGS, ...seen };
}

await runAndReport(main, () => ({ page, seen }), async () => {
  await context?.close().catch(() => {});
  await browser?.close().catch(() => {});
});
