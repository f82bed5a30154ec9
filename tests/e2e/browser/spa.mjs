// A single-page application open in two tabs, in a real browser: Debian's Chromium, headless,
// driven by Playwright (playwright-core only). The application (spa/, with oidc-client-ts 3.5)
// is served by test_spa.py from another site than Authrim's (localhost against 127.0.0.1), so
// /token and /userinfo are cross-site calls under CORS.
//
// For each client of CLIENTS (JSON: [{name, client_id}], public clients with the code and
// refresh grants), in a browser context of its own:
//   1. Tab one signs in: the application's signinRedirect, Authrim's sign-in page and consent
//      page, back to the application, which redeems the code (PKCE) and keeps the tokens in
//      localStorage.
//   2. Tab two opens the application: the same tokens, from localStorage.
//   3. Both tabs refresh at the same moment (signinSilent, by refresh token), as two tabs whose
//      access tokens expire together do; each then calls userinfo with what it got. Each tab's
//      token request is held in the browser (context.route) until the other tab's has been
//      sent too, then both go on together: both present the token they share, however slowly
//      the machine runs the tabs (on a busy one, one tab could otherwise finish its refresh
//      before the other read its token, and the other would present the successor).
//   4. Each tab calls userinfo again with the token it now holds (a family revoked as stolen
//      takes every access token with it).
//
// Input, from the environment: ISSUER, SPA (the application's URL), CLIENTS, USERNAME,
// PASSWORD, CHROMIUM, ARTIFACTS_DIR and WAIT_MS. Output: one line of JSON, per client what each
// tab got. Any failed step exits 1 with the page and the console on stderr.
import { chromium } from 'playwright-core';
import { env, giveUpAfter, runAndReport } from './report.mjs';
import { chromiumOptions, signIn } from './shared.mjs';

const ISSUER = env('ISSUER');
const SPA = env('SPA');
const CLIENTS = JSON.parse(env('CLIENTS'));
const WAIT_MS = Number(process.env.WAIT_MS || 10000);

giveUpAfter(75);

const seen = { console: [], page_errors: [] };
let browser;
let page;

function watch(p, tag) {
  p.on('console', (m) => seen.console.push(`${tag}: ${m.type()}: ${m.text()}`));
  p.on('pageerror', (e) => seen.page_errors.push(`${tag}: ${e.message}`));
  p.setDefaultTimeout(WAIT_MS);
}

async function open(context, tag, clientId) {
  const p = await context.newPage();
  watch(p, tag);
  await p.goto(`${SPA}?client_id=${encodeURIComponent(clientId)}`, { waitUntil: 'load' });
  return p;
}

async function twoTabs(client) {
  const context = await browser.newContext();
  page = await open(context, `${client.name} tab 1`, client.client_id);
  const one = page;
  // 1. Sign in from tab one.
  await one.evaluate(() => window.ready);
  const toLogin = one.waitForURL((u) => u.href.startsWith(ISSUER), { waitUntil: 'load' });
  // Started, not awaited in the page: it ends by navigating away.
  await one.evaluate(() => { window.mgr.signinRedirect(); });
  await toLogin;
  await signIn(one, env('USERNAME'), env('PASSWORD'), (u) => u.pathname === '/consent');
  const back = one.waitForURL((u) => u.href.startsWith(SPA) && u.searchParams.has('code'), { waitUntil: 'load' });
  await one.getByRole('button', { name: 'Allow' }).click();
  await back;
  const sub = await one.evaluate(() => window.ready);
  if (!sub) throw new Error(`${client.name}: no user after the redirect`);
  // 2. Tab two: the same tokens, from localStorage.
  page = await open(context, `${client.name} tab 2`, client.client_id);
  const two = page;
  const sub2 = await two.evaluate(() => window.ready);
  const before = await two.evaluate(() => window.mgr.getUser().then((u) => u.refresh_token));
  // 3. Both refresh at once: the token requests held until both are sent (at most WAIT_MS).
  const held = [];
  let released_alone = 0;
  let bothSent;
  const together = new Promise((resolve) => { bothSent = resolve; });
  const isToken = (u) => u.origin === new URL(ISSUER).origin && u.pathname === '/token';
  await context.route(isToken, async (route) => {
    if (route.request().method() !== 'POST') return route.continue();
    held.push(route.request().url());
    if (held.length === 2) bothSent(true);
    // Released alone after WAIT_MS (then the counts below say so, and the test fails).
    if (!(await Promise.race([together, new Promise((resolve) => setTimeout(() => resolve(false), WAIT_MS))]))) released_alone += 1;
    return route.continue();
  });
  const [first, second] = await Promise.all([one.evaluate(() => window.refresh()), two.evaluate(() => window.refresh())]);
  await context.unroute(isToken);
  // 4. userinfo again with what each tab holds now.
  const after = await Promise.all([one.evaluate(() => window.userinfo()), two.evaluate(() => window.userinfo())]);
  await context.close();
  const tab = (r, userinfo) => ({ ok: r.ok, error: r.error ?? null, userinfo_at_once: r.userinfo ?? null, userinfo_after: userinfo,
    refresh_token_changed: r.ok ? r.refresh_token !== before : null });
  return { sub, sub2, token_requests: { held: held.length, released_alone }, tabs: [tab(first, after[0]), tab(second, after[1])],
    same_successor: first.ok && second.ok ? first.refresh_token === second.refresh_token : null };
}

async function main() {
  browser = await chromium.launch(chromiumOptions());
  const out = {};
  for (const client of CLIENTS) {
    out[client.name] = await twoTabs(client);
  }
  out.page_errors = seen.page_errors;
  return out;
}

runAndReport(main, () => ({ page, seen }), async () => browser?.close());
