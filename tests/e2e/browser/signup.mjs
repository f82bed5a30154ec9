// Self-registration with e-mail verification in a real browser (Debian's Chromium, headless,
// driven by Playwright), with the mail read from a real SMTP server. test_signup.py starts
// Authrim with AUTHRIM_SIGNUP, AUTHRIM_SMTP_URL pointing at an aiosmtpd server it runs, a
// minimum password length and a breached-password file; it registers a client and each walk's
// people who already have an account, runs CHECKER (an HTTP server of its own: it hands this
// program the link of the next mail to an address once aiosmtpd has received it, looks users
// up through the admin API, redeems a code at the token endpoint, and serves the client's
// redirect URI) and checks what this prints, and every mail.
//
// A walk, for its new person dana-<walk>, in a new browser context, takes these pages in order
// and "visits" each (see visit()):
//   login (the client's /authorize: its link to /signup?challenge=<the sealed request>);
//   signup (the link: the form, the challenge in a hidden field); signup-mismatch
//   (two passwords that differ: 422, the form again as typed, its alert focused, Tab on to the
//   first field); [a password shorter than the minimum: the browser's own check stops the form
//   (no request); then sent without the browser's check, as a client without one would]
//   signup-short (422); signup-breached (a password from the breached list, in other letter
//   case: 422); signup-missing (the required name as spaces, which the browser takes: 422);
//   each form keeping the challenge; signup-sent (the form right: 200, "check your mail");
//   [CHECKER: the mail to her, its link; nobody by her name in the admin API];
//   login-unconfirmed (back to the authorization request, her new username and password: 401,
//   nobody yet); signup-verify (the link: GET, a page with a button; [CHECKER: still nobody]).
//   Then, as the walk's `confirm` says:
//   - 'here' (walk "en"): the button (POST) in the same context signs her in and goes on with
//     the request the sign-up came from: consent (303 to /consent; [CHECKER: dana, with
//     email_verified and locale]); Allow and the client's redirect URI with a code and the
//     request's state; link-spent (the link again: 400);
//   - 'elsewhere' (the other walks): the link opened in another context: signup-verify,
//     signup-done (the button: "Your account is ready", nobody signed in; [CHECKER: dana]),
//     link-spent (400); then, back in the first context, the authorization request again and
//     her password: consent, Allow and the redirect URI with a code.
//   CHECKER redeems the code (the request asks for scopes email and profile, and with the claims
//   parameter for email, email_verified, name and locale in the ID token). Every full walk then
//   signs up with names someone already has (nothing at POST /signup tells which are taken):
//   - at /signup itself (no challenge), with the address of taken-<walk>, who has an account
//     (typed in capitals):
//     signup-sent-taken (the same "check your mail"; [CHECKER: the notice to taken-<walk>'s
//     address, which the test reads; nobody made]);
//   - in a new browser context, from a new authorization request's login page and its link to
//     sign up, with taken-<walk>'s username and a fresh address: signup-sent-taken-name (the
//     same page again; [CHECKER: the link to the fresh address]); the link: signup-verify-taken
//     (409: the username was taken, another one and the sign-up's password asked for);
//     signup-verify-wrong (a free name with a wrong password: 409, nothing made);
//     signup-verify-still-taken (the taken name in capitals with the right password: 409);
//     then the free name with the right password makes the account under it and, in this
//     browser, signs it in and goes on with the request: consent-renamed (303 to /consent;
//     [CHECKER: renamed-<walk>]); Allow, the redirect URI with a code, which CHECKER redeems.
// Buttons and links are found by the forms they post to and where they lead, not by their
// words, so the same walk runs in every language.
//
// Walks "en" (browser locale en-US) and "ja" (ja-JP): each page's status, headers, <html lang>,
//   title, heading, text (with the language each piece is marked as), alerts, focus, labels,
//   what the fields hold, and a full-page screenshot (<walk>-<nn>-<page>.png).
// Walks "axe-en" and "axe-ja": the same, in contexts with bypassCSP
//   (axe-core is injected into the page; only these contexts bypass the pages' script-src
//   'self', the others report any violation): axe-core with AXE_TAGS on the sign-up pages
//   (AXE_PAGES) in the light theme, then the dark one, after a control page made to fail
//   proves the harness (as in pages.mjs).
// Walks "phone-en" and "phone-ja": a phone (390x844, isMobile, touch, 2x) opens /signup and
//   sends two passwords that differ: how wide each page is (no horizontal scroll), screenshots.
//
// Input, from the environment: ISSUER, CLIENT_ID, REDIRECT_URI (served by CHECKER), CHECKER,
// PEOPLE (JSON: per walk, the new person's username, email, name, the taken person's
// username and email, and fresh_email and renamed: the address of the sign-up with the taken
// username and the name chosen instead), PASSWORD (the good one), SHORT_PASSWORD,
// BREACHED_PASSWORD, CHROMIUM, ARTIFACTS_DIR (screenshots; on failure the page's HTML and a screenshot) and WAIT_MS (the
// longest any one wait may take). Output: one line of JSON, what the browser saw. Any failed
// step exits 1 with the browser's console, CSP reports and the current page on stderr.
import { chromium } from 'playwright-core';
import { env, giveUpAfter, runAndReport } from './report.mjs';
import * as shared from './shared.mjs';
import { askChecker, axeControlIn, chromiumOptions, focusedElement, hops, japaneseFont, openReporting, runAxe } from './shared.mjs';

const { script: AXE_SCRIPT, version: AXE_VERSION, tags: AXE_TAGS } = shared.AXE;

const ISSUER = env('ISSUER');
const CHECKER = env('CHECKER');
const REDIRECT_URI = env('REDIRECT_URI');
const PEOPLE = JSON.parse(env('PEOPLE'));
const PASSWORD = env('PASSWORD');
const SHORT_PASSWORD = env('SHORT_PASSWORD');
const BREACHED_PASSWORD = env('BREACHED_PASSWORD');
const ARTIFACTS = env('ARTIFACTS_DIR');
const WAIT_MS = Number(process.env.WAIT_MS || 10000);

giveUpAfter(110);

// `confirm`: where the mailed link is confirmed: 'here' (the context that signed up, which then
// goes on with the application's request) or 'elsewhere' (a context of its own: the done page).
const WALKS = [
  { name: 'en', locale: 'en-US', shots: true, confirm: 'here' },
  { name: 'ja', locale: 'ja-JP', shots: true, confirm: 'elsewhere' },
  { name: 'axe-en', locale: 'en-US', axe: true, confirm: 'elsewhere' },
  { name: 'axe-ja', locale: 'ja-JP', axe: true, confirm: 'elsewhere' },
  { name: 'phone-en', locale: 'en-US', shots: true, phone: true },
  { name: 'phone-ja', locale: 'ja-JP', shots: true, phone: true },
];
// The pages axe-core checks: the sign-up's own.
const AXE_PAGES = new Set(['signup', 'signup-mismatch', 'signup-missing', 'signup-sent', 'signup-verify', 'signup-done',
  'link-spent', 'signup-verify-taken', 'signup-verify-wrong']);
const SIGNUP_FORM = 'form[action="/signup"]';
const SUBMIT = `${SIGNUP_FORM} button[type=submit]`;
const SIGNUP_LINK = 'main a[href^="/signup"]';
const VERIFY_FORM = 'form[action="/signup/verify"]';
const VERIFY_BUTTON = `${VERIFY_FORM} button[type=submit]`;

// What the browser reports along the way, for the checks and for a failure's diagnosis;
// every entry names the walk.
const seen = shared.newSeen();
let browser;
let walk;
let page;
const contexts = [];

const at = (p) => new URL(p, ISSUER).toString();
const press = (selector, pred) => shared.press(page, selector, pred);
const go = (url) => shared.go(page, url);
const check = (label, body) => askChecker(CHECKER, { walk: walk.name, label, ...body }, WAIT_MS);
const toSignup = (u) => u.pathname === '/signup';

// A new browser context and page for the walk, reporting under its name; it counts the POST
// requests it sends and notes the Accept-Language it sends.
async function open() {
  const options = { locale: walk.locale, bypassCSP: Boolean(walk.axe), ...(walk.phone ? shared.PHONE : shared.DESKTOP) };
  const { context, page: p } = await openReporting(browser, seen, { walk: walk.name }, options, { waitMs: WAIT_MS, onRequest: (r) => {
    if (r.method() === 'POST') walk.posts += 1;
    if (r.isNavigationRequest() && !walk.accept_language) walk.accept_language = r.headers()['accept-language'] ?? null;
  } });
  contexts.push(context);
  page = p;
}

// A page reached by `res`: what it says and in which language, its fields (with what they
// hold), alerts and focus; then its screenshot, axe-core's findings or its width, as the walk
// asks (shared.visitPage).
const visit = (name, res) => shared.visitPage(page, seen, walk, name, res,
  { waitMs: WAIT_MS, artifacts: ARTIFACTS, axePages: AXE_PAGES, values: true });

// The sign-up form (the current page) filled in with `fields` (id: value; those not named
// keep what they hold) and sent; `name`: the page it leads to.
async function signUp(fields, name) {
  for (const [id, value] of Object.entries(fields)) await page.locator(`${SIGNUP_FORM} #${id}`).fill(value);
  return visit(name, await press(SUBMIT, toSignup));
}

// The sign-up form's hidden `challenge` fields (the request it resumes): their values.
const challenges = () => page.locator(`${SIGNUP_FORM} input[name=challenge]`).evaluateAll((l) => l.map((e) => e.value));

async function signupWalk() {
  const me = PEOPLE[walk.name];
  const facts = { username: me.username };
  seen.facts[walk.name] = facts;
  const request = newRequest();
  await open();

  // The application sends dana to sign in; she has no account and follows the link to make one.
  await visit('login', await go(request.url));
  seen.japanese_font ??= await japaneseFont(page);
  facts.signup_link = await page.locator(SIGNUP_LINK).getAttribute('href');
  await visit('signup', await press(SIGNUP_LINK, toSignup));
  facts.challenges = { signup: await challenges() };

  // Two passwords that differ: the form again as typed, without the passwords, its alert
  // focused; Tab goes on to the first field.
  await signUp({ username: me.username, email: me.email, name: me.name, password: PASSWORD, confirm_password: `${PASSWORD}!` },
    'signup-mismatch');
  facts.challenges['signup-mismatch'] = await challenges();
  await page.keyboard.press('Tab');
  facts.tab_after_alert = await focusedElement(page);

  // Too short: the browser's own check (minlength) holds the form back: nothing is sent.
  await page.locator('#password').fill(SHORT_PASSWORD);
  await page.locator('#confirm_password').fill(SHORT_PASSWORD);
  const posts = walk.posts;
  await page.locator(SUBMIT).click();
  await page.waitForTimeout(300);
  facts.short_in_browser = { posts: walk.posts - posts, path: new URL(page.url()).pathname,
    ...(await page.locator('#password').evaluate((e) => ({ valid: e.checkValidity(), too_short: e.validity.tooShort, minlength: e.minLength }))) };
  // The server's own check, for a client that has none: the form sent without the browser's.
  await page.locator(SIGNUP_FORM).evaluate((f) => { f.noValidate = true; });
  await visit('signup-short', await press(SUBMIT, toSignup));
  facts.challenges['signup-short'] = await challenges();

  // A password known from a breach (the list's, in other letters' case), then the required
  // name as spaces only (the browser's `required` takes them; the server trims them).
  await signUp({ password: BREACHED_PASSWORD, confirm_password: BREACHED_PASSWORD }, 'signup-breached');
  facts.challenges['signup-breached'] = await challenges();
  await signUp({ name: '   ', password: PASSWORD, confirm_password: PASSWORD }, 'signup-missing');
  facts.challenges['signup-missing'] = await challenges();

  // Right at last: "check your mail". Nobody is created until the link is confirmed.
  await signUp({ name: me.name, password: PASSWORD, confirm_password: PASSWORD }, 'signup-sent');
  const mail = await check('mail', { op: 'mail', to: me.email });
  facts.link = mail.link;
  facts.users_after_sent = await check('users-after-sent', { op: 'users', username: me.username });

  // The new account does not sign in yet.
  await go(request.url);
  await visit('login-unconfirmed', await shared.signIn(page, me.username, PASSWORD, (u) => u.pathname === '/login'));
  facts.unconfirmed_username_kept = await page.locator('#username').inputValue();

  // The link (GET, as a mail scanner would open it too) creates nobody; its button does. In
  // the context that signed up, the button signs her in and goes on with the application's
  // request (consent); in another, it only makes the account (the done page), and she then
  // signs in with her password back in the first.
  const home = page;
  if (walk.confirm === 'elsewhere') await open();
  await visit('signup-verify', await go(mail.link));
  facts.users_after_get = await check('users-after-get', { op: 'users', username: me.username });
  let consent;
  if (walk.confirm === 'here') {
    consent = await press(VERIFY_BUTTON, (u) => u.pathname === '/consent');
    await visit('consent', consent);
    facts.users_after_confirm = await check('users-after-confirm', { op: 'users', username: me.username });
  } else {
    await visit('signup-done', await press(VERIFY_BUTTON, (u) => u.pathname === '/signup/verify'));
    facts.users_after_confirm = await check('users-after-confirm', { op: 'users', username: me.username });
    // The link works once.
    await visit('link-spent', await go(mail.link));
    // Nobody is signed in here: the application's request asks for a sign-in.
    const there = await go(request.url);
    facts.elsewhere_after_done = { path: new URL(there.url()).pathname, status: there.status(),
      login_forms: await page.locator('form[action="/login"]').count() };
    page = home;
    await go(request.url);
    consent = await shared.signIn(page, me.username, PASSWORD, (u) => u.pathname === '/consent');
    await visit('consent', consent);
  }
  facts.to_consent = await hops(consent);

  // She allows the application's request, and the client gets a code.
  Object.assign(facts, await allow(request, 'redeem'));
  // The link works once.
  if (walk.confirm === 'here') await visit('link-spent', await go(mail.link));

  // Someone's address (typed in capitals): the same "check your mail"; no link, but a notice
  // to its owner, at the address as the account has it.
  await go(at('/signup'));
  await signUp({ username: `other-${walk.name}`, email: me.taken_email.toUpperCase(), name: me.name, password: PASSWORD,
    confirm_password: PASSWORD }, 'signup-sent-taken');
  const notice = await check('notice', { op: 'mail', to: me.taken_email });
  facts.notice_link = notice.link;
  facts.users_taken = await check('users-taken', { op: 'users', username: `other-${walk.name}` });

  // Someone's username, from another application request in a browser of its own: the same
  // page again, and a link to the fresh address.
  const another = newRequest();
  await open();
  await go(another.url);
  await press(SIGNUP_LINK, toSignup);
  await signUp({ username: me.taken_username, email: me.fresh_email, name: me.name, password: PASSWORD,
    confirm_password: PASSWORD }, 'signup-sent-taken-name');
  const fresh = await check('fresh-mail', { op: 'mail', to: me.fresh_email });
  facts.fresh_link = fresh.link;
  // The link's page, to whoever proved the address: the name is taken; another, and the
  // sign-up's password, are asked for.
  await visit('signup-verify-taken', await go(fresh.link));
  const toVerify = (u) => u.pathname === '/signup/verify';
  const choose = async (username, password, pred) => {
    await page.locator(`${VERIFY_FORM} #username`).fill(username);
    await page.locator(`${VERIFY_FORM} #password`).fill(password);
    return press(VERIFY_BUTTON, pred);
  };
  // A free name but not the sign-up's password: refused, nothing made.
  await visit('signup-verify-wrong', await choose(me.renamed, `${PASSWORD}!`, toVerify));
  facts.users_renamed_wrong = await check('users-renamed-wrong', { op: 'users', username: me.renamed });
  // The right password with the taken name in other letters' case: still taken.
  await visit('signup-verify-still-taken', await choose(me.taken_username.toUpperCase(), PASSWORD, toVerify));
  // A free name and the right password: the account, signed in here, on with the request.
  const renamed = await choose(me.renamed, PASSWORD, (u) => u.pathname === '/consent');
  await visit('consent-renamed', renamed);
  facts.renamed_to_consent = await hops(renamed);
  facts.users_renamed = await check('users-renamed', { op: 'users', username: me.renamed });
  facts.users_taken_name = await check('users-taken-name', { op: 'users', username: me.taken_username });
  facts.renamed = await allow(another, 'redeem-renamed');
  // The link works once.
  facts.fresh_link_again = (await go(fresh.link)).status();
}

// The client's authorization request (code flow, PKCE) for her e-mail address, name and
// locale (scopes email and profile) and, with the claims parameter (OpenID Connect Core 5.5),
// for them in the ID token too.
function newRequest() {
  const wanted = { email: null, email_verified: null, name: null, locale: null };
  return shared.authorizationRequest(ISSUER, { clientId: env('CLIENT_ID'), redirectUri: REDIRECT_URI,
    scope: 'openid email profile', extra: { claims: JSON.stringify({ id_token: wanted }) } });
}

// Allow on the consent page (the current page) of `request`: the client's redirect URI with
// a code, which CHECKER redeems (`label`).
async function allow(request, label) {
  const callback = await press('form[action="/consent"] button[value=allow]', (u) => u.href.startsWith(REDIRECT_URI));
  const back = Object.fromEntries(new URL(callback.url()).searchParams);
  return {
    callback: { status: callback.status(), path: new URL(callback.url()).pathname, state_ok: back.state === request.state,
      has_code: Boolean(back.code), error: back.error ?? null, iss: back.iss ?? null },
    redeemed: await check(label, { op: 'redeem', code: back.code ?? '', verifier: request.verifier, nonce: request.nonce }),
  };
}

// On a phone: the form, and the form again with an error.
async function phoneWalk() {
  seen.facts[walk.name] = {};
  await open();
  await visit('signup', await go(at('/signup')));
  await signUp({ username: `phone-${walk.name}`, email: `phone-${walk.name}@example.com`, name: 'Phone Person',
    password: PASSWORD, confirm_password: `${PASSWORD}!` }, 'signup-mismatch');
}

async function main() {
  browser = await chromium.launch(chromiumOptions());
  seen.axe_control = await axeControlIn(browser, (p, scheme) => runAxe(p, scheme, { script: AXE_SCRIPT, tags: AXE_TAGS }));
  for (const w of WALKS) {
    walk = { ...w, posts: 0 };
    const started = Date.now();
    await (walk.phone ? phoneWalk() : signupWalk());
    while (contexts.length) await contexts.pop().close().catch(() => {});
    const { posts, ...rest } = walk;
    seen.walks.push({ ...rest, ms: Date.now() - started });
  }
  return { axe_version: AXE_VERSION, axe_tags: AXE_TAGS, ...seen };
}

await runAndReport(main, () => ({ page, seen }), () => shared.closeAll(contexts, browser));
