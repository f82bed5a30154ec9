// An organization administrator in the console, in a real browser (Debian's Chromium,
// headless, Playwright). test_console_orgs.py starts a server with a localhost issuer and,
// through the admin API, two organizations (ORG and OTHER), the administrator (ADMIN: a
// member of ORG with the organization role admin and no console role, with an authenticator
// app whose key is given here) and a user to add (MEMBER, by their e-mail address).
//
// The walk: /console → the login page, the second-factor page (the RFC 6238 code computed
// here), and the console opens on the organizations page (ORG only listed, no other
// navigation); ORG's page; MEMBER added through the "Add a member" form with a role; their
// roles changed on their row; then OTHER's page typed as a URL: a 403 page, nothing of OTHER
// on it; then /console/users typed: the same refusal. Buttons are found by the forms they
// post to, not by their words.
//
// Then the tenant's admin, in a context that lets axe-core in, runs it on the organizations,
// an organization's and the credentials pages (light and dark themes).
//
// Input, from the environment: ISSUER, PASSWORD, ADMIN and ROOT (JSON: username, totp), ORG
// and OTHER (organization ids), MEMBER (an e-mail address), CHROMIUM, ARTIFACTS_DIR, WAIT_MS. Output:
// one line of JSON, what the browser saw; a failed step exits 1 with the page on stderr.
import { chromium } from 'playwright-core';
import { env, giveUpAfter, runAndReport } from './report.mjs';
import { chromiumOptions, base32, hotp, step, newSeen, openReporting, closeAll, go, press, navigation, landed, screenshot, runAxe, AXE } from './shared.mjs';

const ISSUER = env('ISSUER');
const PASSWORD = env('PASSWORD');
const ADMIN = JSON.parse(env('ADMIN'));
const ORG = env('ORG');
const OTHER = env('OTHER');
const MEMBER = env('MEMBER');
const ROOT = JSON.parse(env('ROOT'));
const ARTIFACTS = env('ARTIFACTS_DIR');
const WAIT_MS = Number(process.env.WAIT_MS || 10000);

giveUpAfter(100);

const seen = newSeen();
let browser;
let context;
let page;
let axeContext;
const at = (path) => new URL(path, ISSUER).toString();
const pathIs = (path) => (u) => u.pathname === path;

// What a page shows: its path, status, heading, text, the navigation's entries (not the
// sign-out link) and the table rows.
async function record(name, res) {
  const rec = {
    name, path: new URL(page.url()).pathname, status: res.status(),
    heading: ((await page.locator('h1').first().textContent()) ?? '').trim(),
    text: (await page.locator('main').innerText()).replace(/\s+/g, ' ').trim(),
    nav: await page.locator('nav.console-nav li a').evaluateAll((l) => l.map((a) => a.getAttribute('href'))),
    rows: await page.locator('main tbody tr').evaluateAll((l) => l.map((r) => r.innerText.replace(/\s+/g, ' ').trim())),
    html: await page.content(),
  };
  seen.pages.push(rec);
  await screenshot(page, seen, ARTIFACTS, `org-admin-${String(seen.pages.length).padStart(2, '0')}-${name}.png`, WAIT_MS);
  return rec;
}

async function main() {
  browser = await chromium.launch(chromiumOptions());
  ({ context, page } = await openReporting(browser, seen, { walk: 'org-admin', who: ADMIN.username }, { locale: 'en-US' }, { waitMs: WAIT_MS }));

  // Sign in: the console sends the browser to the login page, then asks for the code.
  await record('login', await go(page, at('/console')));
  await page.locator('#username').fill(ADMIN.username);
  await page.locator('#password').fill(PASSWORD);
  await record('second-factor', await press(page, 'form[action="/login"] button[type=submit]', pathIs('/login')));
  await page.locator('#code').fill(hotp(base32(ADMIN.totp), step()));
  const home = await record('home', await press(page, 'form[action="/login/second-factor"] button[type=submit]', pathIs('/console/organizations')));

  // Their organization: add the member by e-mail, with a role.
  const orgPath = `/console/organizations/${encodeURIComponent(ORG)}`;
  await record('organization', await press(page, `main a[href="${orgPath}"]`, pathIs(orgPath)));
  await page.locator('#member-user').fill(MEMBER);
  await page.locator('#member-roles').fill('billing');
  const added = await record('member-added', await press(page, `form[action="${orgPath}/members"] button[type=submit]`, pathIs(orgPath)));

  // Their roles changed on their row (the row's form is the one whose action names them).
  const row = page.locator('main tbody tr', { hasText: MEMBER });
  await row.locator('input[name="roles"]').fill('billing support');
  const saving = navigation(page, pathIs(orgPath));
  await row.locator('button[type=submit]').first().click();
  const changed = await record('member-changed', await landed(page, await saving));

  // Another organization's page, typed: refused by the server.
  const other = await record('other-organization', await go(page, at(`/console/organizations/${encodeURIComponent(OTHER)}`)));
  const users = await record('users', await go(page, at('/console/users')));
  const axe = await axeWalk();
  const { console: messages, page_errors, csp_violations, error_responses, failed_requests, screenshots } = seen;
  return { home, added, changed, other, users, axe, axe_version: AXE.version, axe_tags: AXE.tags, console: messages, page_errors, csp_violations, error_responses, failed_requests, screenshots };
}

// The tenant admin (ROOT: role admin, an authenticator app) in a context of its own that
// bypasses the pages' CSP (to inject axe-core; the walk above keeps it): the organizations
// page with its form, ORG's page with its settings form and members, and the credentials
// page, each checked by axe-core in the light and the dark theme.
async function axeWalk() {
  let p;
  ({ context: axeContext, page: p } = await openReporting(browser, { ...newSeen() }, { walk: 'axe', who: ROOT.username },
    { locale: 'en-US', bypassCSP: true }, { waitMs: WAIT_MS }));
  page = p;
  await go(page, at('/console'));
  await page.locator('#username').fill(ROOT.username);
  await page.locator('#password').fill(PASSWORD);
  await press(page, 'form[action="/login"] button[type=submit]', pathIs('/login'));
  await page.locator('#code').fill(hotp(base32(ROOT.totp), step()));
  await press(page, 'form[action="/login/second-factor"] button[type=submit]', pathIs('/console'));
  const out = [];
  for (const [name, path] of [['organizations', '/console/organizations'], ['organization', `/console/organizations/${encodeURIComponent(ORG)}`],
    ['credentials', '/console/credentials']]) {
    const res = await go(page, at(path));
    out.push({ walk: 'axe', name, method: 'GET', path, status: res.status(),
      axe: [await runAxe(page, 'light', AXE), await runAxe(page, 'dark', AXE)] });
  }
  return out;
}

runAndReport(main, () => ({ page, seen }), () => closeAll([context, axeContext].filter(Boolean), browser));
