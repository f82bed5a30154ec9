// OpenID Connect Session Management 1.0 in a real browser (Debian's Chromium, headless,
// playwright-core): an RP page on another origin of the same site as Authrim (another port of
// the issuer's host, served by test_session_management.py) embeds Authrim's check_session
// iframe and asks it, as §3.1 describes, with postMessage("client_id session_state").
//
//   1. Sign in at Authrim from the RP's page (authorization request, sign-in, consent); the
//      redirect back carries code and session_state.
//   2. The RP's iframe answers: the session_state as received ("unchanged"), one with another
//      salt's hash ("changed"), another client's id ("changed"), a malformed message ("error").
//   3. Sign out at Authrim (its logout page); back at the RP, the same session_state is now
//      "changed".
//
// Input, from the environment: ISSUER, RP (the RP page's URL, also the redirect URI),
// CLIENT_ID, USERNAME, PASSWORD, CHROMIUM, ARTIFACTS_DIR and WAIT_MS. Output: one line of
// JSON with the answers. Any failed step exits 1 with the page and the console on stderr.
import { chromium } from 'playwright-core';
import { env, giveUpAfter, runAndReport } from './report.mjs';
import { authorizationRequest, chromiumOptions, signIn } from './shared.mjs';

const ISSUER = env('ISSUER');
const RP = env('RP');
const CLIENT_ID = env('CLIENT_ID');
const WAIT_MS = Number(process.env.WAIT_MS || 10000);

giveUpAfter(60);

const seen = { console: [], page_errors: [] };
let browser;
let page;

// In the RP's page: post `message` to the iframe and wait for its answer.
const ask = (p, message) => p.evaluate((m) => window.askOp(m), message);

async function main() {
  browser = await chromium.launch(chromiumOptions());
  const context = await browser.newContext();
  page = await context.newPage();
  page.on('console', (m) => seen.console.push(`${m.type()}: ${m.text()}`));
  page.on('pageerror', (e) => seen.page_errors.push(e.message));
  page.setDefaultTimeout(WAIT_MS);

  // 1. Sign in.
  await page.goto(authorizationRequest(ISSUER, { clientId: CLIENT_ID, redirectUri: RP, scope: 'openid' }).url);
  await signIn(page, env('USERNAME'), env('PASSWORD'), (u) => u.pathname === '/consent');
  const back = page.waitForURL((u) => u.href.startsWith(RP) && u.searchParams.has('code'), { waitUntil: 'load' });
  await page.getByRole('button', { name: 'Allow' }).click();
  await back;
  const state = new URL(page.url()).searchParams.get('session_state');
  if (!state) throw new Error(`no session_state in ${page.url()}`);
  await page.evaluate(() => window.opReady);

  // 2. The iframe's answers while signed in.
  const [hash, salt] = state.split('.');
  const out = {
    session_state: state,
    same: await ask(page, `${CLIENT_ID} ${state}`),
    other_salt: await ask(page, `${CLIENT_ID} ${hash}.${salt}x`),
    other_client: await ask(page, `someone-else ${state}`),
    malformed: await ask(page, 'nonsense'),
  };

  // 3. Sign out at Authrim, then ask again from the RP's page.
  await page.goto(`${ISSUER}/logout`);
  const signedOut = page.waitForURL((u) => u.pathname === '/logout/confirm', { waitUntil: 'load' });
  await page.locator('form[action="/logout/confirm"] button[type=submit]').first().click();
  await signedOut;
  await page.goto(RP);
  await page.evaluate(() => window.opReady);
  out.after_logout = await ask(page, `${CLIENT_ID} ${state}`);
  out.page_errors = seen.page_errors;
  return out;
}

runAndReport(main, () => ({ page, seen }), async () => browser?.close());
