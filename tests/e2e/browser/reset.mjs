// The forgotten password in a real browser (Debian's Chromium, headless, driven by
// Playwright), with the mail read from a real SMTP server. test_reset.py starts Authrim with
// AUTHRIM_SMTP_URL pointing at an aiosmtpd server it runs, registers a client and each walk's
// people, runs CHECKER (an HTTP server of its own: it hands this program the link of the next
// mail to an address once aiosmtpd has received it, redeems a code at the token endpoint, counts
// a user's sessions through the admin API, and serves the client's redirect URI) and checks
// what this prints, and every mail.
//
// A walk, for its person alice-<walk> (and the walk's extra person, below), in a new browser
// context, takes these pages in order and "visits" each (see visit()):
//   login (the client's /authorize: its "Forgot your password?" link); [the other device: a
//   second context signs alice in to /account with her old password]; forgot (the link, GET
//   /login/forgot); sent-unknown (an address no account has: POST /login/forgot); sent (/login/
//   forgot again, her e-mail address); [CHECKER: the mail to her, its link]; reset (the link,
//   GET /login/reset); reset-mismatch (two passwords that differ: 422, the form again with its
//   alert focused); reset-done (the new password twice); [the other device: /account reloaded
//   asks to sign in again]; link-spent (the link again: 400); login-old-password (back to the
//   authorization request, the old password: 401); consent (the new password); then Allow and
//   the client's redirect URI with a code, which CHECKER redeems. Walks "en" and "ja" then ask
//   for the extra person's link (by username: yuki-<walk> has locale ja, bob-<walk> none), so
//   that the test sees which language that mail is in.
// Buttons and links are found by the forms they post to and where they lead, not by their
// words, so the same walk runs in every language.
//
// Walks "en" (browser locale en-US) and "ja" (ja-JP): each page's status, headers, <html lang>,
//   title, heading, text (with the language each piece is marked as), alerts, focus, labels,
//   and a full-page screenshot (<walk>-<nn>-<page>.png).
// Walks "axe-en" and "axe-ja": the same, in contexts with bypassCSP (axe-core is injected into
//   the page; only these contexts bypass the pages' script-src 'self', the others report any
//   violation), without the other device and the extra person: axe-core with AXE_TAGS on the
//   reset pages (AXE_PAGES) in the light theme, then the dark one, after a control page made
//   to fail proves the harness (axeControl, as in pages.mjs).
//
// Input, from the environment: ISSUER, CLIENT_ID, REDIRECT_URI (served by CHECKER), CHECKER,
// USERS (JSON: per walk, its people: username, email, id, and the walk's extra person),
// OLD_PASSWORD, NEW_PASSWORD, CHROMIUM, ARTIFACTS_DIR (screenshots; on failure the page's HTML
// and a screenshot) and WAIT_MS (the longest any one wait may take). Output: one line of JSON,
// what the browser saw. Any failed step exits 1 with the browser's console, CSP reports and
// the current page on stderr.
import { chromium } from 'playwright-core';
import { createHash, randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { env, giveUpAfter, runAndReport } from './report.mjs';
import { AXE_CONTROL_CONTEXT, axeControlRuns, chromiumOptions, japaneseFont as sharedJapaneseFont, runAxe, screenshot,
  textParts } from './shared.mjs';

const require = createRequire(import.meta.url);
const AXE_SCRIPT = require.resolve('axe-core/axe.min.js');
const AXE_VERSION = require('axe-core/package.json').version;
const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'];

const ISSUER = env('ISSUER');
const CHECKER = env('CHECKER');
const REDIRECT_URI = env('REDIRECT_URI');
const USERS = JSON.parse(env('USERS'));
const OLD_PASSWORD = env('OLD_PASSWORD');
const NEW_PASSWORD = env('NEW_PASSWORD');
const ARTIFACTS = env('ARTIFACTS_DIR');
const WAIT_MS = Number(process.env.WAIT_MS || 10000);

giveUpAfter(100);

const WALKS = [
  { name: 'en', locale: 'en-US', shots: true, extra: 'yuki' },
  { name: 'ja', locale: 'ja-JP', shots: true, extra: 'bob' },
  { name: 'axe-en', locale: 'en-US', axe: true },
  { name: 'axe-ja', locale: 'ja-JP', axe: true },
];
// The pages axe-core checks: the reset flow's own.
const AXE_PAGES = new Set(['forgot', 'sent', 'reset', 'reset-mismatch', 'reset-done', 'link-spent']);

// What the browser reports along the way, for the checks and for a failure's diagnosis;
// every entry names the walk (and the person: "alice", or "device" for the other device).
const seen = { walks: [], pages: [], facts: {}, console: [], page_errors: [], csp_violations: [],
  failed_requests: [], error_responses: [], screenshots: [], japanese_font: null, axe_control: null };
let browser;
let walk;
let page;
const contexts = [];

const path = (url) => new URL(url).pathname;
const at = (p) => new URL(p, ISSUER).toString();
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

// The focused element, described: what a keyboard user is on.
const focused = () => page.evaluate(() => {
  const e = document.activeElement;
  if (!e || e === document.body || e === document.documentElement) return null;
  return { tag: e.tagName.toLowerCase(), id: e.id || null, name: e.getAttribute('name'), type: e.getAttribute('type'),
    role: e.getAttribute('role'), tabindex: e.getAttribute('tabindex'), class: e.getAttribute('class'),
    form_action: e.form?.getAttribute('action') ?? null,
    text: (e.innerText || e.value || '').replace(/\s+/g, ' ').trim().slice(0, 120) };
});

// Every visible form field with the text of its label(s), and the visible buttons.
const fields = () => page.evaluate(() => {
  const visible = (e) => e.checkVisibility();
  return {
    inputs: [...document.querySelectorAll('main input, main select, main textarea')].filter((e) => e.type !== 'hidden' && visible(e))
      .map((e) => ({ id: e.id || null, name: e.name, type: e.type, autocomplete: e.getAttribute('autocomplete'),
        required: e.required, value_length: e.value.length,
        labels: [...(e.labels ?? [])].map((l) => l.textContent.replace(/\s+/g, ' ').trim()) })),
    hidden: [...document.querySelectorAll('main input[type=hidden]')].map((e) => ({ name: e.name, has_value: e.value.length > 0 })),
    buttons: [...document.querySelectorAll('main button')].filter(visible)
      .map((b) => ({ text: b.textContent.replace(/\s+/g, ' ').trim(), type: b.type, form_action: b.form?.getAttribute('action') ?? null })),
    links: [...document.querySelectorAll('main a[href]')].filter(visible)
      .map((a) => ({ href: a.getAttribute('href'), text: a.textContent.replace(/\s+/g, ' ').trim() })),
  };
});

// A new browser context and page for `who` ("alice", or "device": alice's other device);
// every context reports console messages, CSP violations, page errors, failed requests and
// error statuses under the walk's and the person's name.
async function open(who) {
  const context = await browser.newContext({ locale: walk.locale, colorScheme: 'light', bypassCSP: Boolean(walk.axe),
    viewport: { width: 1280, height: 800 } });
  contexts.push(context);
  context.setDefaultTimeout(WAIT_MS);
  context.setDefaultNavigationTimeout(WAIT_MS);
  const w = walk.name;
  await context.exposeBinding('__authrimCspViolation', ({ frame }, v) => seen.csp_violations.push({ walk: w, who, ...v, frame: frame.url() }));
  await context.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => window.__authrimCspViolation({
      documentURI: e.documentURI, blockedURI: e.blockedURI, effectiveDirective: e.effectiveDirective,
      originalPolicy: e.originalPolicy, disposition: e.disposition, sourceFile: e.sourceFile, lineNumber: e.lineNumber,
    }));
  });
  const p = await context.newPage();
  p.on('console', (m) => seen.console.push({ walk: w, who, type: m.type(), text: m.text(), url: m.location().url }));
  p.on('pageerror', (e) => seen.page_errors.push({ walk: w, who, error: String(e) }));
  p.on('requestfailed', (r) => seen.failed_requests.push({ walk: w, who, url: r.url(), error: r.failure()?.errorText }));
  p.on('response', (r) => {
    if (r.status() >= 400) seen.error_responses.push({ walk: w, who, method: r.request().method(), url: r.url(), status: r.status() });
  });
  p.on('request', (r) => {
    if (r.isNavigationRequest() && !walk.accept_language && who === 'alice') walk.accept_language = r.headers()['accept-language'] ?? null;
  });
  page = p;
  return { context, page: p, who };
}

function use(session) {
  page = session.page;
}

// CHECKER (test_reset.py) does what only Python does here: `op` "mail" (wait for the next mail
// to `to`; its link), "redeem" (the code at the token endpoint) or "sessions" (a user's).
async function check(label, body) {
  const res = await fetch(new URL('/check', CHECKER), { method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ walk: walk.name, label, ...body }), signal: AbortSignal.timeout(WAIT_MS + 5000) });
  if (!res.ok) throw new Error(`the checker (${label}): ${res.status} ${await res.text()}`);
  return res.json();
}

// The client's authorization request (code flow, PKCE S256): its URL, state, nonce and verifier.
function authorizationRequest() {
  const verifier = randomBytes(32).toString('base64url');
  const state = randomBytes(12).toString('base64url');
  const nonce = randomBytes(12).toString('base64url');
  const q = new URLSearchParams({ response_type: 'code', client_id: env('CLIENT_ID'), redirect_uri: REDIRECT_URI,
    scope: 'openid email', state, nonce,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256' });
  return { url: at(`/authorize?${q}`), state, nonce, verifier };
}

async function signIn(username, password, pred) {
  await page.locator('#username').fill(username);
  await page.locator('#password').fill(password);
  return press('form[action="/login"] button[type=submit]', pred);
}

// axe-core on the page as it stands, in `scheme` (light or dark), with AXE_TAGS' rules
// (as pages.mjs runs it).
async function axe(scheme) {
  return runAxe(page, scheme, { script: AXE_SCRIPT, tags: AXE_TAGS });
}

// Every piece of text a reader meets (visible text nodes; accessible names, placeholders and
// titles from attributes; the document's title) with the language it is marked as being in:
// the nearest lang attribute (WCAG 3.1.2, language of parts).
const parts = () => textParts(page);

// Whether this Chromium has a font for Japanese (as pages.mjs checks it).
const japaneseFont = () => sharedJapaneseFont(page);

const shot = (file) => screenshot(page, seen, ARTIFACTS, file, WAIT_MS);

// A page reached by `res`: what it says and in which language, its fields, alerts and focus;
// then its screenshot or axe-core's findings, as the walk asks.
async function visit(name, res) {
  const n = seen.pages.filter((p) => p.walk === walk.name).length + 1;
  const rec = { walk: walk.name, n, name, path: path(page.url()), method: res.request().method(), status: res.status(),
    content_language: res.headers()['content-language'] ?? null, vary: res.headers().vary ?? null,
    content_type: res.headers()['content-type'] ?? null,
    html_lang: await page.locator('html').getAttribute('lang'), title: await page.title(),
    heading: ((await page.locator('h1').first().textContent({ timeout: WAIT_MS })) ?? '').trim(),
    text: await text(), focused: await focused(), fields: await fields(),
    alerts: await page.locator('[role=alert]:visible').evaluateAll((l) => l.map((e) => e.textContent.trim())),
    statuses: await page.locator('[role=status]:visible').evaluateAll((l) => l.map((e) => e.textContent.trim())),
    parts: await parts() };
  if (walk.shots) await shot(`${walk.name}-${String(n).padStart(2, '0')}-${name}.png`);
  if (walk.axe && AXE_PAGES.has(name)) rec.axe = [await axe('light'), await axe('dark')];
  seen.pages.push(rec);
  return rec;
}

// Ask for a link for `login` on the forgot page (which must be the current page).
async function askForLink(login, name) {
  await page.locator('form[action="/login/forgot"] #login').fill(login);
  const res = await press('form[action="/login/forgot"] button[type=submit]', (u) => u.pathname === '/login/forgot');
  return name ? visit(name, res) : res;
}

async function resetWalk() {
  const people = USERS[walk.name];
  const alice = people.alice;
  const facts = { alice: alice.username };
  seen.facts[walk.name] = facts;
  const request = authorizationRequest();
  const me = await open('alice');

  // The application sends alice to sign in; she has forgotten her password.
  const login = await visit('login', await go(request.url));
  seen.japanese_font ??= await japaneseFont();
  facts.forgot_links = login.fields.links.filter((l) => l.href === '/login/forgot');

  // Her other device, still signed in with the old password.
  let device;
  if (!walk.axe) {
    device = await open('device');
    await go(at('/account'));
    const res = await signIn(alice.username, OLD_PASSWORD, (u) => u.pathname === '/account');
    facts.device_before = { path: path(page.url()), status: res.status() };
    facts.sessions_before = await check('sessions-before', { op: 'sessions', user: alice.id });
    use(me);
  }

  await visit('forgot', await press('a[href="/login/forgot"]', (u) => u.pathname === '/login/forgot'));
  // Nobody has this address: the same page, and no mail.
  await askForLink(`nobody-${walk.name}@example.com`, 'sent-unknown');
  await go(at('/login/forgot'));
  await askForLink(alice.email, 'sent');
  const mail = await check('mail', { op: 'mail', to: alice.email });
  facts.link = mail.link;

  await visit('reset', await go(mail.link));
  await page.locator('#new_password').fill(NEW_PASSWORD);
  await page.locator('#confirm_password').fill(`${NEW_PASSWORD} (not the same)`);
  await visit('reset-mismatch', await press('form[action="/login/reset"] button[type=submit]', (u) => u.pathname === '/login/reset'));
  // From the focused alert, Tab goes on to the first field.
  await page.keyboard.press('Tab');
  facts.tab_after_alert = await focused();
  await page.locator('#new_password').fill(NEW_PASSWORD);
  await page.locator('#confirm_password').fill(NEW_PASSWORD);
  await visit('reset-done', await press('form[action="/login/reset"] button[type=submit]', (u) => u.pathname === '/login/reset'));

  if (device) {
    facts.sessions_after = await check('sessions-after', { op: 'sessions', user: alice.id });
    use(device);
    const res = await page.reload({ waitUntil: 'load' });
    facts.device_after = { path: path(page.url()), status: res.status(), heading: ((await page.locator('h1').first().textContent()) ?? '').trim(),
      has_password_field: await page.locator('form[action="/login"] #password').count() };
    use(me);
  }

  // The link works once.
  await visit('link-spent', await go(mail.link));

  // Back to the application's request: the old password no longer works, the new one does.
  await go(request.url);
  await visit('login-old-password', await signIn(alice.username, OLD_PASSWORD, (u) => u.pathname === '/login'));
  facts.old_password_username_kept = await page.locator('#username').inputValue();
  await visit('consent', await signIn(alice.username, NEW_PASSWORD, (u) => u.pathname === '/consent'));
  const callback = await press('form[action="/consent"] button[value=allow]', (u) => u.href.startsWith(REDIRECT_URI));
  const back = Object.fromEntries(new URL(callback.url()).searchParams);
  facts.callback = { status: callback.status(), path: path(callback.url()), state_ok: back.state === request.state,
    has_code: Boolean(back.code), error: back.error ?? null, iss: back.iss ?? null };
  facts.redeemed = await check('redeem', { op: 'redeem', code: back.code ?? '', verifier: request.verifier, nonce: request.nonce });

  // The walk's extra person, by username: which language their mail is in is the test's to see.
  if (walk.extra) {
    await go(at('/login/forgot'));
    await askForLink(people[walk.extra].username);
    facts.extra = { who: walk.extra, link: (await check('mail-extra', { op: 'mail', to: people[walk.extra].email })).link };
  }
}

// The harness itself, before any page of Authrim (as in pages.mjs): axe-core on a page made
// to fail, with text too faint in both themes, text too faint in the dark theme only, and a
// field without a label.
async function axeControl() {
  const context = await browser.newContext(AXE_CONTROL_CONTEXT);
  contexts.push(context);
  page = await context.newPage();
  const control = await axeControlRuns(page, axe);
  await context.close();
  return control;
}

async function main() {
  browser = await chromium.launch(chromiumOptions());
  seen.axe_control = await axeControl();
  for (const w of WALKS) {
    walk = { ...w };
    const started = Date.now();
    await resetWalk();
    while (contexts.length) await contexts.pop().close().catch(() => {});
    seen.walks.push({ ...walk, ms: Date.now() - started });
  }
  return { axe_version: AXE_VERSION, axe_tags: AXE_TAGS, ...seen };
}

await runAndReport(main, () => ({ page, seen }), async () => {
  for (const c of contexts) await c.close().catch(() => {});
  await browser?.close().catch(() => {});
});
