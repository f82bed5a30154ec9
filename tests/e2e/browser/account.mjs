// The account page's sessions, allowed applications and recovery codes in a real browser
// (Debian's Chromium, headless, driven by Playwright), and how the page holds together on a
// desktop and a phone, in English, Japanese and French. test_account.py starts Authrim,
// registers a client ("Example App", scope openid profile email) and, per walk, the person
// alice-<walk>, runs this program and checks what it prints.
//
// A walk:
//   1. context "phone" (an iPhone's Safari User-Agent): the client's authorization request,
//      her password, Allow: a redirect to the client's redirect URI with a code (nobody
//      serves it: the browser's request to it fails); a session there, and a consent;
//   2. context "user" (the walk's browser): /account through its own sign-in (login), where
//      she adds an authenticator app (its key read from the page, the code computed, a long
//      name in FACTOR_NAMES: its "Remove" button has to stay inside the card): account (her
//      two sessions: this one marked, without a button; the phone's "Safari on iPhone"
//      with "Sign out"; the application with what it may see and "Withdraw"; her
//      authenticator app with "Remove");
//   3. the phone's "Sign out": session-ended (the notice, one session left); a prompt=none
//      request with the phone's cookies now comes back with an error;
//   4. "Withdraw": withdrawn (the notice, no application); the client's next request in this
//      context asks for consent again;
//   5. "Make new recovery codes": recovery-codes; "Download" (the file's name, its text) and
//      "Print" (window.print called; the print media shows the codes and no control).
// Every page: its status, language, title, heading, text (with the language of each piece),
// what sticks out of its box (shared.outOfBox), and on a phone how wide it is.
//
// Walks "en" (en-US), "ja" (ja-JP), "fr" (fr-FR) on a desktop, with screenshots; "phone-en",
// "phone-ja" at 390x844 (isMobile), with screenshots; "axe-en", "axe-ja" in bypassCSP contexts:
// axe-core (AXE_TAGS) on every page but the login page in the light and the dark theme, after
// the control page (as in pages.mjs).
//
// Input, from the environment: ISSUER, CLIENT_ID, REDIRECT_URI, PASSWORD, FACTOR_NAMES (JSON:
// walk -> name), CHROMIUM,
// ARTIFACTS_DIR, WAIT_MS. Output: one line of JSON, what the browser saw. Any failed step
// exits 1 with the browser's console, CSP reports and the current page on stderr.
import { chromium } from 'playwright-core';
import { readFileSync } from 'node:fs';
import { env, giveUpAfter, runAndReport } from './report.mjs';
import * as shared from './shared.mjs';
import { axeControlIn, chromiumOptions, hops, japaneseFont, openReporting, outOfBox, runAxe } from './shared.mjs';

const ISSUER = env('ISSUER');
const REDIRECT_URI = env('REDIRECT_URI');
const PASSWORD = env('PASSWORD');
const ARTIFACTS = env('ARTIFACTS_DIR');
const WAIT_MS = Number(process.env.WAIT_MS || 10000);
const FACTOR_NAMES = JSON.parse(env('FACTOR_NAMES'));
const IPHONE_UA = 'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) '
  + 'Version/18.1 Mobile/15E148 Safari/604.1';

giveUpAfter(150);

const WALKS = [
  { name: 'en', locale: 'en-US', shots: true },
  { name: 'ja', locale: 'ja-JP', shots: true },
  { name: 'fr', locale: 'fr-FR', shots: true },
  { name: 'phone-en', locale: 'en-US', shots: true, phone: true },
  { name: 'phone-ja', locale: 'ja-JP', shots: true, phone: true },
  { name: 'axe-en', locale: 'en-US', axe: true },
  { name: 'axe-ja', locale: 'ja-JP', axe: true },
];
const AXE_PAGES = new Set(['account', 'session-ended', 'withdrawn', 'recovery-codes']);

const seen = shared.newSeen();
let browser;
let walk;
let page;
const contexts = [];

const at = (p) => new URL(p, ISSUER).toString();
const press = (selector, pred) => shared.press(page, selector, pred);
const go = (url) => shared.go(page, url);
const toAccount = (u) => u.pathname === '/account';

// A new context for the walk (`who`), its page the current one; what it sends to the client's
// redirect URI (which nobody serves) is kept in `redirects`.
async function open(who, extra = {}) {
  const options = { locale: walk.locale, bypassCSP: Boolean(walk.axe), ...(walk.phone ? shared.PHONE : shared.DESKTOP), ...extra };
  const { context, page: p } = await openReporting(browser, seen, { walk: walk.name, who }, options, { waitMs: WAIT_MS,
    onRequest: (r) => {
      if (who === 'user' && r.isNavigationRequest() && !walk.accept_language) walk.accept_language = r.headers()['accept-language'] ?? null;
    } });
  const redirects = [];
  p.on('request', (r) => {
    if (r.url().startsWith(REDIRECT_URI)) redirects.push(r.url());
  });
  contexts.push(context);
  page = p;
  return { context, page: p, redirects };
}

// The page reached by `res`: what it shows, what sticks out of its box, how wide it is on a
// phone, a screenshot, axe-core's findings.
async function visit(name, res) {
  const rec = await shared.visitPage(page, seen, walk, name, res, { waitMs: WAIT_MS, artifacts: ARTIFACTS, axePages: AXE_PAGES });
  rec.hops = await hops(res);
  rec.out_of_box = await outOfBox(page);
  return rec;
}

// The account page's lists: sessions, applications, sign-in methods.
const lists = () => page.evaluate(() => {
  const text = (e) => e.innerText.replace(/\s+/g, ' ').trim();
  return {
    sessions: [...document.querySelectorAll('ul.sessions > li')].map((li) => ({ text: text(li),
      device: text(li.querySelector('.what strong')), this: Boolean(li.querySelector('.this')),
      times: [...li.querySelectorAll('time')].map((t) => t.getAttribute('datetime')),
      end_label: li.querySelector('form[action="/account/sessions/end"] button')?.getAttribute('aria-label') ?? null })),
    applications: [...document.querySelectorAll('ul.applications > li')].map((li) => ({ name: text(li.querySelector('.what strong')),
      scopes: [...li.querySelectorAll('ul.scopes li')].map(text),
      withdraw_label: li.querySelector('form[action="/account/applications/withdraw"] button')?.getAttribute('aria-label') ?? null })),
    factors: [...document.querySelectorAll('form[action="/account/factors/remove"]')].map((f) => {
      const b = f.querySelector('button').getBoundingClientRect();
      const card = document.querySelector('main').getBoundingClientRect();
      return { label: f.querySelector('button').getAttribute('aria-label'), right: Math.round(b.right), card_right: Math.round(card.right) };
    }),
    notice: document.querySelector('p.notice[role=status]')?.textContent.trim() ?? null,
  };
});

function authorizeUrl(extra = {}) {
  return shared.authorizationRequest(ISSUER, { clientId: env('CLIENT_ID'), redirectUri: REDIRECT_URI, scope: 'openid profile email', extra }).url;
}

async function accountWalk() {
  const me = `alice-${walk.name}`;
  const facts = {};
  seen.facts[walk.name] = facts;

  // 1. Her phone signs in to the application and allows it.
  const phone = await open('phone', { userAgent: IPHONE_UA });
  await go(authorizeUrl());
  await shared.signIn(page, me, PASSWORD, (u) => u.pathname === '/consent');
  const allowed = page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === '/consent');
  await page.locator('form[action="/consent"] button[value=allow]').click();
  const back = (await allowed).headers().location ?? '';
  facts.phone_code = back.startsWith(REDIRECT_URI) && Boolean(new URL(back).searchParams.get('code'));

  // 2. The account page, in this walk's browser.
  const user = await open('user');
  await visit('login', await go(at('/account')));
  seen.japanese_font ??= await japaneseFont(page);
  await shared.signIn(page, me, PASSWORD, toAccount);
  // Her authenticator app, added here (a long name: its "Remove" stays in the card).
  await press('form[action="/account/totp/new"] button', (u) => u.pathname === '/account/totp/new');
  const key = (await page.locator('main p.muted code').textContent()).replace(/\s+/g, '');
  await page.locator('#code').fill(shared.hotp(shared.base32(key), shared.step()));
  await page.locator('#name').fill(FACTOR_NAMES[walk.name]);
  await visit('account', await press('form[action="/account/totp"] button[type=submit]', toAccount));
  facts.account = await lists();

  // 3. The phone's session ends from here.
  await visit('session-ended', await press('form[action="/account/sessions/end"] button', toAccount));
  facts.session_ended = await lists();
  facts.session_ended_hash = new URL(page.url()).hash;
  // The phone asks again without a prompt (its cookies, through its context's requests).
  const silent = await phone.context.request.get(authorizeUrl({ prompt: 'none' }), { maxRedirects: 0 });
  facts.phone_after = Object.fromEntries(new URL(silent.headers().location ?? 'about:blank').searchParams);

  // 4. The application's access withdrawn: its next request asks again.
  await visit('withdrawn', await press('form[action="/account/applications/withdraw"] button', toAccount));
  facts.withdrawn = await lists();
  await go(authorizeUrl());
  facts.next_request = { path: new URL(page.url()).pathname, consent_form: await page.locator('form[action="/consent"]').count() };

  // 5. New recovery codes: download, print.
  await go(at('/account'));
  await visit('recovery-codes', await press('form[action="/account/recovery-codes"] button', (u) => u.pathname === '/account/recovery-codes'));
  const codes = await page.locator('ul.codes code').allTextContents();
  const [download] = await Promise.all([page.waitForEvent('download'),
    page.locator('form[action="/account/recovery-codes/download"] button').click()]);
  facts.download = { file: download.suggestedFilename(), text: readFileSync(await download.path(), 'utf8'), codes,
    failure: await download.failure() };
  await page.evaluate(() => { window.__printed = 0; window.print = () => { window.__printed += 1; }; });
  const printButton = page.locator('button[data-print]');
  facts.print_button = { visible: await printButton.isVisible(), text: (await printButton.textContent()).trim() };
  await printButton.click();
  facts.printed = await page.evaluate(() => window.__printed);
  await page.emulateMedia({ media: 'print' });
  facts.print = await page.evaluate(() => ({
    codes_visible: [...document.querySelectorAll('ul.codes code')].filter((e) => e.checkVisibility()).length,
    heading_visible: document.querySelector('h1').checkVisibility(),
    controls_visible: [...document.querySelectorAll('button, form, a')].filter((e) => e.checkVisibility()).map((e) => e.outerHTML.slice(0, 80)),
  }));
  await page.emulateMedia({ media: 'screen' });
  facts.user_redirects = user.redirects.length;
}

async function main() {
  browser = await chromium.launch(chromiumOptions());
  seen.axe_control = await axeControlIn(browser, (p, scheme) => runAxe(p, scheme, shared.AXE));
  for (const w of WALKS) {
    walk = { ...w };
    const started = Date.now();
    await accountWalk();
    while (contexts.length) await contexts.pop().close().catch(() => {});
    seen.walks.push({ ...walk, ms: Date.now() - started });
  }
  return { axe_version: shared.AXE.version, axe_tags: shared.AXE.tags, ...seen };
}

await runAndReport(main, () => ({ page, seen }), () => shared.closeAll(contexts, browser));
