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
//   that the test sees which language that mail is in; and, in a new context, alice forgets
//   again from the application's sign-in page: the new password set there goes on with that
//   request, to the client's redirect URI with a code (the reset resumes it).
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
import { env, giveUpAfter, runAndReport } from './report.mjs';
import * as shared from './shared.mjs';
import { askChecker, axeControlIn, chromiumOptions, focusedElement, japaneseFont as sharedJapaneseFont, openReporting,
  pageRecord, runAxe, screenshot } from './shared.mjs';

const { script: AXE_SCRIPT, version: AXE_VERSION, tags: AXE_TAGS } = shared.AXE;

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
const seen = shared.newSeen();
let browser;
let walk;
let page;
const contexts = [];

const path = (url) => new URL(url).pathname;
const at = (p) => new URL(p, ISSUER).toString();

// Navigation, focus and forms on the current page (shared.mjs).
const press = (selector, pred) => shared.press(page, selector, pred);
const go = (url) => shared.go(page, url);
const focused = () => focusedElement(page);

// A new browser context and page for `who` ("alice", or "device": alice's other device);
// every context reports console messages, CSP violations, page errors, failed requests and
// error statuses under the walk's and the person's name.
async function open(who) {
  const { context, page: p } = await openReporting(browser, seen, { walk: walk.name, who },
    { locale: walk.locale, bypassCSP: Boolean(walk.axe), viewport: { width: 1280, height: 800 } },
    { waitMs: WAIT_MS, onRequest: (r) => {
      if (r.isNavigationRequest() && !walk.accept_language && who === 'alice') walk.accept_language = r.headers()['accept-language'] ?? null;
    } });
  contexts.push(context);
  page = p;
  return { context, page: p, who };
}

function use(session) {
  page = session.page;
}

// CHECKER (test_reset.py) does what only Python does here: `op` "mail" (wait for the next mail
// to `to`; its link), "redeem" (the code at the token endpoint) or "sessions" (a user's).
const check = (label, body) => askChecker(CHECKER, { walk: walk.name, label, ...body }, WAIT_MS);

// The client's authorization request (code flow, PKCE S256): its URL, state, nonce and verifier.
const authorizationRequest = () => shared.authorizationRequest(ISSUER,
  { clientId: env('CLIENT_ID'), redirectUri: REDIRECT_URI, scope: 'openid email' });

const signIn = (username, password, pred) => shared.signIn(page, username, password, pred);

// axe-core on the page as it stands, in `scheme` (light or dark), with AXE_TAGS' rules
// (as pages.mjs runs it).
async function axe(scheme) {
  return runAxe(page, scheme, { script: AXE_SCRIPT, tags: AXE_TAGS });
}

// Whether this Chromium has a font for Japanese (as pages.mjs checks it).
const japaneseFont = () => sharedJapaneseFont(page);

const shot = (file) => screenshot(page, seen, ARTIFACTS, file, WAIT_MS);

// A page reached by `res`: what it says and in which language, its fields, alerts and focus;
// then its screenshot or axe-core's findings, as the walk asks.
async function visit(name, res) {
  const n = seen.pages.filter((p) => p.walk === walk.name).length + 1;
  const rec = { walk: walk.name, n, name, ...(await pageRecord(page, res, WAIT_MS)) };
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
  facts.forgot_links = login.fields.links.filter((l) => l.href.startsWith('/login/forgot'));

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

  await visit('forgot', await press('a[href^="/login/forgot?challenge="]', (u) => u.pathname === '/login/forgot'));
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

  // A reset asked for from the application's sign-in page and finished in that browser goes
  // on with the application's request: straight to its redirect URI (consent given above).
  if (!walk.axe) {
    await open('resume');
    const again = authorizationRequest();
    await go(again.url);
    await page.waitForLoadState('networkidle');
    await press('a[href^="/login/forgot?challenge="]', (u) => u.pathname === '/login/forgot');
    await page.waitForLoadState('networkidle');
    facts.resume_form_challenge = await page.locator('form[action="/login/forgot"] input[name=challenge]').count();
    await askForLink(alice.email);
    // Each page's own requests (its logo) done before the walk leaves it.
    await page.waitForLoadState('networkidle');
    facts.resume_link = (await check('mail-resume', { op: 'mail', to: alice.email })).link;
    await go(facts.resume_link);
    await page.waitForLoadState('networkidle');
    await page.locator('#new_password').fill(`${NEW_PASSWORD} again`);
    await page.locator('#confirm_password').fill(`${NEW_PASSWORD} again`);
    const resumed = await press('form[action="/login/reset"] button[type=submit]', (u) => u.href.startsWith(REDIRECT_URI));
    const q = Object.fromEntries(new URL(resumed.url()).searchParams);
    facts.resumed = { status: resumed.status(), path: path(resumed.url()), state_ok: q.state === again.state, has_code: Boolean(q.code) };
    facts.resume_redeemed = await check('redeem-resume', { op: 'redeem', code: q.code ?? '', verifier: again.verifier, nonce: again.nonce });
  }
}

// The harness itself, before any page of Authrim (as in pages.mjs): axe-core on a page made
// to fail, with text too faint in both themes, text too faint in the dark theme only, and a
// field without a label.
async function axeControl() {
  return axeControlIn(browser, (p, scheme) => runAxe(p, scheme, { script: AXE_SCRIPT, tags: AXE_TAGS }));
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

await runAndReport(main, () => ({ page, seen }), () => shared.closeAll(contexts, browser));
