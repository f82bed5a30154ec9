// The admin console (/console) in a real browser: Debian's Chromium, headless, driven by
// Playwright, with axe-core for the WCAG rules. test_console.py starts two servers with a
// localhost issuer: ISSUER (console_mfa = required, the default) and LENIENT_ISSUER
// (console_mfa = if_enrolled); it creates, for each walk below, the users (through the admin
// API), runs CHECKER (an HTTP server of its own that, asked by this program, tries a client's
// secret at the token endpoint with client_credentials, or counts the JWKS's keys, with
// Python's requests) and checks what this prints.
//
// A full walk (scenarios languages and axe), each person in a new browser context:
//   the admin (admin-<walk>, an authenticator app) on ISSUER: /console → /console/login →
//     /authorize (acr_values mfa): login, second-factor (the RFC 6238 code computed here from
//     the key the admin API gave), overview (/console, through /console/callback); clients;
//     client-new (the "New client" link: the application types); client-form-spa (the
//     single-page type: its metadata filled in); client-form (another type, "Web application",
//     through "Choose another type"); client-error (a redirect URI that is a path, /callback:
//     400, the form again with the focused alert in the console's words, the field marked);
//     client-created (fixed, client_credentials ticked under "Advanced settings": the issuer,
//     the discovery URL, the client id, the secret shown once and copied with the Copy button
//     and tried by CHECKER, the settings to copy, copied with theirs);
//     client (the "I have copied it" link: no secret there, nor after a reload);
//     client-saved (the name changed; the secret still works); client-secret ("New secret":
//     the old secret refused, the new one works); saml-form (the "SAML application" type, chosen
//     as the others are: its form, filled and sent with the keyboard alone: Tab from the top to
//     the name, then field to field, the SP's metadata pasted (entity ID and assertion consumer
//     service of the walk's own), an attribute line typed, Tab on to the button, Enter);
//     saml-created (the client's page it lands on: the entity ID, where responses go, the form
//     as sent); users; user-new; user-created (staff-<walk>,
//     role auditor); then staff-<walk> signs in to /account in a second context; users-search
//     (keyboard only: Tab to the search field, type, Enter); user (staff's page: their
//     session); user-session-ended (its End button; staff's /account then asks to sign in);
//     keys; keys-rotated ("Start a rotation": one more key "published, not yet signing", one
//     more key in the JWKS); audit (each time shown in the browser's zone, the walk's
//     timezoneId); audit-filtered (keyboard only: Tab to the event list, type
//     client_secret_rotated to pick it, Tab, Enter); audit-by-user (staff's username typed
//     in the user field: their events, each actor by name);
//   nobody-<walk> (no role) on ISSUER: denied (403);
//   bare-<walk> (admin, no second factor) on ISSUER: needs-factor (403), its link to account;
//   auditor-<walk> (auditor, no factor) on LENIENT_ISSUER: auditor-overview, auditor-clients
//     (no "New client"), auditor-client (LENIENT_CLIENT_ID: its form disabled, no button),
//     read-only (a form built on that page with its csrf token, posted to /console/clients:
//     403), auditor-users, auditor-user (their own page: nothing to press).
// A short walk (scenario phone): the admin's sign-in, overview, clients, client-new (the
// application types), client-form (the MCP type's form), client (STRICT_CLIENT_ID), users,
// user (the admin's own page: a factor, a session), keys, audit.
// Buttons and links are found by the forms they post to and where they lead, not by their
// words, so the same walk runs in every language.
//
// SCENARIO=languages: walks "en" (browser locale en-US) and "ja" (ja-JP): each page's status,
//   redirects, headers, <html lang>, title, heading, notices, alerts, focus, text (with the
//   language each piece is marked as) and a full-page screenshot (<walk>-<nn>-<page>.png).
// SCENARIO=axe: walks "axe-en" and "axe-ja" in contexts with bypassCSP (axe-core is injected
//   into each page; only these contexts bypass the pages' script-src 'self'): axe-core with
//   AXE_TAGS on each console page in the light theme, then the dark one, after a control page
//   made to fail proves the harness (axeControl).
// SCENARIO=phone: walks "phone-en" and "phone-ja" at 390x844 (isMobile, touch, 2x): each
//   page's widths and its tables' scrolling regions, and a screenshot.
//
// Input, from the environment: SCENARIO, ISSUER, LENIENT_ISSUER, CHECKER, USERS (JSON: per
// walk, its people), PASSWORD (every user's), STRICT_CLIENT_ID, LENIENT_CLIENT_ID, CHROMIUM,
// ARTIFACTS_DIR (screenshots; on failure the page's HTML and a screenshot) and WAIT_MS (the
// longest any one wait may take). Output: one line of JSON, what the browser saw. Any failed
// step exits 1 with the browser's console, CSP reports and the current page on stderr.
import { chromium } from 'playwright-core';
import { createRequire } from 'node:module';
import { env, giveUpAfter, runAndReport } from './report.mjs';
import { AXE_CONTROL_CONTEXT, axeControlRuns, chromiumOptions, japaneseFont as sharedJapaneseFont, runAxe, screenshot,
  textParts, base32, hotp, step, outOfBox, focusedElement, formFields } from './shared.mjs';

const require = createRequire(import.meta.url);
const AXE_SCRIPT = require.resolve('axe-core/axe.min.js');
const AXE_VERSION = require('axe-core/package.json').version;
const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'];

const SCENARIO = env('SCENARIO');
const ISSUER = env('ISSUER');
const LENIENT_ISSUER = env('LENIENT_ISSUER');
const CHECKER = env('CHECKER');
const PASSWORD = env('PASSWORD');
const USERS = JSON.parse(env('USERS'));
const ARTIFACTS = env('ARTIFACTS_DIR');
const WAIT_MS = Number(process.env.WAIT_MS || 10000);

giveUpAfter(100);

// What the forms are given (test_console.py checks them through the admin API).
const CLIENT_NAME = 'Example App';
const CLIENT_RENAMED = 'Example Portal';
const REDIRECT_URIS = ['https://app.example/cb', 'https://app.example/other'];
const BAD_REDIRECT_URI = '/callback';
const AUDIT_EVENT = 'client_secret_rotated';
// The SAML application: its name, an attribute line, and its metadata (an entity ID and an
// HTTP-POST assertion consumer service of the walk's own: entity IDs are unique in a tenant,
// and a scenario's walks share the server).
const SAML_NAME = 'Example Wiki';
const SAML_ATTRIBUTES = 'mail=email';
const samlSp = (w) => ({ entity_id: `https://wiki.example/${w}/saml`, acs: `https://wiki.example/${w}/acs` });
const samlMetadata = ({ entity_id, acs }) => `<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="${entity_id}">
  <md:SPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
    <md:AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="${acs}" index="0"/>
  </md:SPSSODescriptor>
</md:EntityDescriptor>`;

const PHONE = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 };
const WALKS = {
  languages: [
    { name: 'en', kind: 'full', locale: 'en-US', shots: true, timezone: 'America/Los_Angeles' },
    { name: 'ja', kind: 'full', locale: 'ja-JP', shots: true, timezone: 'Asia/Tokyo' },
  ],
  axe: [
    { name: 'axe-en', kind: 'full', locale: 'en-US', axe: true },
    { name: 'axe-ja', kind: 'full', locale: 'ja-JP', axe: true },
  ],
  phone: [
    { name: 'phone-en', kind: 'short', locale: 'en-US', shots: true, phone: true },
    { name: 'phone-ja', kind: 'short', locale: 'ja-JP', shots: true, phone: true },
  ],
}[SCENARIO];
if (!WALKS) throw new Error(`unknown SCENARIO ${SCENARIO}`);

// RFC 6238 TOTP: base32, hotp and step from shared.mjs (checked there against RFC 6238 Appendix B,
// and by test_console.py against test_mfa's helper).

// What the browser reports along the way, for the checks and for a failure's diagnosis;
// every entry names the walk (and the person) it came from.
const seen = { walks: [], pages: [], facts: {}, console: [], page_errors: [], csp_violations: [],
  failed_requests: [], error_responses: [], screenshots: [], japanese_font: null, axe_control: null };
let browser;
let page;
let walk;
const contexts = [];

const path = (url) => new URL(url).pathname;
const heading = () => page.locator('h1').first().textContent({ timeout: WAIT_MS });
const text = async () => (await page.locator('body').innerText()).replace(/\s+/g, ' ').trim();
const at = (issuer) => (p) => new URL(p, issuer).toString();
const pathIs = (p) => (u) => u.pathname === p;

// The next main-frame navigation response whose URL passes `pred`, not a redirect (a change
// posted to a page's own URL is answered 303 to that URL with ?done=…).
// (A step that fails before awaiting it reports its own error, not this wait's timeout.)
function navigation(pred) {
  const next = page.waitForResponse((r) => r.request().isNavigationRequest()
    && r.frame() === page.mainFrame() && !(r.status() >= 300 && r.status() < 400) && pred(new URL(r.url())));
  next.catch(() => {});
  return next;
}

// Once the response `res` has arrived: its document committed and loaded.
async function landed(res) {
  await page.waitForURL((u) => u.href === res.url(), { waitUntil: 'load' });
  return res;
}

// Press (click) `selector` (exactly one element) and return the navigation response passing
// `pred`, once loaded.
async function press(selector, pred) {
  const next = navigation(pred);
  await page.locator(selector).click();
  return landed(await next);
}

async function go(url) {
  const res = await page.goto(url, { waitUntil: 'load' });
  if (!res) throw new Error(`no response for ${url}`);
  return res;
}

// Enter pressed in the focused field: the form's submission, as a keyboard user makes it.
async function enter(pred) {
  const next = navigation(pred);
  await page.keyboard.press('Enter');
  return landed(await next);
}

// The redirects that led to `res`, first to last: method, path, status.
async function hops(res) {
  const list = [];
  for (let req = res.request(); req; req = req.redirectedFrom()) {
    const r = await req.response();
    list.unshift({ method: req.method(), path: path(req.url()), status: r?.status() ?? null });
  }
  return list;
}

// The focused element, described: what a keyboard user is on (shared.focusedElement).
const focused = () => focusedElement(page);

// Tab from the top of the page (nothing focused) until the field `id` has the focus: every
// stop on the way. Throws if it is not reached in 40 presses.
async function tabTo(id) {
  await page.evaluate(() => document.activeElement?.blur());
  const stops = [];
  for (let i = 0; i < 40; i++) {
    await page.keyboard.press('Tab');
    const f = await focused();
    stops.push(f);
    if (f?.id === id) return { tabs: stops.length, stops };
  }
  throw new Error(`Tab never reaches #${id}: ${JSON.stringify(stops)}`);
}

// A new browser context (and page) for one person on `issuer`; the page becomes the current
// one. Every context reports console messages, CSP violations, page errors, failed requests
// and error statuses under the walk's and the person's name.
async function open(issuer, who) {
  const options = { locale: walk.locale, colorScheme: 'light', bypassCSP: Boolean(walk.axe),
    ...(walk.timezone ? { timezoneId: walk.timezone } : {}),
    ...(walk.phone ? PHONE : { viewport: { width: 1280, height: 800 } }) };
  const context = await browser.newContext(options);
  contexts.push(context);
  context.setDefaultTimeout(WAIT_MS);
  context.setDefaultNavigationTimeout(WAIT_MS);
  // The Copy button writes to the clipboard; the walk reads it back.
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(issuer).origin });
  const w = walk.name;
  await context.exposeBinding('__authrimCspViolation', ({ frame }, v) => seen.csp_violations.push({ walk: w, who, ...v, frame: frame.url() }));
  await context.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => window.__authrimCspViolation({
      documentURI: e.documentURI, blockedURI: e.blockedURI, effectiveDirective: e.effectiveDirective,
      originalPolicy: e.originalPolicy, disposition: e.disposition, sourceFile: e.sourceFile, lineNumber: e.lineNumber,
    }));
  });
  const p = await context.newPage();
  p.on('console', (m) => seen.console.push({ walk: w, who, type: m.type(), text: m.text(), url: m.location().url }));
  p.on('pageerror', (e) => seen.page_errors.push({ walk: w, who, error: String(e) }));
  p.on('requestfailed', (r) => seen.failed_requests.push({ walk: w, who, url: r.url(), error: r.failure()?.errorText }));
  p.on('response', (r) => {
    if (r.status() >= 400) seen.error_responses.push({ walk: w, who, method: r.request().method(), url: r.url(), status: r.status() });
  });
  p.on('request', (r) => {
    if (r.isNavigationRequest() && !walk.accept_language) walk.accept_language = r.headers()['accept-language'] ?? null;
  });
  page = p;
  return { context, page: p, at: at(issuer), who };
}

async function close(session) {
  await session.context.close().catch(() => {});
}

// CHECKER (test_console.py) does something with Python's requests: `op` "token" (the client
// credentials grant with this client's id and secret) or "jwks" (the keys published now).
async function check(label, body) {
  const res = await fetch(new URL('/check', CHECKER), { method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ walk: walk.name, label, ...body }) });
  if (!res.ok) throw new Error(`the checker: ${res.status} ${await res.text()}`);
  return res.json();
}

// The login page: `username` and the shared password, "Sign in"; the response passing `pred`.
async function signIn(username, pred) {
  await page.locator('#username').fill(username);
  await page.locator('#password').fill(PASSWORD);
  return press('form[action="/login"] button[type=submit]', pred);
}

// axe-core on the page as it stands, in `scheme` (light or dark), with AXE_TAGS' rules.
async function axe(scheme) {
  return runAxe(page, scheme, { script: AXE_SCRIPT, tags: AXE_TAGS });
}

// Every piece of text a reader meets (visible text nodes; accessible names, placeholders and
// titles from attributes; the document's title) with the language it is marked as being in
// (the nearest lang attribute). Code (identifiers, JSON, commands), the values of fields and
// the choices of a select are not prose: left out.
const parts = () => textParts(page, { skip: 'script, style, code, select, textarea', attributes: ['aria-label', 'alt', 'title'] });

// Whether this Chromium has a font for Japanese (see pages.mjs).
const japaneseFont = () => sharedJapaneseFont(page);

const shot = (file) => screenshot(page, seen, ARTIFACTS, file, WAIT_MS);

// The page's widths at a phone's size, what sticks out on the right (outside the tables'
// own scrolling regions, which clip what they hold, but for what is positioned absolutely:
// its containing block may lie outside the region, which then does not clip it), and those
// regions: each may scroll by itself.
const widths = () => page.evaluate(() => {
  const vw = document.documentElement.clientWidth;
  const unclipped = (e) => !e.closest('.table-wrap') || ['absolute', 'fixed'].includes(getComputedStyle(e).position);
  return { scroll_width: document.documentElement.scrollWidth, client_width: vw, inner_width: window.innerWidth,
    overflowing: [...document.querySelectorAll('body *')].filter((e) => unclipped(e)
      && e.getBoundingClientRect().right > vw + 0.5).slice(0, 5)
      .map((e) => `${e.tagName.toLowerCase()}${e.className ? '.' + e.className : ''}: right ${Math.round(e.getBoundingClientRect().right)}`),
    table_wraps: [...document.querySelectorAll('.table-wrap')].map((e) => ({ scroll_width: e.scrollWidth, client_width: e.clientWidth,
      right: Math.round(e.getBoundingClientRect().right), overflow_x: getComputedStyle(e).overflowX,
      tabindex: e.getAttribute('tabindex'), role: e.getAttribute('role'), label: e.getAttribute('aria-label') })),
    tables_outside_wraps: [...document.querySelectorAll('table')].filter((t) => !t.closest('.table-wrap')).length };
}).then(async (w) => ({ ...w, out_of_box: await outOfBox(page) }));

// A page reached by `res`: where, how, what it says and in which language; its screenshot,
// axe-core's findings or its widths as the walk asks. `console_page` false: a sign-in or
// account page on the way (no axe-core there: test_pages.py covers them).
async function visit(name, res, { console_page = true } = {}) {
  const n = seen.pages.filter((p) => p.walk === walk.name).length + 1;
  const headers = res.headers();
  const url = new URL(page.url());
  const rec = { walk: walk.name, n, name, path: url.pathname, query: Object.fromEntries(url.searchParams),
    method: res.request().method(), status: res.status(), hops: await hops(res),
    content_language: headers['content-language'] ?? null, vary: headers.vary ?? null,
    cache_control: headers['cache-control'] ?? null, csp: headers['content-security-policy'] ?? null,
    html_lang: await page.locator('html').getAttribute('lang'), title: await page.title(),
    heading: (await heading()).trim(), text: await text(), focused: await focused(),
    alerts: await page.locator('[role=alert]:visible').evaluateAll((l) => l.map((e) => e.textContent.replace(/\s+/g, ' ').trim())),
    notices: await page.locator('p.notice[role=status]:visible').evaluateAll((l) => l.map((e) => e.textContent.trim())),
    nav_current: await page.locator('nav.console-nav a[aria-current=page]').evaluateAll((l) => l.map((e) => e.getAttribute('href'))),
    signed_in_as: await page.locator('nav.console-nav p').evaluateAll((l) => l.map((e) => e.textContent.replace(/\s+/g, ' ').trim())),
    main_links: await page.locator('main a').evaluateAll((l) => l.map((e) => e.getAttribute('href'))),
    parts: await parts() };
  if (walk.shots) await shot(`${walk.name}-${String(n).padStart(2, '0')}-${name}.png`);
  if (walk.axe && console_page) rec.axe = [await axe('light'), await axe('dark')];
  if (walk.phone) rec.widths = await widths();
  seen.pages.push(rec);
  return rec;
}

// The client form as it stands: values, the grant boxes ticked, whether it can be changed.
const clientForm = () => page.evaluate(() => {
  const f = document.querySelector('form[action^="/console/clients"][method=post]:has(fieldset)');
  if (!f) return null;
  const v = (id) => f.querySelector(`#${id}`)?.value ?? null;
  return { action: f.getAttribute('action'), client_id: v('client_id'), client_name: v('client_name'),
    redirect_uris: v('redirect_uris'), method: v('method'), scope: v('scope'),
    type: f.querySelector('input[type=hidden][name=type]')?.value ?? null,
    advanced_open: f.querySelector('details.advanced')?.open ?? null,
    invalid: [...f.querySelectorAll('[aria-invalid=true]')].map((e) => e.id),
    grants: [...f.querySelectorAll('input[name^="grant:"]:checked')].map((i) => i.name.slice(6)),
    disabled: f.querySelector('fieldset').disabled, csrf: Boolean(f.querySelector('input[type=hidden][name=csrf]')?.value),
    buttons: document.querySelectorAll('main button').length,
    post_forms: [...document.querySelectorAll('main form[method=post]')].map((x) => x.getAttribute('action')) };
});

// A SAML application's form (console_saml.html) as it stands: values, the boxes ticked, what
// its page says of the metadata (entity ID, where responses go).
const samlForm = () => page.evaluate(() => {
  const f = document.querySelector('main form[method=post]:has(#name_id_format)');
  if (!f) return null;
  const v = (id) => f.querySelector(`#${id}`)?.value ?? null;
  return { action: f.getAttribute('action'), client_name: v('client_name'), metadata: v('metadata'),
    name_id_format: v('name_id_format'), attributes: v('attributes'), default_relay_state: v('default_relay_state'),
    checked: [...f.querySelectorAll('input[type=checkbox]:checked')].map((i) => i.name),
    invalid: [...f.querySelectorAll('[aria-invalid=true]')].map((e) => e.id),
    disabled: f.querySelector('fieldset').disabled, csrf: Boolean(f.querySelector('input[type=hidden][name=csrf]')?.value),
    acs: [...document.querySelectorAll('main p.muted code')].map((c) => c.textContent.trim()),
    grant_fields: document.querySelectorAll('main input[name^="grant:"]').length };
});

const userForm = () => page.evaluate(() => {
  const f = document.querySelector('form[action^="/console/users"][method=post]:has(fieldset)');
  if (!f) return null;
  const v = (id) => f.querySelector(`#${id}`)?.value ?? null;
  return { action: f.getAttribute('action'), username: v('username'), email: v('email'), name: v('name'),
    roles: [...f.querySelectorAll('input[name^="role:"]:checked')].map((i) => i.name.slice(5)),
    disabled: f.querySelector('fieldset').disabled, buttons: document.querySelectorAll('main button').length,
    post_forms: [...document.querySelectorAll('main form[method=post]')].map((x) => x.getAttribute('action')) };
});

// A table's rows: each cell's text, and the links and buttons in the row.
const rows = (scope = 'main') => page.locator(`${scope} table tbody tr`).evaluateAll((trs) => trs.map((tr) => ({
  cells: [...tr.cells].map((c) => c.textContent.replace(/\s+/g, ' ').trim()),
  links: [...tr.querySelectorAll('a')].map((a) => a.getAttribute('href')),
  buttons: [...tr.querySelectorAll('button')].map((b) => ({ text: b.textContent.trim(), label: b.getAttribute('aria-label'),
    form_action: b.form?.getAttribute('action') ?? null, sid: Boolean(b.form?.querySelector('input[name=sid]')?.value) })),
}))).catch(() => []);

// The times on the page: what shows, the machine-readable moment, and the title.
const times = () => page.locator('main time[data-local]').evaluateAll((l) => l.map((e) => ({
  text: e.textContent, datetime: e.getAttribute('datetime'), title: e.getAttribute('title') })));

const keyRows = () => page.locator('main table tbody tr').evaluateAll((trs) => trs.map((tr) => ({
  kid: tr.cells[0].textContent.trim(), alg: tr.cells[1].textContent.trim(),
  state: [...tr.querySelector('span.state')?.classList ?? []].find((c) => c.startsWith('state-'))?.slice(6) ?? null,
  label: tr.querySelector('span.state')?.textContent.trim() ?? null })));

// The secret page: the client, the secret, and the Copy button (shown when the browser has a
// clipboard), pressed: what the clipboard then holds and what the button says.
async function secretPage({ copy }) {
  const out = await page.evaluate(() => ({
    client_id: (document.getElementById('created-client-id') ?? document.querySelector('dl.pairs dd code'))?.textContent.trim() ?? null,
    issuer: document.getElementById('created-issuer')?.textContent.trim() ?? null,
    discovery: document.getElementById('created-discovery')?.textContent.trim() ?? null,
    snippet: document.getElementById('snippet')?.textContent ?? null,
    secret: document.getElementById('secret')?.textContent.trim() ?? null,
    done_link: [...document.querySelectorAll('main a')].map((a) => a.getAttribute('href')).find((h) => h.startsWith('/console/clients/')) ?? null,
    copy_label: document.querySelector('button[data-copy=secret]')?.textContent.trim() ?? null,
    copied_label: document.querySelector('button[data-copy=secret]')?.getAttribute('data-copied') ?? null,
  }));
  const button = page.locator('button[data-copy=secret]');
  out.copy_visible = await button.isVisible();
  if (copy && out.copy_visible) {
    await page.evaluate(() => navigator.clipboard.writeText('(not copied)'));
    await button.click();
    await page.waitForFunction((want) => document.querySelector('button[data-copy=secret]').textContent === want,
      out.copied_label, { timeout: WAIT_MS });
    out.copy_label_after = await button.textContent();
    out.clipboard = await page.evaluate(() => navigator.clipboard.readText());
    const settings = page.locator('button[data-copy=snippet]');
    if (await settings.count()) {
      out.settings_copy_visible = await settings.isVisible();
      await settings.click();
      await page.waitForFunction((want) => document.querySelector('button[data-copy=snippet]').textContent === want,
        out.copied_label, { timeout: WAIT_MS });
      out.settings_clipboard = await page.evaluate(() => navigator.clipboard.readText());
    }
  }
  return out;
}

// Whether the page holds `secret` anywhere (its HTML, not only what shows).
const holds = async (secret) => (await page.content()).includes(secret);

// The admin's sign-in to the console: the login page, the second-factor page with the code
// of this moment, the overview.
async function adminSignIn(s, admin) {
  await visit('login', await go(s.at('/console')), { console_page: false });
  await visit('second-factor', await signIn(admin.username, pathIs('/login')), { console_page: false });
  const now = Date.now();
  const code = hotp(base32(admin.totp), step(now));
  seen.facts[walk.name].totp = { key: admin.totp, step: step(now), code };
  await page.locator('#code').fill(code);
  const res = await press('form[action="/login/second-factor"] button[type=submit]', pathIs('/console'));
  const rec = await visit('overview', res);
  rec.tiles = await page.locator('main ul.tiles a').evaluateAll((l) => l.map((a) => ({ href: a.getAttribute('href'),
    count: Number(a.querySelector('strong').textContent) })));
  rec.events = await rows();
  return rec;
}

async function fullWalk() {
  const people = USERS[walk.name];
  const facts = seen.facts[walk.name];
  const admin = await open(ISSUER, 'admin');
  seen.japanese_font ??= await japaneseFont();
  await adminSignIn(admin, people.admin);

  // Clients: the list, the form, an error, the secret once, the client's page, a change, a
  // new secret.
  {
    const list = await visit('clients', await press('nav.console-nav a[href="/console/clients"]', pathIs('/console/clients')));
    list.rows = await rows();
    const types = await visit('client-new', await press('main a[href="/console/clients/new"]', pathIs('/console/clients/new')));
    types.types = await page.locator('main input[type=radio][name=type]').evaluateAll((l) => l.map((i) => i.value));
    types.checked = await page.locator('main input[type=radio][name=type]:checked').evaluateAll((l) => l.map((i) => i.value));
    await page.locator('#type-spa').check();
    const spa = await visit('client-form-spa', await press('form[action="/console/clients/new"] button[type=submit]', pathIs('/console/clients/new')));
    spa.form = await clientForm();
    await press('main a[href="/console/clients/new"]', pathIs('/console/clients/new'));
    await page.locator('#type-web').check();
    const form = await visit('client-form', await press('form[action="/console/clients/new"] button[type=submit]', pathIs('/console/clients/new')));
    form.form = await clientForm();
    form.advanced_visible = await page.locator('#scope').isVisible();
    await page.locator('#client_name').fill(CLIENT_NAME);
    await page.locator('#redirect_uris').fill(BAD_REDIRECT_URI);
    await page.locator('details.advanced > summary').click();
    await page.locator('input[name="grant:client_credentials"]').check();
    const bad = await visit('client-error', await press('form[action="/console/clients"] button[type=submit]', pathIs('/console/clients')));
    bad.form = await clientForm();
    bad.described = await page.locator('#redirect_uris').getAttribute('aria-errormessage');
    await page.locator('#redirect_uris').fill(REDIRECT_URIS.join('\n'));
    const created = await visit('client-created', await press('form[action="/console/clients"] button[type=submit]', pathIs('/console/clients')));
    created.secret_page = await secretPage({ copy: true });
    const { client_id: clientId, secret, done_link: clientPath } = created.secret_page;
    if (!clientId || !secret || !clientPath) throw new Error('the secret page has no client id, secret or link');
    facts.client = { id: clientId, path: clientPath, created_secret: secret };
    facts.token_created = await check('created', { op: 'token', client_id: clientId, secret });

    const show = await visit('client', await press(`main a[href="${clientPath}"]`, pathIs(clientPath)));
    show.form = await clientForm();
    show.holds_secret = await holds(secret);
    const again = await page.reload({ waitUntil: 'load' });
    show.reloaded = { status: again.status(), holds_secret: await holds(secret), secret_elements: await page.locator('#secret').count() };

    await page.locator('#client_name').fill(CLIENT_RENAMED);
    const saved = await visit('client-saved', await press(`form[action="${clientPath}"] button[type=submit]`, pathIs(clientPath)));
    saved.form = await clientForm();
    saved.holds_secret = await holds(secret);
    facts.token_after_save = await check('after-save', { op: 'token', client_id: clientId, secret });

    const rotated = await visit('client-secret', await press(`form[action="${clientPath}/secret"] button[type=submit]`, pathIs(`${clientPath}/secret`)));
    rotated.secret_page = await secretPage({ copy: false });
    facts.client.rotated_secret = rotated.secret_page.secret;
    facts.token_old_secret = await check('rotated-old', { op: 'token', client_id: clientId, secret });
    facts.token_new_secret = await check('rotated-new', { op: 'token', client_id: clientId, secret: rotated.secret_page.secret });
  }

  // A SAML application: its type chosen among the others; its form filled and sent with the
  // keyboard alone (Tab from the top to the name, then on from field to field: the metadata
  // pasted, an attribute typed, on to the button, Enter); the page it is then given.
  {
    const sp = samlSp(walk.name);
    await press('nav.console-nav a[href="/console/clients"]', pathIs('/console/clients'));
    await press('main a[href="/console/clients/new"]', pathIs('/console/clients/new'));
    await page.locator('#type-saml').check();
    const form = await visit('saml-form', await press('form[action="/console/clients/new"] button[type=submit]', pathIs('/console/clients/new')));
    form.fields = await formFields(page);
    form.form = await samlForm();
    const keyboard = { to_name: await tabTo('client_name'), stops: [] };
    const tab = async () => {
      await page.keyboard.press('Tab');
      const f = await focused();
      keyboard.stops.push(f);
      return f;
    };
    const onTo = async (id) => {
      const f = await tab();
      if (f?.id !== id) throw new Error(`Tab from the previous field lands on ${JSON.stringify(f)}, not #${id}`);
    };
    await page.keyboard.type(SAML_NAME);
    await onTo('metadata');
    await page.keyboard.insertText(samlMetadata(sp)); // as a paste puts it in
    await onTo('name_id_format'); // left at its default
    await onTo('attributes');
    await page.keyboard.type(SAML_ATTRIBUTES);
    // On through the rest of the form to its button: every stop recorded for the checks.
    for (let f = null; f?.tag !== 'button';) {
      if (keyboard.stops.length >= 30) throw new Error(`Tab never reaches the form's button: ${JSON.stringify(keyboard.stops)}`);
      f = await tab();
    }
    form.typed = await samlForm();
    // Enter on the button; a refusal (400 at /console/saml) is recorded too, for the report.
    form.keyboard = keyboard;
    const created = await visit('saml-created', await enter((u) => u.pathname === '/console/saml' || u.pathname.startsWith('/console/clients/')));
    created.form = await samlForm();
    facts.saml = { ...sp, path: created.path, id: decodeURIComponent(created.path.split('/').pop()) };
  }

  // Users: the list, the form, a user created with the auditor role; that user signed in
  // elsewhere, found with the keyboard, their session ended.
  {
    const staff = people.staff;
    const list = await visit('users', await press('nav.console-nav a[href="/console/users"]', pathIs('/console/users')));
    list.rows = await rows();
    const form = await visit('user-new', await press('main a[href="/console/users/new"]', pathIs('/console/users/new')));
    form.form = await userForm();
    await page.locator('#username').fill(staff.username);
    await page.locator('#email').fill(staff.email);
    await page.locator('#name').fill(staff.name);
    await page.locator('#password').fill(PASSWORD);
    await page.locator('input[name="role:auditor"]').check();
    const created = await visit('user-created', await press('form[action="/console/users"] button[type=submit]',
      (u) => u.pathname.startsWith('/console/users/')));
    created.form = await userForm();
    created.sessions = await rows();
    const staffPath = created.path;
    facts.staff = { path: staffPath, id: decodeURIComponent(staffPath.split('/').pop()) };

    // staff-<walk> signs in to their account page in a browser of their own.
    const other = await open(ISSUER, 'staff');
    await go(other.at('/account'));
    const account = await signIn(staff.username, pathIs('/account'));
    facts.staff_signed_in = { status: account.status(), path: path(page.url()), hops: await hops(account) };
    page = admin.page;

    // The list, searched with the keyboard alone: Tab to the field, the name, Enter.
    await press('nav.console-nav a[href="/console/users"]', pathIs('/console/users'));
    const keyboard = await tabTo('q');
    await page.keyboard.type(staff.username);
    const found = await visit('users-search', await enter(pathIs('/console/users')));
    found.keyboard = keyboard;
    found.rows = await rows();
    found.search_value = await page.locator('#q').inputValue();

    const user = await visit('user', await press(`main table a[href="${staffPath}"]`, pathIs(staffPath)));
    user.form = await userForm();
    user.sessions = await rows();
    user.factors = await page.locator('main ul.factors li').count();
    const ended = await visit('user-session-ended', await press(`main table form[action="${staffPath}/sessions/end"] button[type=submit]`, pathIs(staffPath)));
    ended.sessions = await rows();

    // Their browser: the account page now asks them to sign in.
    page = other.page;
    const after = await page.reload({ waitUntil: 'load' });
    facts.staff_after_end = { status: after.status(), path: path(page.url()), hops: await hops(after),
      login_form: await page.locator('form[action="/login"] #username').count() };
    await close(other);
    page = admin.page;
  }

  // Signing keys: a rotation; the JWKS (by Python) before and after.
  {
    facts.jwks_before = await check('jwks-before', { op: 'jwks' });
    const keys = await visit('keys', await press('nav.console-nav a[href="/console/keys"]', pathIs('/console/keys')));
    keys.keys = await keyRows();
    keys.algs = await page.locator('#alg option').evaluateAll((l) => l.map((o) => o.value));
    const rotated = await visit('keys-rotated', await press('form[action="/console/keys/rotate"] button[type=submit]', pathIs('/console/keys')));
    rotated.keys = await keyRows();
    facts.jwks_after = await check('jwks-after', { op: 'jwks' });
  }

  // The audit log, filtered with the keyboard alone: Tab to the event field, type, Enter.
  {
    const audit = await visit('audit', await press('nav.console-nav a[href="/console/audit"]', pathIs('/console/audit')));
    audit.events = await rows();
    audit.times = await times();
    audit.event_options = await page.locator('#event option').evaluateAll((l) => l.map((o) => o.value));
    const keyboard = await tabTo('event');
    await page.keyboard.type(AUDIT_EVENT);
    await page.keyboard.press('Tab');
    const filtered = await visit('audit-filtered', await enter(pathIs('/console/audit')));
    filtered.keyboard = keyboard;
    filtered.events = await rows();
    filtered.event_value = await page.locator('#event').inputValue();
    await page.locator('#event').selectOption('');
    await page.locator('#user').fill(people.staff.username);
    const byUser = await visit('audit-by-user', await enter(pathIs('/console/audit')));
    byUser.events = await rows();
    byUser.times = await times();
  }
  await close(admin);

  // Refused: no role; an admin without a second factor (the policy asks for one).
  {
    const s = await open(ISSUER, 'nobody');
    await go(s.at('/console'));
    await visit('denied', await signIn(people.nobody.username, pathIs('/console')));
    await close(s);
  }
  {
    const s = await open(ISSUER, 'bare');
    await go(s.at('/console'));
    await visit('needs-factor', await signIn(people.bare.username, pathIs('/console')));
    await visit('account', await press('main a[href="/account"]', pathIs('/account')), { console_page: false });
    await close(s);
  }

  // An auditor, on the server that asks for a second factor only of those who have one.
  {
    const s = await open(LENIENT_ISSUER, 'auditor');
    await go(s.at('/console'));
    const home = await visit('auditor-overview', await signIn(people.auditor.username, pathIs('/console')));
    home.tiles = await page.locator('main ul.tiles a').count();
    const list = await visit('auditor-clients', await press('nav.console-nav a[href="/console/clients"]', pathIs('/console/clients')));
    list.rows = await rows();
    const clientPath = `/console/clients/${encodeURIComponent(env('LENIENT_CLIENT_ID'))}`;
    const show = await visit('auditor-client', await press(`main table a[href="${clientPath}"]`, pathIs(clientPath)));
    show.form = await clientForm();
    // A form the page does not offer, built on it with its own csrf token: a new client.
    const forced = navigation(pathIs('/console/clients'));
    const posted = await page.evaluate((fields) => {
      const form = document.createElement('form');
      form.method = 'post';
      form.action = '/console/clients';
      const csrf = document.querySelector('input[name=csrf]').value;
      for (const [name, value] of Object.entries({ csrf, ...fields })) {
        const input = document.createElement('input');
        input.type = 'hidden';
        input.name = name;
        input.value = value;
        form.append(input);
      }
      document.body.append(form);
      form.submit();
      return { csrf: Boolean(csrf), fields: Object.keys(fields) };
    }, { client_id: people.auditor.forced_client_id, client_name: 'Forced', redirect_uris: REDIRECT_URIS[0],
      'grant:client_credentials': 'on', method: 'client_secret_basic', scope: 'openid' });
    const refused = await visit('read-only', await landed(await forced));
    refused.posted = posted;
    await press('main a[href="/console"]', pathIs('/console'));
    const users = await visit('auditor-users', await press('nav.console-nav a[href="/console/users"]', pathIs('/console/users')));
    users.rows = await rows();
    const mePath = `/console/users/${encodeURIComponent(people.auditor.id)}`;
    const me = await visit('auditor-user', await press(`main table a[href="${mePath}"]`, pathIs(mePath)));
    me.form = await userForm();
    me.sessions = await rows();
    await close(s);
  }
}

// At a phone's size: the pages an admin reads most, with their tables.
async function shortWalk() {
  const people = USERS[walk.name];
  const admin = await open(ISSUER, 'admin');
  seen.japanese_font ??= await japaneseFont();
  await adminSignIn(admin, people.admin);
  await visit('clients', await press('nav.console-nav a[href="/console/clients"]', pathIs('/console/clients')));
  await visit('client-new', await press('main a[href="/console/clients/new"]', pathIs('/console/clients/new')));
  await page.locator('#type-mcp').check();
  await visit('client-form', await press('form[action="/console/clients/new"] button[type=submit]', pathIs('/console/clients/new')));
  await press('nav.console-nav a[href="/console/clients"]', pathIs('/console/clients'));
  const clientPath = `/console/clients/${encodeURIComponent(env('STRICT_CLIENT_ID'))}`;
  await visit('client', await press(`main table a[href="${clientPath}"]`, pathIs(clientPath)));
  await visit('users', await press('nav.console-nav a[href="/console/users"]', pathIs('/console/users')));
  const mePath = `/console/users/${encodeURIComponent(people.admin.id)}`;
  const me = await visit('user', await press(`main table a[href="${mePath}"]`, pathIs(mePath)));
  me.sessions = await rows();
  await visit('keys', await press('nav.console-nav a[href="/console/keys"]', pathIs('/console/keys')));
  await visit('audit', await press('nav.console-nav a[href="/console/audit"]', pathIs('/console/audit')));
  await close(admin);
}

// The harness itself, before any page of Authrim (as in pages.mjs): faint text in both
// themes, faint text in the dark theme only, a field without a label.
async function axeControl() {
  const context = await browser.newContext(AXE_CONTROL_CONTEXT);
  contexts.push(context);
  page = await context.newPage();
  const control = await axeControlRuns(page, axe);
  await context.close();
  return control;
}

async function main() {
  browser = await chromium.launch(chromiumOptions());
  if (SCENARIO === 'axe') seen.axe_control = await axeControl();
  for (const w of WALKS) {
    walk = { ...w };
    seen.facts[walk.name] = {};
    const started = Date.now();
    await { full: fullWalk, short: shortWalk }[w.kind]();
    seen.walks.push({ ...walk, ms: Date.now() - started });
  }
  return { scenario: SCENARIO, axe_version: AXE_VERSION, axe_tags: AXE_TAGS, ...seen };
}

await runAndReport(main, () => ({ page, seen }), async () => {
  for (const c of contexts) await c.close().catch(() => {});
  await browser?.close().catch(() => {});
});
