// The account page's e-mail address and its verification in a real browser (Debian's Chromium,
// headless, driven by Playwright), with the mail read from a real SMTP server. test_account_email.py
// starts Authrim with AUTHRIM_SMTP_URL pointing at an aiosmtpd server it runs, creates each walk's
// person erin-<walk> through the admin API (a verified e-mail address; some with a `locale`),
// registers a client and runs CHECKER (an HTTP server of its own: it hands this program the link
// of the next mail to an address once aiosmtpd has received it, reads a user through the admin
// API, redeems a code at the token endpoint, and serves the client's redirect URI) and checks
// what this prints, and every mail.
//
// A walk, in a new browser context ("user"), takes these pages in order and "visits" each (see
// visit()):
//   login (/account: its own sign-in, through /account/login to /authorize); account (signed
//   in: her address "(verified)", no button to send a link); profile (the link to
//   /account/profile: the form, the e-mail field's hint); account-changed (a new address saved:
//   the overview's notice, "(not verified)" and the button; [CHECKER: the mail to the new
//   address, its link; the user: email_verified false]); [full walks: consent (a client's
//   authorization request, scope openid email and the claims parameter asking for email and
//   email_verified in the ID token: consent, then a code, which CHECKER redeems); send-forged
//   (the send button's form with its CSRF token altered: 400)]; account-sent (the button:
//   another link; [CHECKER: its mail]). Then, in a second browser context ("link") without a
//   session: link-replaced (the first link: 400, the second spent it); verify (the second
//   link: GET, a page with a button; [CHECKER: still not verified]); verified (the button:
//   POST; [CHECKER: verified]); link-spent (the link again: 400); [that context's /account
//   asks it to sign in]. Back in the first: account-verified ("(verified)", no button);
//   [full walks: the authorization request again: a code at once, redeemed: email_verified
//   true; the address changed twice (the second save visited: account-changed-again) and the
//   first of the two links opened in the second context: link-changed (400), still not
//   verified].
// Buttons and links are found by the forms they post to and where they lead, not by their
// words, so the same walk runs in every language.
//
// Walks "en" (browser locale en-US) and "ja" (ja-JP), full: each page's status, headers,
//   redirects, <html lang>, title, heading, text (with the language each piece is marked as),
//   alerts, statuses, focus, labels, what the fields hold, and a full-page screenshot
//   (<walk>-<nn>-<page>.png).
// Walks "axe-en" and "axe-ja": the same but the client and the forged and stale links, in
//   contexts with bypassCSP (axe-core is injected into the page; only these contexts bypass the
//   pages' script-src 'self', the others report any violation): axe-core with AXE_TAGS on the
//   pages of AXE_PAGES in the light theme, then the dark one, after a control page made to
//   fail proves the harness (as in pages.mjs).
// Walks "phone-en" and "phone-ja": a phone (390x844, isMobile, touch, 2x) signs in to
//   /account, opens the profile, saves it with only the name changed (account-saved: still
//   verified, no button), then with a long new address (account-changed): how wide each page
//   is (no horizontal scroll), screenshots.
//
// Input, from the environment: ISSUER, CLIENT_ID, REDIRECT_URI (served by CHECKER), CHECKER,
// PEOPLE (JSON: per walk, the person's username, id, name, address and the new addresses:
// new, second, third), PASSWORD, CHROMIUM, ARTIFACTS_DIR (screenshots; on failure the page's
// HTML and a screenshot) and WAIT_MS (the longest any one wait may take). Output: one line of
// JSON, what the browser saw. Any failed step exits 1 with the browser's console, CSP reports
// and the current page on stderr.
import { chromium } from 'playwright-core';
import { env, giveUpAfter, runAndReport } from './report.mjs';
import * as shared from './shared.mjs';
import { askChecker, axeControlIn, chromiumOptions, hops, japaneseFont, openReporting, runAxe } from './shared.mjs';

const ISSUER = env('ISSUER');
const CHECKER = env('CHECKER');
const REDIRECT_URI = env('REDIRECT_URI');
const PEOPLE = JSON.parse(env('PEOPLE'));
const PASSWORD = env('PASSWORD');
const ARTIFACTS = env('ARTIFACTS_DIR');
const WAIT_MS = Number(process.env.WAIT_MS || 10000);

giveUpAfter(80);

const WALKS = [
  { name: 'en', locale: 'en-US', shots: true, full: true },
  { name: 'ja', locale: 'ja-JP', shots: true, full: true },
  { name: 'axe-en', locale: 'en-US', axe: true },
  { name: 'axe-ja', locale: 'ja-JP', axe: true },
  { name: 'phone-en', locale: 'en-US', shots: true, phone: true },
  { name: 'phone-ja', locale: 'ja-JP', shots: true, phone: true },
];
// The pages axe-core checks: the overview with the button (and a notice), the profile form,
// the confirm, done and dead-link pages.
const AXE_PAGES = new Set(['account', 'profile', 'account-changed', 'account-sent', 'verify', 'verified', 'link-spent',
  'account-verified']);
const SEND = '/account/verify-email/send';
const VERIFY = '/account/verify-email';
const SEND_FORM = `form[action="${SEND}"]`;
const PROFILE_FORM = 'form[action="/account/profile"]';

// What the browser reports along the way, for the checks and for a failure's diagnosis;
// every entry names the walk (and the context: "user", or "link" for the one without a session).
const seen = shared.newSeen();
let browser;
let walk;
let page;
const contexts = [];

const at = (p) => new URL(p, ISSUER).toString();
const press = (selector, pred) => shared.press(page, selector, pred);
const go = (url) => shared.go(page, url);
const check = (label, body) => askChecker(CHECKER, { walk: walk.name, label, ...body }, WAIT_MS);
const toAccount = (u) => u.pathname === '/account';

// A new browser context and page for the walk (`who`: "user" or "link"), reporting under its
// name; the current page from now on. The first notes the Accept-Language it sends.
async function open(who) {
  const options = { locale: walk.locale, bypassCSP: Boolean(walk.axe), ...(walk.phone ? shared.PHONE : shared.DESKTOP) };
  const { context, page: p } = await openReporting(browser, seen, { walk: walk.name, who }, options, { waitMs: WAIT_MS,
    onRequest: (r) => {
      if (r.isNavigationRequest() && !walk.accept_language) walk.accept_language = r.headers()['accept-language'] ?? null;
    } });
  contexts.push(context);
  page = p;
  return { context, page: p };
}

// A page reached by `res` (shared.visitPage), with the redirects that led to it and its query.
async function visit(name, res) {
  const rec = await shared.visitPage(page, seen, walk, name, res,
    { waitMs: WAIT_MS, artifacts: ARTIFACTS, axePages: AXE_PAGES, values: true });
  rec.hops = await hops(res);
  rec.query = new URL(page.url()).search;
  return rec;
}

// The overview's e-mail section: the paragraphs that name `address`, and the send buttons.
const emailSection = (address) => page.evaluate(({ address, send }) => ({
  lines: [...document.querySelectorAll('main p')].filter((p) => p.textContent.includes(address))
    .map((p) => p.innerText.replace(/\s+/g, ' ').trim()),
  send_forms: [...document.querySelectorAll(`main form[action="${send}"]`)].map((f) => ({
    method: f.getAttribute('method'), csrf: Boolean(f.querySelector('input[type=hidden][name=csrf]')?.value),
    buttons: [...f.querySelectorAll('button')].map((b) => b.textContent.trim()) })),
}), { address, send: SEND });

// The profile form filled in with `fields` (id: value) and saved; the overview it leads to.
async function saveProfile(fields) {
  for (const [id, value] of Object.entries(fields)) await page.locator(`${PROFILE_FORM} #${id}`).fill(value);
  return press(`${PROFILE_FORM} button[type=submit]`, toAccount);
}

// The client's authorization request with the current session: consent the first time
// (`consent`), then its redirect URI with a code, which CHECKER redeems.
async function codeFlow(label, consent) {
  const request = shared.authorizationRequest(ISSUER, { clientId: env('CLIENT_ID'), redirectUri: REDIRECT_URI,
    scope: 'openid email', extra: { claims: JSON.stringify({ id_token: { email: null, email_verified: null } }) } });
  let res = await go(request.url);
  if (consent) {
    await visit('consent', res);
    res = await press('form[action="/consent"] button[value=allow]', (u) => u.href.startsWith(REDIRECT_URI));
  }
  const back = Object.fromEntries(new URL(res.url()).searchParams);
  return { hops: await hops(res), callback: { path: new URL(res.url()).pathname, state_ok: back.state === request.state,
    has_code: Boolean(back.code), error: back.error ?? null },
  redeemed: await check(label, { op: 'redeem', code: back.code ?? '', verifier: request.verifier, nonce: request.nonce }) };
}

async function emailWalk() {
  const me = PEOPLE[walk.name];
  const facts = {};
  seen.facts[walk.name] = facts;
  const user = (label) => check(label, { op: 'user', id: me.id });

  // /account signs her in through its own login.
  await open('user');
  const mine = page;
  await visit('login', await go(at('/account')));
  seen.japanese_font ??= await japaneseFont(page);
  await visit('account', await shared.signIn(page, me.username, PASSWORD, toAccount));
  facts.account = await emailSection(me.email);

  // The profile: a new address, which a link will verify.
  await visit('profile', await press('main a[href="/account/profile"]', (u) => u.pathname === '/account/profile'));
  facts.email_description = await page.locator('#email').evaluate((e) => e.getAttribute('aria-describedby')
    .split(/\s+/).map((id) => document.getElementById(id)?.textContent.trim()));
  await visit('account-changed', await saveProfile({ email: me.new }));
  facts.account_changed = await emailSection(me.new);
  const first = await check('mail-changed', { op: 'mail', to: me.new });
  facts.user_after_change = await user('user-after-change');

  if (walk.full) {
    // What a client is told now: the new address, not verified.
    facts.flow_before = await codeFlow('redeem-before', true);
    // The send button's form with a CSRF token that is not the session's: refused, no mail.
    await go(at('/account'));
    await page.locator(`${SEND_FORM} input[name=csrf]`).evaluate((e) => {
      e.value = `${e.value.slice(0, -6)}${e.value.endsWith('AAAAAA') ? 'BBBBBB' : 'AAAAAA'}`;
    });
    await visit('send-forged', await press(`${SEND_FORM} button`, (u) => u.pathname === SEND));
    await go(at('/account'));
  }

  // Another link, by the button; it spends the first.
  await visit('account-sent', await press(`${SEND_FORM} button`, toAccount));
  facts.account_sent = await emailSection(me.new);
  const second = await check('mail-sent', { op: 'mail', to: me.new });
  facts.links = [first.link, second.link];

  // The links, opened where she has no session (a phone's mail app, say).
  const other = await open('link');
  facts.link_context_cookies = (await other.context.cookies()).length;
  await visit('link-replaced', await go(first.link));
  await visit('verify', await go(second.link));
  facts.user_after_get = await user('user-after-get');
  await visit('verified', await press(`form[action="${VERIFY}"] button[type=submit]`, (u) => u.pathname === VERIFY));
  facts.user_after_confirm = await user('user-after-confirm');
  await visit('link-spent', await go(second.link));
  const account = await go(at('/account'));
  facts.link_context_account = { path: new URL(page.url()).pathname, hops: await hops(account) };

  // Back where she is signed in: verified.
  page = mine;
  await visit('account-verified', await go(at('/account')));
  facts.account_verified = await emailSection(me.new);

  if (walk.full) {
    // The client now sees the address verified (its consent is remembered).
    facts.flow_after = await codeFlow('redeem-after', false);
    // The address changed twice: the first of the two links verifies nothing.
    await go(at('/account/profile'));
    await saveProfile({ email: me.second });
    const stale = await check('mail-second', { op: 'mail', to: me.second });
    await go(at('/account/profile'));
    await visit('account-changed-again', await saveProfile({ email: me.third }));
    facts.account_changed_again = await emailSection(me.third);
    const latest = await check('mail-third', { op: 'mail', to: me.third });
    facts.stale_links = [stale.link, latest.link];
    page = other.page;
    await visit('link-changed', await go(stale.link));
    facts.user_after_stale = await user('user-after-stale');
  }
}

// On a phone: the overview and the profile; a save that keeps the address, then a long new one.
async function phoneWalk() {
  const me = PEOPLE[walk.name];
  const facts = {};
  seen.facts[walk.name] = facts;
  await open('user');
  await visit('login', await go(at('/account')));
  await visit('account', await shared.signIn(page, me.username, PASSWORD, toAccount));
  await visit('profile', await press('main a[href="/account/profile"]', (u) => u.pathname === '/account/profile'));
  await visit('account-saved', await saveProfile({ name: me.new_name }));
  facts.account_saved = await emailSection(me.email);
  facts.user_after_save = await check('user-after-save', { op: 'user', id: me.id });
  await go(at('/account/profile'));
  await visit('account-changed', await saveProfile({ email: me.new }));
  facts.account_changed = await emailSection(me.new);
}

async function main() {
  browser = await chromium.launch(chromiumOptions());
  seen.axe_control = await axeControlIn(browser, (p, scheme) => runAxe(p, scheme, shared.AXE));
  for (const w of WALKS) {
    walk = { ...w };
    const started = Date.now();
    await (walk.phone ? phoneWalk() : emailWalk());
    while (contexts.length) await contexts.pop().close().catch(() => {});
    seen.walks.push({ ...walk, ms: Date.now() - started });
  }
  return { axe_version: shared.AXE.version, axe_tags: shared.AXE.tags, ...seen };
}

await runAndReport(main, () => ({ page, seen }), () => shared.closeAll(contexts, browser));
