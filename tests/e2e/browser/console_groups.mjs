// Groups and roles in the console, in a real browser (Debian's Chromium, headless,
// Playwright). test_console_groups.py starts a server with a localhost issuer and, through the
// admin API, two tenant admins (ADMIN and AXE: role admin, an authenticator app whose key is
// given here), a client (CLIENT) and a user (MEMBER: their e-mail address; USER: their id).
//
// The walk, as ADMIN: /console → the login page, the second-factor page (the RFC 6238 code
// computed here), the console; Groups in the navigation; "Engineering" created through the
// form (its page), "Backend" created the same way; MEMBER added to Backend by e-mail; Backend
// added to Engineering; then Engineering added to Backend: a 400, the group's page again with
// the reason in an alert; the client's page: a role defined, then given to Engineering, then
// its provisioning target set by keyboard alone (Tab, Enter) and Back pressed; the user's
// page: their groups and the role through them. Buttons are found by the forms they
// post to, not by their words.
//
// Then AXE, in a context that lets axe-core in, runs it on the groups page, Backend's page,
// the client's page (its roles) and the user's page (their groups and roles), light and dark.
//
// Input, from the environment: ISSUER, PASSWORD, ADMIN and AXE (JSON: username, totp),
// CLIENT, MEMBER, USER, CHROMIUM, ARTIFACTS_DIR, WAIT_MS. Output: one line of JSON, what the
// browser saw; a failed step exits 1 with the page on stderr.
import { chromium } from 'playwright-core';
import { env, giveUpAfter, runAndReport } from './report.mjs';
import { chromiumOptions, base32, hotp, step, newSeen, openReporting, closeAll, go, press, navigation, landed, pageRecord, screenshot, runAxe, AXE } from './shared.mjs';

const ISSUER = env('ISSUER');
const PASSWORD = env('PASSWORD');
const ADMIN = JSON.parse(env('ADMIN'));
const AXE_USER = JSON.parse(env('AXE'));
const CLIENT = env('CLIENT');
const MEMBER = env('MEMBER');
const USER = env('USER');
const ARTIFACTS = env('ARTIFACTS_DIR');
const WAIT_MS = Number(process.env.WAIT_MS || 10000);

giveUpAfter(100);

const seen = newSeen();
let browser, context, page, axeContext;
const at = (path) => new URL(path, ISSUER).toString();
const pathIs = (path) => (u) => u.pathname === path;

// What a page shows (shared.pageRecord: path, status, heading, text, alerts...), with the
// table rows and the links in the main part.
async function record(name, res) {
  const rec = { name, ...(await pageRecord(page, res, WAIT_MS)),
    rows: await page.locator('main tbody tr').evaluateAll((l) => l.map((r) => r.innerText.replace(/\s+/g, ' ').trim())),
    links: await page.locator('main a').evaluateAll((l) => l.map((a) => a.getAttribute('href'))) };
  seen.pages.push(rec);
  await screenshot(page, seen, ARTIFACTS, `groups-${String(seen.pages.length).padStart(2, '0')}-${name}.png`, WAIT_MS);
  return rec;
}

async function signIn(who, landing) {
  await go(page, at('/console'));
  await page.locator('#username').fill(who.username);
  await page.locator('#password').fill(PASSWORD);
  await press(page, 'form[action="/login"] button[type=submit]', pathIs('/login'));
  await page.locator('#code').fill(hotp(base32(who.totp), step()));
  return press(page, 'form[action="/login/second-factor"] button[type=submit]', pathIs(landing));
}

// A group made through the list's form: its page.
async function createGroup(name, externalId) {
  await press(page, 'nav.console-nav a[href="/console/groups"]', pathIs('/console/groups'));
  await page.locator('#display_name').fill(name);
  await page.locator('#external_id').fill(externalId);
  const res = await press(page, 'form[action="/console/groups"][method=post] button[type=submit]', (u) => u.pathname.startsWith('/console/groups/'));
  return { res, path: new URL(page.url()).pathname };
}

// A member added on the group's page at `path`: a user (username or e-mail) or a group (name).
async function addMember(path, kind, member, pred) {
  await page.locator('#member-kind').selectOption(kind);
  await page.locator('#member-member').fill(member);
  return press(page, `form[action="${path}/members"] button[type=submit]`, pred);
}

async function main() {
  browser = await chromium.launch(chromiumOptions());
  ({ context, page } = await openReporting(browser, seen, { walk: 'groups', who: ADMIN.username }, { locale: 'en-US' }, { waitMs: WAIT_MS }));
  await signIn(ADMIN, '/console');

  const eng = await createGroup('Engineering', 'E-1');
  const engineering = await record('engineering', eng.res);
  const back = await createGroup('Backend', '');
  await record('backend', back.res);
  const added = await record('member-added', await addMember(back.path, 'users', MEMBER, pathIs(back.path)));
  await go(page, at(eng.path));
  const nested = await record('nested', await addMember(eng.path, 'groups', 'Backend', pathIs(eng.path)));
  // The cycle: Backend is in Engineering, so Engineering cannot go into Backend.
  await press(page, `main a[href="${back.path}"]`, pathIs(back.path));
  const cycle = await record('cycle', await addMember(back.path, 'groups', 'Engineering', pathIs(`${back.path}/members`)));
  const groups = await record('groups', await press(page, 'nav.console-nav a[href="/console/groups"]', pathIs('/console/groups')));

  // The client's page: a role defined, then given to Engineering.
  const clientPath = `/console/clients/${encodeURIComponent(CLIENT)}`;
  await go(page, at(clientPath));
  await page.locator('#new-role').fill('reports:read');
  await page.locator('#new-role-description').fill('Reads the reports');
  const defined = await record('role-defined', await press(page, `form[action="${clientPath}/roles"] button[type=submit]`, pathIs(clientPath)));
  const assign = page.locator(`form[action="${clientPath}/roles/assign"]`);
  await assign.locator('select[name=kind]').selectOption('groups');
  await assign.locator('input[name=member]').fill('Engineering');
  const given = await record('role-given', await press(page, `form[action="${clientPath}/roles/assign"] button[type=submit]`, pathIs(clientPath)));

  // Provisioning (SCIM) on the same page, by keyboard only: the endpoint typed, Tab to the
  // credential, typed, Enter submits; the page shows the target. Then Back: the page as it
  // was, nothing sent again.
  await page.locator('#provisioning-endpoint').focus();
  await page.keyboard.type('https://reports.invalid/scim/v2');
  await page.keyboard.press('Tab');
  await page.keyboard.type('a-token-from-reports');
  const next = navigation(page, pathIs(clientPath));
  await page.keyboard.press('Enter');
  const provisioned = await record('provisioned', await landed(page, await next));
  const backRes = await page.goBack({ waitUntil: 'load' });
  const backAgain = { path: new URL(page.url()).pathname, search: new URL(page.url()).search, status: backRes?.status() ?? null,
    text: (await page.locator('body').innerText()).replace(/\s+/g, ' ').trim() };

  // The user's page: Backend directly, Engineering through it, and the role.
  const userPath = `/console/users/${encodeURIComponent(USER)}`;
  const user = await record('user', await go(page, at(userPath)));

  const axe = await axeWalk([['groups', '/console/groups'], ['group', back.path], ['client', clientPath], ['user', userPath]]);
  const { console: messages, page_errors, csp_violations, error_responses, failed_requests, screenshots } = seen;
  return { engineering, added, nested, cycle, groups, defined, given, provisioned, back_again: backAgain, user, paths: { engineering: eng.path, backend: back.path },
    axe, axe_version: AXE.version, axe_tags: AXE.tags, console: messages, page_errors, csp_violations, error_responses, failed_requests, screenshots };
}

// The second admin in a context of its own that bypasses the pages' CSP (to inject axe-core;
// the walk above keeps it): each page checked by axe-core in the light and the dark theme.
async function axeWalk(pages) {
  ({ context: axeContext, page } = await openReporting(browser, { ...newSeen() }, { walk: 'axe', who: AXE_USER.username },
    { locale: 'en-US', bypassCSP: true }, { waitMs: WAIT_MS }));
  await signIn(AXE_USER, '/console');
  const out = [];
  for (const [name, path] of pages) {
    const res = await go(page, at(path));
    out.push({ walk: 'axe', name, method: 'GET', path, status: res.status(),
      axe: [await runAxe(page, 'light', AXE), await runAxe(page, 'dark', AXE)] });
  }
  return out;
}

runAndReport(main, () => ({ page, seen }), () => closeAll([context, axeContext].filter(Boolean), browser));
