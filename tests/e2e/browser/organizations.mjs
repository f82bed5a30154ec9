// Organizations in one Chromium (issue 31): three walks, each in a fresh browser context.
//  invitation: the mailed link (INVITE_LINK) opens the sign-in, the invited user signs in,
//    sees the invitation and accepts it; then signs in to the client for the organization.
//  chooser: a member of two organizations signs in to a client that needs one
//    (ORG_CLIENT_ID, `organization_required`) and chooses CHOOSE on the chooser page.
//  domain: a request with a login_hint at the organization's domain goes to its own identity
//    provider (a second Authrim, UPSTREAM_ISSUER), where the user signs in; back here, the
//    client that needs an organization gets it, the user having joined by their domain.
// test_organizations.py sets the servers up, runs it and checks the codes it returns.
import { chromium } from 'playwright-core';
import { env, giveUpAfter, runAndReport } from './report.mjs';
import { chromiumOptions, watchedPage } from './shared.mjs';
import { randomBytes } from 'node:crypto';

const ISSUER = env('ISSUER');
const REDIRECT = env('REDIRECT_URI');
const PASSWORD = env('PASSWORD');
const WAIT_MS = Number(process.env.WAIT_MS || 10000);
giveUpAfter(90);

const authorizeUrl = (clientId, extra = {}) => {
  const u = new URL(`${ISSUER}/authorize`);
  u.search = new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, scope: 'openid email',
    state: randomBytes(9).toString('base64url'), nonce: randomBytes(9).toString('base64url'), ...extra }).toString();
  return u.toString();
};
const atRedirect = (u) => u.toString().split('?')[0] === REDIRECT;
const query = (url) => Object.fromEntries(new URL(url).searchParams);

const seen = { console: [], page_errors: [], error_responses: [] };
let browser;
let page;

async function freshPage() {
  page = await watchedPage(browser, seen, WAIT_MS);
  return page;
}

async function signIn(user) {
  await page.fill('#username', user);
  await page.fill('#password', PASSWORD);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

// From a consent page (if one comes: at /consent after a sign-in, or at /authorize itself
// for a signed-in user) to the client.
async function consentToRedirect() {
  const allow = page.getByRole('button', { name: 'Allow' });
  for (let waited = 0; waited < WAIT_MS && !atRedirect(page.url()); waited += 100) {
    if (await allow.count() > 0) {
      await allow.click();
      await page.waitForURL(atRedirect);
      break;
    }
    await page.waitForTimeout(100);
  }
  if (!atRedirect(page.url())) throw new Error('not back at the client');
  return query(page.url());
}

async function invitation() {
  await freshPage();
  const out = {};
  await page.goto(env('INVITE_LINK'));
  out.login_heading = await page.locator('h1').first().textContent();
  await signIn(env('INVITED_USER'));
  await page.waitForURL((u) => u.pathname.endsWith('/organizations/invitation'));
  out.offer_heading = (await page.locator('h1').first().textContent()).trim();
  out.offer_roles = await page.locator('main li, li').allTextContents();
  await page.getByRole('button', { name: 'Accept the invitation' }).click();
  await page.getByText(/You are now a member of/).waitFor();
  out.accepted = (await page.getByText(/You are now a member of/).textContent()).trim();
  // The same link again: used.
  const again = await page.goto(env('INVITE_LINK'));
  out.again_status = again.status();
  await page.goto(authorizeUrl(env('CLIENT_ID'), { organization: env('INVITE_ORG') }));
  out.redirect = await consentToRedirect();
  return out;
}

async function chooser() {
  await freshPage();
  const out = {};
  await page.goto(authorizeUrl(env('ORG_CLIENT_ID')));
  await signIn(env('CHOOSER_USER'));
  await page.locator('form[action$="/login/organization"]').waitFor();
  out.heading = (await page.locator('h1').first().textContent()).trim();
  out.choices = (await page.locator('form[action$="/login/organization"] button').allTextContents()).map((t) => t.trim());
  await page.getByRole('button', { name: env('CHOOSE') }).click();
  out.redirect = await consentToRedirect();
  return out;
}

async function domain() {
  await freshPage();
  const out = {};
  const upstream = env('UPSTREAM_ISSUER');
  await page.goto(authorizeUrl(env('ORG_CLIENT_ID'), { login_hint: env('DOMAIN_USER_EMAIL') }));
  await page.waitForURL((u) => u.toString().startsWith(upstream));
  out.upstream_url = page.url().split('?')[0];
  await signIn(env('DOMAIN_USER'));
  // The upstream's consent for us, then back here (our consent for the client).
  await page.waitForURL((u) => !u.toString().startsWith(upstream) || u.pathname.endsWith('/consent'));
  if (page.url().startsWith(upstream)) {
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL((u) => !u.toString().startsWith(upstream));
  }
  out.redirect = await consentToRedirect();
  return out;
}

async function main() {
  browser = await chromium.launch(chromiumOptions());
  return { invitation: await invitation(), chooser: await chooser(), domain: await domain(), seen };
}

runAndReport(main, () => ({ page, seen }), async () => { await browser?.close(); });
