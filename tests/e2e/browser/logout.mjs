// Authrim's sign-in, consent and logout pages in a real browser: Debian's Chromium, headless,
// driven by Playwright (playwright-core only: it never downloads a browser of its own).
//
// One browser profile, three acts (test_browser.py registers the clients, runs the relying
// parties' pages and checks what this prints):
//   1. Sign-in and consent through the pages: /authorize, the login form, the consent page the
//      login POST redirects to (GET /consent?challenge=…), Allow, the client's redirect URI with
//      a code; then Back, which must land on the consent page's URL by a GET (no form
//      resubmission), now saying the request is complete (no Allow to press again).
//   2. Front-channel logout: signed in to a second client as well, /logout with an
//      id_token_hint, a post_logout_redirect_uri and state; the page frames both clients'
//      frontchannel_logout_uri and its inline script (allowed by a CSP nonce) moves on to the
//      post-logout URI once they have loaded.
//   3. The confirmation page: signed in again, /logout with no parameters asks "Sign out of
//      Authrim?", "Sign out" ends the session, and prompt=none then gets login_required.
//
// Input, from the environment: ISSUER, USERNAME, PASSWORD, CLIENTS (JSON: a list of
// {client_id, client_secret, redirect_uri}; the first has POST_LOGOUT_REDIRECT_URI registered),
// POST_LOGOUT_REDIRECT_URI, CHROMIUM (the browser's path), ARTIFACTS_DIR (where a screenshot
// and the page's HTML go when something fails), and WAIT_MS (the longest any one wait may take).
// Output: one line of JSON, what the browser saw. Any failed step exits 1 with the browser's
// console, CSP reports and the current page on stderr.
import { chromium } from 'playwright-core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { env, giveUpAfter, runAndReport } from './report.mjs';
import { recordCspViolations } from './shared.mjs';
import { randomBytes } from 'node:crypto';

const ISSUER = env('ISSUER');
const CLIENTS = JSON.parse(env('CLIENTS'));
const POST_LOGOUT = env('POST_LOGOUT_REDIRECT_URI');
const WAIT_MS = Number(process.env.WAIT_MS || 10000);

giveUpAfter(75);

const random = () => randomBytes(12).toString('base64url');
const authorizeUrl = (c, state, extra = {}) => {
  const u = new URL('/authorize', ISSUER);
  u.search = new URLSearchParams({ response_type: 'code', client_id: c.client_id, redirect_uri: c.redirect_uri,
    scope: 'openid', state, ...extra }).toString();
  return u.toString();
};
const query = (url) => Object.fromEntries(new URL(url).searchParams);
const at = (url, base) => url.split('?')[0] === base.split('?')[0];
const claims = (jwt) => JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString());

// The code at the token endpoint, as the client's back end would redeem it (client_secret_basic).
async function redeem(c, code) {
  const basic = Buffer.from(`${encodeURIComponent(c.client_id)}:${encodeURIComponent(c.client_secret)}`).toString('base64');
  const res = await fetch(new URL('/token', ISSUER), {
    method: 'POST',
    headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: c.redirect_uri }),
    signal: AbortSignal.timeout(WAIT_MS),
  });
  const body = await res.json();
  if (res.status !== 200 || !body.id_token) throw new Error(`token endpoint: ${res.status} ${JSON.stringify(body)}`);
  return body.id_token;
}

// What the browser reports along the way, for the checks and for a failure's diagnosis.
const seen = { console: [], page_errors: [], csp_violations: [], failed_requests: [], frames: [], documents: [] };
const profile = mkdtempSync(join(tmpdir(), 'authrim-chromium-'));
let context;
let page;

async function main() {
  context = await chromium.launchPersistentContext(profile, {
    executablePath: env('CHROMIUM'),
    headless: true,
    timeout: 30_000,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  // Every CSP violation any document reports (the event fires in the document that broke its
  // policy; the binding and the listener are installed by the browser, outside the page's CSP).
  await recordCspViolations(context, (v, frame) => seen.csp_violations.push({ ...v, frame: frame.url() }));
  // And what each document held once parsed: the end-session page moves on by itself, often
  // before its response body could be read back, so it reports its own iframes and scripts.
  await context.exposeBinding('__authrimDocument', ({ frame }, d) => { if (frame === page?.mainFrame()) seen.documents.push(d); });
  await context.addInitScript(() => {
    document.addEventListener('DOMContentLoaded', () => window.__authrimDocument({
      url: location.href,
      iframes: [...document.querySelectorAll('iframe')].map((f) => f.src),
      scripts: [...document.scripts].map((s) => ({ inline: !s.src, nonce: s.hasAttribute('nonce') })),
      next: document.getElementById('next')?.href ?? null,
    }));
  });
  page = context.pages()[0] ?? await context.newPage();
  page.setDefaultTimeout(WAIT_MS);
  page.setDefaultNavigationTimeout(WAIT_MS);
  page.on('console', (m) => seen.console.push({ type: m.type(), text: m.text(), url: m.location().url }));
  page.on('pageerror', (e) => seen.page_errors.push(String(e)));
  page.on('requestfailed', (r) => seen.failed_requests.push({ url: r.url(), error: r.failure()?.errorText }));
  page.on('framenavigated', (f) => { if (f !== page.mainFrame()) seen.frames.push(f.url()); });

  const [c1, c2] = CLIENTS;
  const out = {};

  // 1. Sign-in and consent through the pages, then Back.
  {
    const state = random();
    const login = await page.goto(authorizeUrl(c1, state));
    const heading = page.getByRole('heading', { level: 1 });
    out.login_page = { status: login.status(), heading: await heading.textContent() };
    await page.fill('#username', env('USERNAME'));
    await page.fill('#password', env('PASSWORD'));
    const consentNav = page.waitForResponse((r) => r.request().isNavigationRequest() && r.url().includes('/consent?'));
    await page.getByRole('button', { name: 'Sign in' }).click();
    const consent = await consentNav;
    await page.waitForLoadState('load');
    const post = consent.request().redirectedFrom();
    out.consent_page = {
      url: page.url(), status: consent.status(), method: consent.request().method(),
      redirected_from: post && { method: post.method(), path: new URL(post.url()).pathname, status: (await post.response())?.status() },
      heading: await heading.textContent(),
    };
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL((u) => at(u.toString(), c1.redirect_uri));
    const cb = query(page.url());
    out.callback = { has_code: Boolean(cb.code), state_ok: cb.state === state, iss: cb.iss ?? null };
    const back = await page.goBack({ waitUntil: 'load' });
    out.back = {
      url: page.url(), status: back?.status() ?? null, method: back?.request().method() ?? null,
      heading: await heading.textContent(), allow_button: await page.getByRole('button', { name: 'Allow' }).count(),
      said: await page.getByRole('status').first().textContent(),
      links: await page.locator('main a, body a').evaluateAll((as) => as.map((a) => a.getAttribute('href'))),
    };
    out.id_token_1 = await redeem(c1, cb.code);
  }

  // 2. The second client, then logout with front-channel iframes and a way back.
  {
    const state = random();
    await page.goto(authorizeUrl(c2, state));
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL((u) => at(u.toString(), c2.redirect_uri));
    const cb = query(page.url());
    out.callback_2 = { has_code: Boolean(cb.code), state_ok: cb.state === state };
    out.id_token_2 = await redeem(c2, cb.code);

    const before = { console: seen.console.length, frames: seen.frames.length };
    const logoutUrl = new URL('/logout', ISSUER);
    logoutUrl.search = new URLSearchParams({ id_token_hint: out.id_token_1, post_logout_redirect_uri: POST_LOGOUT, state: 'xyz' }).toString();
    const frameResponses = [];
    const onResponse = (r) => { if (r.frame() !== page.mainFrame()) frameResponses.push({ url: r.url(), status: r.status() }); };
    page.on('response', onResponse);
    const started = Date.now();
    // Only to the commit: the page's own script takes the browser on from there.
    const logout = await page.goto(logoutUrl.toString(), { waitUntil: 'commit' });
    const headers = await logout.allHeaders();
    await page.waitForURL((u) => at(u.toString(), POST_LOGOUT), { waitUntil: 'load' });
    page.off('response', onResponse);
    out.frontchannel_logout = {
      status: logout.status(),
      csp: headers['content-security-policy'] ?? null,
      document: seen.documents.find((d) => d.url === logoutUrl.toString()) ?? null,
      frame_responses: frameResponses,
      frames_navigated: seen.frames.slice(before.frames),
      ended_at: page.url(),
      elapsed_ms: Date.now() - started,
      console: seen.console.slice(before.console),
    };
  }

  // 3. Signed in again, with the keyboard only (the username field has the focus, Tab moves
  //    to the password, Enter submits); /logout without parameters asks first.
  {
    const state = random();
    await page.goto(authorizeUrl(c1, state));
    if ((await page.evaluate(() => document.activeElement?.id)) !== 'username') throw new Error('the login page does not focus the username field');
    await page.keyboard.type(env('USERNAME'));
    await page.keyboard.press('Tab');
    await page.keyboard.type(env('PASSWORD'));
    await page.keyboard.press('Enter');
    // The consent given in act 1 is remembered: straight back to the client.
    await page.waitForURL((u) => at(u.toString(), c1.redirect_uri) || u.pathname === '/consent');
    out.consent_asked_again = !at(page.url(), c1.redirect_uri);
    if (out.consent_asked_again) {
      await page.getByRole('button', { name: 'Allow' }).click();
      await page.waitForURL((u) => at(u.toString(), c1.redirect_uri));
    }
    const cb = query(page.url());
    out.callback_3 = { has_code: Boolean(cb.code), state_ok: cb.state === state };
    out.id_token_3 = await redeem(c1, cb.code);

    const ask = await page.goto(new URL('/logout', ISSUER).toString());
    const heading = page.getByRole('heading', { level: 1 });
    out.confirm_page = { status: ask.status(), heading: await heading.textContent(),
      text: (await page.locator('body').innerText()).replace(/\s+/g, ' ').trim() };
    const done = page.waitForResponse((r) => r.request().isNavigationRequest() && new URL(r.url()).pathname === '/logout/confirm');
    // Keyboard only: Tab to the button, Enter.
    for (let i = 0; i < 5 && (await page.evaluate(() => document.activeElement?.textContent)) !== 'Sign out'; i++) {
      await page.keyboard.press('Tab');
    }
    if ((await page.evaluate(() => document.activeElement?.textContent)) !== 'Sign out') throw new Error('Tab never reaches the Sign out button');
    await page.keyboard.press('Enter');
    const confirmed = await done;
    await page.getByRole('heading', { name: 'You are signed out' }).waitFor();
    await page.waitForLoadState('load');
    out.signed_out_page = { status: confirmed.status(), method: confirmed.request().method(), url: page.url(),
      heading: await heading.textContent(), frames: page.frames().filter((f) => f !== page.mainFrame()).map((f) => f.url()) };
    // Its way back: "Sign in again" leads to a sign-in page (the account's).
    const again = page.waitForResponse((r) => r.request().isNavigationRequest() && new URL(r.url()).pathname === '/authorize');
    await page.getByRole('link', { name: 'Sign in again' }).click();
    const signIn = await again;
    await page.waitForLoadState('load');
    out.sign_in_again = { status: signIn.status(), heading: await heading.textContent(), path: new URL(page.url()).pathname };

    const silentState = random();
    await page.goto(authorizeUrl(c1, silentState, { prompt: 'none' }));
    await page.waitForURL((u) => at(u.toString(), c1.redirect_uri));
    const silent = query(page.url());
    out.silent_after = { error: silent.error ?? null, state_ok: silent.state === silentState, has_code: 'code' in silent };
  }

  out.console = seen.console;
  out.page_errors = seen.page_errors;
  out.csp_violations = seen.csp_violations;
  out.failed_requests = seen.failed_requests;
  out.documents = seen.documents.map((d) => d.url);
  return out;
}

await runAndReport(main, () => ({ page, seen }), async () => {
  await context?.close().catch(() => {});
  rmSync(profile, { recursive: true, force: true });
});
