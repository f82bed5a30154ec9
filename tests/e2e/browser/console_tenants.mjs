// The deployment administrator's tenant pages in the console, in a real browser (Debian's
// Chromium, headless, Playwright). test_console_tenants.py starts a server with a localhost
// issuer and, through the admin API, the administrator (ROOT: console role admin, an
// authenticator app whose key is given here) and one tenant (OTHER) so that the list is not
// empty when axe-core reads it.
//
// The walk, buttons found by the forms they post to and fields by their ids, not by words:
//   /console → the login page, the second-factor page (the RFC 6238 code computed here) →
//   the overview; "Tenants" in the navigation; the "New tenant" form filled (SLUG, a name) →
//   the list with it; its settings page (the slug's link); the form filled (a name, Japanese
//   as default language, a style sheet, second factor optional, self-registration off) and
//   saved → the page again, "Saved.", the fields holding what was typed; a refused value (a
//   mail sender that is no address) → the console's 400 page naming the setting;
//   then, in a second context whose browser asks for German (no catalogue, so the tenant's
//   default language applies), the tenant's account page (a visitor is sent on to sign in):
//   in Japanese, with its name, its style sheet applied (the body's outline colour it sets);
//   back in the administrator's context: the list, "Disable" on SLUG's row → disabled; its
//   account page then 404; "Enable"; "Disable" again and the slug typed into its delete form
//   → "Deleted.", no SLUG row.
// Then, in a context that lets axe-core in (bypassCSP), axe on the tenants list and OTHER's
// settings page, in the light and the dark theme.
//
// Input, from the environment: ISSUER, PASSWORD, ROOT and AXER (JSON: username, totp), SLUG, OTHER,
// CSS (the style sheet to type), OUTLINE (the colour it gives the body's outline, as
// getComputedStyle says it), CHROMIUM, ARTIFACTS_DIR, WAIT_MS. Output: one line of JSON, what
// the browser saw; a failed step exits 1 with the page on stderr.
import { chromium } from 'playwright-core';
import { env, giveUpAfter, runAndReport } from './report.mjs';
import { chromiumOptions, base32, hotp, step, newSeen, openReporting, closeAll, go, press, screenshot, runAxe, AXE, formFields } from './shared.mjs';

const ISSUER = env('ISSUER');
const PASSWORD = env('PASSWORD');
const ROOT = JSON.parse(env('ROOT'));
const AXER = JSON.parse(env('AXER'));
const SLUG = env('SLUG');
const OTHER = env('OTHER');
const CSS = env('CSS');
const ARTIFACTS = env('ARTIFACTS_DIR');
const WAIT_MS = Number(process.env.WAIT_MS || 10000);

giveUpAfter(110);

const seen = newSeen();
let browser;
let context;
let visitor;
let axeContext;
let page;
const at = (path) => new URL(path, ISSUER).toString();
const pathIs = (path) => (u) => u.pathname === path;
// After a form posted to `path`: the page it redirects to, there with a `done` notice (not the
// POST's own 303 answer at the same path).
const doneAt = (path) => (u) => u.pathname === path && u.searchParams.has('done');
const tenantPath = `/console/tenants/${encodeURIComponent(SLUG)}`;

// What a page shows: its path, status, language, title, heading, text, notices, the table's
// rows and (with `fields`) the form's fields with their values.
async function record(name, res, { fields = false } = {}) {
  const rec = {
    name, path: new URL(page.url()).pathname, search: new URL(page.url()).search, status: res.status(),
    html_lang: await page.locator('html').getAttribute('lang'), title: await page.title(),
    heading: ((await page.locator('h1').first().textContent()) ?? '').trim(),
    text: (await page.locator('main').innerText()).replace(/\s+/g, ' ').trim(),
    statuses: await page.locator('[role=status]:visible').evaluateAll((l) => l.map((e) => e.textContent.trim())),
    rows: await page.locator('main tbody tr').evaluateAll((l) => l.map((r) => r.innerText.replace(/\s+/g, ' ').trim())),
    ...(fields ? { fields: await formFields(page, { values: true }) } : {}),
  };
  seen.pages.push(rec);
  await screenshot(page, seen, ARTIFACTS, `tenants-${String(seen.pages.length).padStart(2, '0')}-${name}.png`, WAIT_MS);
  return rec;
}

async function signIn(p, who) {
  await go(p, at('/console'));
  await p.locator('#username').fill(who.username);
  await p.locator('#password').fill(PASSWORD);
  await press(p, 'form[action="/login"] button[type=submit]', pathIs('/login'));
  await p.locator('#code').fill(hotp(base32(who.totp), step()));
  return press(p, 'form[action="/login/second-factor"] button[type=submit]', pathIs('/console'));
}

// The list's form on SLUG's row that posts to its page, pressed on the button with `action`.
const rowButton = (action) => `main tbody tr form[action="${tenantPath}"] button[value="${action}"]`;

async function main() {
  browser = await chromium.launch(chromiumOptions());
  ({ context, page } = await openReporting(browser, seen, { walk: 'tenants', who: ROOT.username }, { locale: 'en-US' }, { waitMs: WAIT_MS }));
  const overview = await record('overview', await signIn(page, ROOT));

  // The list, from the navigation; a new tenant through its form.
  await record('tenants', await press(page, 'nav a[href="/console/tenants"]', pathIs('/console/tenants')));
  await page.locator('#slug').fill(SLUG);
  await page.locator('#product_name').fill('Acme Rockets');
  const created = await record('created', await press(page, 'form[action="/console/tenants"] button[type=submit]', doneAt('/console/tenants')));

  // Its settings page, from its link; the form filled and saved.
  const settings = await record('settings', await press(page, `main tbody a[href="${tenantPath}"]`, pathIs(tenantPath)), { fields: true });
  await page.locator('#product_name').fill('Acme Rockets Ltd');
  await page.locator('#default_locale').selectOption('ja');
  await page.locator('#css').fill(CSS);
  await page.locator('#mfa_policy').selectOption('optional');
  await page.locator('#signup').selectOption('off');
  await page.locator('#password_min_length').fill('12');
  const saved = await record('saved', await press(page, `form[action="${tenantPath}"] button[type=submit]`, doneAt(tenantPath)), { fields: true });

  // A value the server refuses: its 400 page, naming the setting.
  await page.locator('#mail_from').fill('not an address');
  const refused = await record('refused', await press(page, `form[action="${tenantPath}"] button[type=submit]`, pathIs(tenantPath)));

  // The tenant's own page, seen by a visitor whose browser asks for German.
  let vpage;
  ({ context: visitor, page: vpage } = await openReporting(browser, seen, { walk: 'visitor' }, { locale: 'de-DE' }, { waitMs: WAIT_MS }));
  const pagePath = `/t/${SLUG}/account`;
  const res = await go(vpage, at(pagePath));
  const look = await vpage.evaluate(() => ({
    outline: getComputedStyle(document.body).outlineColor,
    sheets: [...document.querySelectorAll('link[rel=stylesheet]')].map((l) => new URL(l.href).pathname),
  }));
  const tenantPage = { path: new URL(vpage.url()).pathname, status: res.status(), html_lang: await vpage.locator('html').getAttribute('lang'),
    title: await vpage.title(), content_language: res.headers()['content-language'] ?? null, ...look };
  await screenshot(vpage, seen, ARTIFACTS, 'tenants-visitor-page.png', WAIT_MS);

  // Disabled from the list: the tenant's pages go; enabled again; then deleted, the slug typed.
  await go(page, at('/console/tenants'));
  const disabled = await record('disabled', await press(page, rowButton('disable'), doneAt('/console/tenants')));
  const whileDisabled = (await go(vpage, at(pagePath))).status();
  const enabled = await record('enabled', await press(page, rowButton('enable'), doneAt('/console/tenants')));
  const afterEnable = (await go(vpage, at(pagePath))).status();
  await press(page, rowButton('disable'), doneAt('/console/tenants'));
  await page.locator(`#confirm-${SLUG}`).fill(SLUG);
  const deleted = await record('deleted', await press(page, rowButton('delete'), doneAt('/console/tenants')));

  const axe = await axeWalk();
  const { console: messages, page_errors, csp_violations, error_responses, failed_requests, screenshots } = seen;
  return { overview, created, settings, saved, refused, tenant_page: tenantPage, disabled, while_disabled: whileDisabled, enabled,
    after_enable: afterEnable, deleted, axe, axe_version: AXE.version, axe_tags: AXE.tags,
    console: messages, page_errors, csp_violations, error_responses, failed_requests, screenshots };
}

// A second administrator (AXER: a code of ROOT's is not accepted twice), in a context that bypasses the pages' CSP to inject axe-core: the
// list (OTHER's row, its buttons and the new-tenant form) and OTHER's settings page.
async function axeWalk() {
  let p;
  ({ context: axeContext, page: p } = await openReporting(browser, newSeen(), { walk: 'axe', who: AXER.username },
    { locale: 'en-US', bypassCSP: true }, { waitMs: WAIT_MS }));
  page = p;
  await signIn(page, AXER);
  const out = [];
  for (const [name, path] of [['tenants', '/console/tenants'], ['tenant', `/console/tenants/${encodeURIComponent(OTHER)}`]]) {
    const res = await go(page, at(path));
    out.push({ walk: 'axe', name, method: 'GET', path, status: res.status(),
      axe: [await runAxe(page, 'light', AXE), await runAxe(page, 'dark', AXE)] });
  }
  return out;
}

runAndReport(main, () => ({ page, seen }), () => closeAll([context, visitor, axeContext].filter(Boolean), browser));
