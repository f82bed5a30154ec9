// Passkeys (WebAuthn) and the account page in a real browser: Debian's Chromium, headless,
// driven by Playwright (playwright-core only), with a virtual authenticator added through the
// Chrome DevTools Protocol (WebAuthn.addVirtualAuthenticator: CTAP2, internal, resident keys,
// user verification, presence simulated). test_passkeys.py starts Authrim with a localhost
// issuer (WebAuthn needs a domain), registers the user and a client, runs the client (an HTTP
// server whose /start begins a code flow with state, nonce and PKCE and whose /cb redeems the
// code) and checks what this prints against the ID tokens the client received.
//
// SCENARIO=main, one browser profile, in order:
//   1. /account signs in (account client → /authorize → password) and lists no method; "Add a
//      passkey" (name "Laptop") runs navigator.credentials.create and lists it; the
//      authenticator then holds one resident credential for rpId localhost.
//   2. "Sign out" (/logout, its confirmation); the client's sign-in with "Sign in with a
//      passkey" on the login page alone, consent, the client's callback; Back shows the consent
//      page again by a GET (no form resubmission).
//   3. prompt=login: the password, then the second-factor page's "Use a passkey".
//   4. The account page (the sign-in is recent): "Add an authenticator app", its QR code and
//      key, a wrong code first (422, the page stays usable), then the RFC 6238 code computed
//      here from the key shown; "Make new recovery codes" (10); then, keyboard only (Tab,
//      Enter), the password and a recovery code on the second-factor page.
//   5. Conditional mediation: the login page's autofill request (mediation "conditional")
//      answered by the virtual authenticator, nothing typed or pressed.
//   6. The account page's "Remove" of the passkey; "Sign in with a passkey" is then refused
//      (401, an error on the login page, nothing sent to the client), and the same page still
//      signs in with the password and a second recovery code (no passkey offered any more).
// SCENARIO=reauth (a server with AUTHRIM_ACCOUNT_REAUTH_MAX_AGE=3): signed in to /account,
//   4.5 s later "Add an authenticator app" gets "Confirm it is you" (403); "Sign in again"
//   asks for the password (prompt=login) and returns to /account, where the same button is
//   then let through (the app's QR code; the change has to start within 3 s of signing in).
//
// The login page starts a conditional request as soon as it loads, and this authenticator
// answers such a request at once (as if the user picked the passkey from autofill). An init
// script therefore stands in for the user's choice: every conditional request is recorded and,
// unless act 5 runs, left pending like an autofill offer the user ignores (it still honours the
// page's AbortSignal, which the page's passkey button uses); other requests go through as they are.
//
// Input, from the environment: SCENARIO, ISSUER, USERNAME, PASSWORD, RP (the client's origin;
// main only), CHROMIUM, ARTIFACTS_DIR (a screenshot of every distinct page, and on failure the
// page's HTML and a screenshot) and WAIT_MS (the longest any one wait may take). Output: one
// line of JSON, what the browser saw. Any failed step exits 1 with the browser's console, CSP
// reports and the current page on stderr.
import { chromium } from 'playwright-core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { env, giveUpAfter, runAndReport } from './report.mjs';
import { base32, chromiumOptions, hotp, screenshot, step } from './shared.mjs';

const SCENARIO = env('SCENARIO');
const ISSUER = env('ISSUER');
const ARTIFACTS = env('ARTIFACTS_DIR');
const WAIT_MS = Number(process.env.WAIT_MS || 10000);

giveUpAfter(100);


// What the browser reports along the way, for the checks and for a failure's diagnosis.
const seen = { console: [], page_errors: [], csp_violations: [], conditional: [], webauthn: [],
  failed_requests: [], screenshots: [], error_responses: [], client_callbacks: 0 };
const profile = mkdtempSync(join(tmpdir(), 'authrim-chromium-'));
let context;
let page;
let cdp;
let authenticatorId;
// Whether the page's conditional (autofill) requests reach the authenticator (act 5 only).
let conditionalUi = false;

const heading = () => page.locator('h1').first().textContent({ timeout: WAIT_MS });
const text = async () => (await page.locator('body').innerText()).replace(/\s+/g, ' ').trim();
const path = (url) => new URL(url).pathname;
const onIssuer = (url) => new URL(url).origin === new URL(ISSUER).origin;

// The next main-frame navigation response whose URL passes `pred`.
const navigation = (pred) => page.waitForResponse((r) => r.request().isNavigationRequest()
  && r.frame() === page.mainFrame() && pred(new URL(r.url())));

// The redirects that led to `res`, first to last: method, path, status.
async function hops(res) {
  const list = [];
  for (let req = res.request(); req; req = req.redirectedFrom()) {
    const r = await req.response();
    list.unshift({ method: req.method(), path: path(req.url()), status: r?.status() ?? null });
  }
  return list;
}

// Once the response `res` has arrived: its document committed and loaded (until then the
// page is still the one before).
async function landed(res) {
  await page.waitForURL((u) => u.href === res.url(), { waitUntil: 'load' });
  return res;
}

// Press (click) `locator` and return the navigation response passing `pred`, once loaded.
async function press(locator, pred) {
  const next = navigation(pred);
  await locator.click();
  return landed(await next);
}

// The page as it stands: where, with what status and heading.
async function describe(res) {
  return { path: path(page.url()), status: res.status(), method: res.request().method(),
    hops: await hops(res), heading: await heading() };
}

const shot = (name) => screenshot(page, seen, ARTIFACTS, `${name}.png`, WAIT_MS);

async function credentials() {
  const { credentials: list } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
  return list.map(({ privateKey, ...c }) => c);
}

// The login page's passkey offer and the username field's autofill hint.
async function loginOffer() {
  const button = page.getByRole('button', { name: 'Sign in with a passkey' });
  return {
    passkey_button_visible: await button.isVisible(),
    username_autocomplete: await page.locator('#username').getAttribute('autocomplete'),
    password_button: await page.getByRole('button', { name: 'Sign in', exact: true }).count(),
  };
}

// The account page's list of methods and recovery-code count.
async function account() {
  const items = page.locator('ul.factors:not(.sessions):not(.applications) > li');  // sign-in methods, not sessions or applications
  const methods = [];
  for (let i = 0; i < await items.count(); i++) {
    const li = items.nth(i);
    methods.push({ name: await li.locator('strong').textContent(), text: (await li.innerText()).replace(/\s+/g, ' ').trim(),
      remove_buttons: await li.getByRole('button', { name: 'Remove' }).count() });
  }
  return {
    heading: await heading(),
    notice: await page.locator('p.notice[role=status]').count() ? await page.locator('p.notice[role=status]').textContent() : null,
    methods,
    text: await text(),
    add_passkey: await page.getByRole('button', { name: 'Add a passkey' }).count(),
    add_app: await page.getByRole('button', { name: 'Add an authenticator app' }).count(),
    new_codes: await page.getByRole('button', { name: 'Make new recovery codes' }).count(),
    sign_out: await page.getByRole('link', { name: 'Sign out' }).count(),
  };
}

// The client's sign-in begun at its /start (it redirects to /authorize).
async function startAt(label, prompt, waitUntil = 'load') {
  const u = new URL('/start', env('RP'));
  u.searchParams.set('label', label);
  if (prompt) u.searchParams.set('prompt', prompt);
  return page.goto(u.toString(), { waitUntil });
}
const atClient = (u) => u.origin === new URL(env('RP')).origin && u.pathname === '/cb';
async function callback(res) {
  const q = Object.fromEntries(new URL(page.url()).searchParams);
  return { status: res.status(), has_code: Boolean(q.code), state: q.state ?? null, error: q.error ?? null,
    heading: await heading(), hops: await hops(res) };
}

async function signInWithPassword(pred) {
  await page.getByLabel('Username or e-mail').fill(env('USERNAME'));
  await page.getByLabel('Password').fill(env('PASSWORD'));
  return press(page.getByRole('button', { name: 'Sign in', exact: true }), pred);
}

// "Add an authenticator app": what the page shows (the key without its grouping spaces).
async function totpPage(res) {
  const svg = page.getByRole('img', { name: /QR code/ });
  return { ...(await describe(res)), qr_images: await svg.count(),
    qr_tag: await svg.first().evaluate((e) => e.tagName.toLowerCase()),
    qr_modules: await svg.first().evaluate((e) => e.querySelectorAll('path, rect').length),
    key: (await page.locator('code').first().textContent()).replace(/\s+/g, ''),
    alert: await page.getByRole('alert').count() ? await page.getByRole('alert').textContent() : null,
    code_field: await page.getByLabel('The 6-digit code your app shows').count() };
}

async function launch() {
  context = await chromium.launchPersistentContext(profile, chromiumOptions());
  await context.exposeBinding('__authrimCspViolation', ({ frame }, v) => seen.csp_violations.push({ ...v, frame: frame.url() }));
  await context.exposeBinding('__authrimConditional', (_, r) => {
    seen.conditional.push({ ...r, answered: conditionalUi });
    return conditionalUi;
  });
  await context.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => window.__authrimCspViolation({
      documentURI: e.documentURI, blockedURI: e.blockedURI, effectiveDirective: e.effectiveDirective,
      originalPolicy: e.originalPolicy, disposition: e.disposition, sourceFile: e.sourceFile, lineNumber: e.lineNumber,
    }));
    // The user's part in conditional mediation (see the header): recorded, and either passed
    // to the authenticator or left pending until the page aborts it.
    const container = navigator.credentials;
    if (!container || !window.PublicKeyCredential) return;
    const get = container.get.bind(container);
    container.get = (options) => {
      if (!options || options.mediation !== 'conditional') return get(options);
      const signal = options.signal;
      return window.__authrimConditional({ url: location.href, has_signal: Boolean(signal),
        allow_credentials: (options.publicKey?.allowCredentials ?? []).length }).then((answer) => answer ? get(options)
        : new Promise((_, reject) => {
          const stop = () => reject(new DOMException('the passkey was not picked from autofill', 'AbortError'));
          if (signal?.aborted) stop(); else signal?.addEventListener('abort', stop, { once: true });
        }));
    };
  });
  page = context.pages()[0] ?? await context.newPage();
  page.setDefaultTimeout(WAIT_MS);
  page.setDefaultNavigationTimeout(WAIT_MS);
  page.on('console', (m) => seen.console.push({ type: m.type(), text: m.text(), url: m.location().url }));
  page.on('pageerror', (e) => seen.page_errors.push(String(e)));
  page.on('requestfailed', (r) => seen.failed_requests.push({ url: r.url(), error: r.failure()?.errorText }));
  page.on('request', (r) => {
    if (process.env.RP && atClient(new URL(r.url()))) seen.client_callbacks += 1;
  });
  page.on('response', (r) => {
    if (r.status() >= 400) seen.error_responses.push({ method: r.request().method(), url: r.url(), status: r.status() });
  });

  cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  ({ authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', { options: {
    protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true,
    isUserVerified: true, automaticPresenceSimulation: true } }));
  const event = (kind) => (e) => seen.webauthn.push({ kind, credential_id: e.credential.credentialId, rp_id: e.credential.rpId,
    sign_count: e.credential.signCount, at: page.url() });
  cdp.on('WebAuthn.credentialAdded', event('added'));
  cdp.on('WebAuthn.credentialAsserted', event('asserted'));
}

// Every step the main scenario takes; what it saw.
async function mainScenario() {
  const out = {};

  // 1. The account page, signed in with the password; a passkey added.
  {
    const res = await page.goto(new URL('/account', ISSUER).toString());
    out.login_page = { ...(await describe(res)), url: page.url(), ...(await loginOffer()),
      conditional_requests: seen.conditional.length };
    await shot('01-login');
    const landed = await signInWithPassword((u) => onIssuer(u.href) && u.pathname === '/account');
    out.account_first = { ...(await describe(landed)), ...(await account()) };
    await shot('02-account');

    const setup = await press(page.getByRole('button', { name: 'Add a passkey' }), (u) => u.pathname === '/account/passkeys/new');
    out.add_passkey_page = { ...(await describe(setup)), name_field: await page.getByLabel('Name for this passkey').count(),
      create_button_visible: await page.getByRole('button', { name: 'Create the passkey' }).isVisible() };
    await shot('03-add-passkey');
    await page.getByLabel('Name for this passkey').fill('Laptop');
    const added = await press(page.getByRole('button', { name: 'Create the passkey' }), (u) => u.pathname === '/account');
    out.passkey_added = { ...(await describe(added)), url: page.url(), ...(await account()) };
    out.credentials_after_add = await credentials();
    await shot('04-account-passkey-added');
  }

  // 2. Signed out; the client's sign-in with the passkey alone; Back after consenting.
  {
    const ask = await press(page.getByRole('link', { name: 'Sign out' }), (u) => u.pathname === '/logout');
    out.sign_out_page = { ...(await describe(ask)) };
    await shot('05-sign-out');
    const done = await press(page.getByRole('button', { name: 'Sign out', exact: true }), (u) => u.pathname.startsWith('/logout'));
    out.signed_out = { ...(await describe(done)) };

    const login = await startAt('passkey');
    out.passkey_login_page = { ...(await describe(login)), ...(await loginOffer()) };
    const asserted = seen.webauthn.length;
    const consent = await press(page.getByRole('button', { name: 'Sign in with a passkey' }), (u) => u.pathname === '/consent');
    out.passkey_consent = { ...(await describe(consent)), url: page.url(), assertions: seen.webauthn.slice(asserted) };
    await shot('06-consent');
    const cb = await press(page.getByRole('button', { name: 'Allow' }), atClient);
    out.passkey_callback = await callback(cb);
    const back = await page.goBack({ waitUntil: 'load' });
    out.back_after_consent = { url: page.url(), consent_url: out.passkey_consent.url, status: back?.status() ?? null,
      method: back?.request().method() ?? null, heading: await heading(),
      allow_button: await page.getByRole('button', { name: 'Allow' }).count() };
  }

  // 3. The password, then the passkey as the second factor.
  {
    const login = await startAt('password_passkey', 'login');
    out.prompt_login_page = { ...(await describe(login)), ...(await loginOffer()) };
    const second = await signInWithPassword((u) => u.pathname === '/login');
    out.second_factor_passkey = { ...(await describe(second)),
      use_passkey_visible: await page.getByRole('button', { name: 'Use a passkey' }).isVisible(),
      code_fields: await page.getByLabel('Code from your authenticator app, or a recovery code').count() };
    await shot('07-second-factor-passkey');
    const asserted = seen.webauthn.length;
    const cb = await press(page.getByRole('button', { name: 'Use a passkey' }),
      (u) => atClient(u) || u.pathname === '/consent');
    if (path(page.url()) === '/consent') throw new Error('consent asked again for the same client and scope');
    out.password_passkey_callback = { ...(await callback(cb)), assertions: seen.webauthn.slice(asserted) };
  }

  // 4. An authenticator app and recovery codes on the account page; then the keyboard-only
  //    sign-in with the password and a recovery code.
  {
    const res = await page.goto(new URL('/account', ISSUER).toString());
    out.account_again = { ...(await describe(res)), ...(await account()) };
    const setup = await press(page.getByRole('button', { name: 'Add an authenticator app' }), (u) => u.pathname === '/account/totp/new');
    const first = await totpPage(setup);
    out.totp_page = first;
    await shot('08-add-authenticator-app');
    const key = base32(first.key);
    const s = step();
    const valid = new Set([-2, -1, 0, 1, 2].map((d) => hotp(key, s + d)));
    let wrong = hotp(key, s + 1000);
    while (valid.has(wrong)) wrong = String((Number(wrong) + 1) % 1e6).padStart(6, '0');
    await page.getByLabel('The 6-digit code your app shows').fill(wrong);
    await page.getByLabel('Name for this app').fill('Phone');
    const refused = await press(page.getByRole('button', { name: 'Add', exact: true }), (u) => u.pathname === '/account/totp');
    out.totp_wrong = { ...(await totpPage(refused)), wrong_code: wrong };
    await shot('09-add-authenticator-app-wrong-code');
    const now = Date.now();
    const code = hotp(key, step(now));
    out.totp_code = { key: first.key, step: step(now), code };
    await page.getByLabel('The 6-digit code your app shows').fill(code);
    await page.getByLabel('Name for this app').fill('Phone');
    const added = await press(page.getByRole('button', { name: 'Add', exact: true }), (u) => u.pathname === '/account');
    out.totp_added = { ...(await describe(added)), url: page.url(), ...(await account()) };

    const codesPage = await press(page.getByRole('button', { name: 'Make new recovery codes' }), (u) => u.pathname === '/account/recovery-codes');
    const codes = await page.locator('li > code').allTextContents();
    out.recovery_codes_page = { ...(await describe(codesPage)), codes };
    await shot('10-recovery-codes');
    const back = await press(page.getByRole('link', { name: 'Done' }), (u) => u.pathname === '/account');
    out.account_with_codes = { ...(await describe(back)), ...(await account()) };
    await shot('11-account-app-and-codes');

    // Keyboard only: the login page focuses the username field; Tab to the password, Enter.
    const login = await startAt('recovery', 'login');
    out.keyboard_login_page = { ...(await describe(login)), focused: await page.evaluate(() => document.activeElement?.id ?? null) };
    if (out.keyboard_login_page.focused !== 'username') throw new Error('the login page does not focus the username field');
    await page.keyboard.type(env('USERNAME'));
    await page.keyboard.press('Tab');
    await page.keyboard.type(env('PASSWORD'));
    const secondNav = navigation((u) => u.pathname === '/login');
    await page.keyboard.press('Enter');
    const second = await landed(await secondNav);
    out.second_factor_codes = { ...(await describe(second)),
      use_passkey_visible: await page.getByRole('button', { name: 'Use a passkey' }).isVisible(),
      code_fields: await page.getByLabel('Code from your authenticator app, or a recovery code').count(),
      focused: await page.evaluate(() => document.activeElement?.id ?? null), tabs: 0 };
    await shot('12-second-factor-passkey-or-code');
    for (let i = 0; i < 6 && (await page.evaluate(() => document.activeElement?.id)) !== 'code'; i++) {
      await page.keyboard.press('Tab');
      out.second_factor_codes.tabs += 1;
    }
    if ((await page.evaluate(() => document.activeElement?.id)) !== 'code') throw new Error('Tab never reaches the code field');
    await page.keyboard.type(codes[0]);
    const cbNav = navigation((u) => atClient(u) || u.pathname === '/consent');
    await page.keyboard.press('Enter');
    const cb = await landed(await cbNav);
    if (path(page.url()) === '/consent') throw new Error('consent asked again for the same client and scope');
    out.recovery_callback = { ...(await callback(cb)), code_used: codes[0] };
  }

  // 5. Conditional mediation: the login page's autofill request answered, nothing pressed.
  {
    conditionalUi = true;
    const before = { conditional: seen.conditional.length, webauthn: seen.webauthn.length };
    const cbNav = navigation((u) => atClient(u) || u.pathname === '/consent');
    // Only to the commit: the page's own script moves on from there.
    const login = await startAt('conditional', 'login', 'commit');
    const loginStatus = login.status();
    const cb = await landed(await cbNav);
    conditionalUi = false;
    out.conditional = { login_status: loginStatus, login_path: path(login.url()), ...(await callback(cb)),
      requests: seen.conditional.slice(before.conditional), assertions: seen.webauthn.slice(before.webauthn) };
  }

  // 6. The passkey removed on the account page; then refused on the login page.
  {
    const res = await page.goto(new URL('/account', ISSUER).toString());
    out.account_before_removal = { ...(await describe(res)), ...(await account()) };
    const removed = await press(page.getByRole('button', { name: 'Remove Laptop' }), (u) => u.pathname === '/account');
    out.passkey_removed = { ...(await describe(removed)), url: page.url(), ...(await account()) };
    await shot('13-account-passkey-removed');

    const login = await startAt('removed', 'login');
    out.removed_login_page = { ...(await describe(login)), ...(await loginOffer()) };
    const asserted = seen.webauthn.length;
    const callbacks = seen.client_callbacks;
    const refused = await press(page.getByRole('button', { name: 'Sign in with a passkey' }), (u) => onIssuer(u.href));
    out.removed_refused = { ...(await describe(refused)), url: page.url(), assertions: seen.webauthn.slice(asserted),
      client_callbacks: seen.client_callbacks - callbacks,
      alert: await page.getByRole('alert').filter({ visible: true }).allTextContents(), ...(await loginOffer()) };
    await shot('14-login-passkey-refused');
    // Still the login page: the password and a second recovery code sign in.
    const second = await signInWithPassword((u) => u.pathname === '/login');
    out.second_factor_after_removal = { ...(await describe(second)),
      use_passkey: await page.getByRole('button', { name: 'Use a passkey' }).count(),
      code_fields: await page.getByLabel('Code from your authenticator app, or a recovery code').count() };
    await shot('15-second-factor-code-only');
    await page.getByLabel('Code from your authenticator app, or a recovery code').fill(out.recovery_codes_page.codes[1]);
    const cb = await press(page.getByRole('button', { name: 'Verify' }), (u) => atClient(u) || u.pathname === '/consent');
    out.after_removal_callback = { ...(await callback(cb)), code_used: out.recovery_codes_page.codes[1],
      client_callbacks: seen.client_callbacks - callbacks };
    out.credentials_at_end = await credentials();
  }
  return out;
}

// The re-authentication asked before a change, on a server with account_reauth_max_age = 1.
async function reauthScenario() {
  const out = {};
  const res = await page.goto(new URL('/account', ISSUER).toString());
  out.login_page = { ...(await describe(res)), ...(await loginOffer()) };
  const landed = await signInWithPassword((u) => onIssuer(u.href) && u.pathname === '/account');
  const signedInAt = Date.now();
  out.account = { ...(await describe(landed)), ...(await account()) };
  await page.waitForTimeout(4500);
  const stale = await page.reload({ waitUntil: 'load' });
  out.account_stale = { ...(await describe(stale)), ...(await account()), waited_ms: Date.now() - signedInAt };
  await shot('reauth-01-account-signed-in-a-while-ago');
  const confirm = await press(page.getByRole('button', { name: 'Add an authenticator app' }), (u) => onIssuer(u.href));
  out.confirm_page = { ...(await describe(confirm)), text: await text(),
    sign_in_again: await page.getByRole('link', { name: 'Sign in again' }).getAttribute('href') };
  await shot('reauth-02-confirm-it-is-you');
  const login = await press(page.getByRole('link', { name: 'Sign in again' }), (u) => u.pathname === '/authorize');
  out.reauth_login_page = { ...(await describe(login)), url: page.url(), ...(await loginOffer()) };
  await shot('reauth-03-login-again');
  const back = await signInWithPassword((u) => onIssuer(u.href) && u.pathname === '/account');
  const againAt = Date.now();
  out.account_after = { ...(await describe(back)), ...(await account()) };
  const setup = await press(page.getByRole('button', { name: 'Add an authenticator app' }), (u) => onIssuer(u.href));
  out.change_after = { ...(await totpPage(setup)), ms_after_sign_in: Date.now() - againAt };
  await shot('reauth-04-add-authenticator-app');
  return out;
}

async function main() {
  await launch();
  const out = SCENARIO === 'reauth' ? await reauthScenario() : await mainScenario();
  out.console = seen.console;
  out.page_errors = seen.page_errors;
  out.csp_violations = seen.csp_violations;
  out.conditional_requests = seen.conditional;
  out.webauthn_events = seen.webauthn;
  out.failed_requests = seen.failed_requests;
  out.error_responses = seen.error_responses;
  out.screenshots = seen.screenshots;
  return out;
}

await runAndReport(main, () => ({ page, seen }), async () => {
  await context?.close().catch(() => {});
  rmSync(profile, { recursive: true, force: true });
});
