// Two tenants of one deployment in one Chromium (issue 31): the default tenant at ISSUER and
// another at TENANT_ISSUER (`ISSUER/t/acme`), on one host. Signed in at the default tenant,
// the browser is not signed in at the other (its cookies are scoped to its path, its sessions
// are its own); signed in at both, each silent request gets a code from its own tenant; signed
// out at one, still signed in at the other. test_tenants.py runs it and checks the codes
// against each tenant's token endpoint.
import { chromium } from 'playwright-core';
import { env, giveUpAfter, runAndReport } from './report.mjs';
import { chromiumOptions } from './shared.mjs';
import { randomBytes } from 'node:crypto';

const ISSUERS = { default: env('ISSUER'), acme: env('TENANT_ISSUER') };
const CLIENT_ID = env('CLIENT_ID');
const REDIRECT = env('REDIRECT_URI');
const WAIT_MS = Number(process.env.WAIT_MS || 10000);
giveUpAfter(75);

const authorizeUrl = (tenant, extra = {}) => {
  const u = new URL(`${ISSUERS[tenant]}/authorize`);
  u.search = new URLSearchParams({ response_type: 'code', client_id: CLIENT_ID, redirect_uri: REDIRECT, scope: 'openid profile',
    state: randomBytes(9).toString('base64url'), ...extra }).toString();
  return u.toString();
};
const atRedirect = (u) => u.toString().split('?')[0] === REDIRECT;
const query = (url) => Object.fromEntries(new URL(url).searchParams);

const SECRETS = JSON.parse(env('SECRETS'));

// A code redeemed at `tenant`'s token endpoint as the client's back end would, and the
// access token shown at both tenants' userinfo: what each answered. Done here, before the
// walk signs out (which ends the session the code was issued in, and so the code).
async function redeem(tenant, code) {
  const basic = Buffer.from(`${CLIENT_ID}:${SECRETS[tenant]}`).toString('base64');
  const res = await fetch(`${ISSUERS[tenant]}/token`, {
    method: 'POST',
    headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT }),
    signal: AbortSignal.timeout(WAIT_MS),
  });
  const body = await res.json();
  if (res.status !== 200) return { status: res.status, body };
  const userinfo = {};
  for (const at of Object.keys(ISSUERS)) {
    const me = await fetch(`${ISSUERS[at]}/userinfo`, { headers: { authorization: `Bearer ${body.access_token}` }, signal: AbortSignal.timeout(WAIT_MS) });
    userinfo[at] = { status: me.status, body: me.status === 200 ? await me.json() : null };
  }
  return { status: 200, id_token: body.id_token, userinfo };
}

const seen = { console: [], page_errors: [] };
let browser;
let page;

// The authorization request at `tenant`, signing in (as `user`) and consenting where asked;
// the redirect's parameters, and whether a sign-in form was shown.
async function authorize(tenant, user) {
  await page.goto(authorizeUrl(tenant));
  let signedIn = false;
  if (!atRedirect(page.url()) && await page.locator('#password').count() > 0) {
    await page.fill('#username', user);
    await page.fill('#password', env('PASSWORD'));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((u) => atRedirect(u) || u.pathname.endsWith('/consent'));
    signedIn = true;
  }
  if (!atRedirect(page.url())) {
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL(atRedirect);
  }
  return { signed_in_here: signedIn, ...query(page.url()) };
}

async function silent(tenant) {
  await page.goto(authorizeUrl(tenant, { prompt: 'none' }));
  await page.waitForURL(atRedirect);
  return query(page.url());
}

async function main() {
  browser = await chromium.launch(chromiumOptions());
  const context = await browser.newContext();
  page = await context.newPage();
  page.setDefaultTimeout(WAIT_MS);
  page.on('console', (m) => seen.console.push({ type: m.type(), text: m.text() }));
  page.on('pageerror', (e) => seen.page_errors.push(String(e)));
  const out = {};
  out.first_default = await authorize('default', 'alice');
  // Signed in at the default tenant: the other still asks who you are.
  out.then_acme = await authorize('acme', 'alice');
  out.silent_default = await silent('default');
  out.silent_acme = await silent('acme');
  out.redeemed_acme = [await redeem('acme', out.then_acme.code), await redeem('acme', out.silent_acme.code)];
  out.cookies = (await context.cookies()).map((c) => ({ name: c.name, path: c.path, httpOnly: c.httpOnly }));
  // Signed out at acme (its confirmation page): the default tenant's session lives on.
  await page.goto(`${ISSUERS.acme}/logout`);
  const confirm = page.getByRole('button', { name: 'Sign out' });
  out.acme_logout_form_action = await page.locator('form').first().getAttribute('action');
  await confirm.click();
  await page.getByRole('heading', { name: 'You are signed out' }).waitFor();
  out.after_logout_acme = await silent('acme');
  out.after_logout_default = await silent('default');
  return out;
}

runAndReport(main, () => ({ page, seen }), async () => { await browser?.close(); });
