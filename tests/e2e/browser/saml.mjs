// SAML 2.0 Web Browser SSO in a real browser: Debian's Chromium, headless, driven by Playwright
// (playwright-core only). pysaml2 is the service provider (test_saml_browser.py): it wrote the
// AuthnRequests (HTTP-Redirect binding) whose URLs this program opens, and its ACS is an HTTP
// server of the test that records every form post it receives. Authrim answers a sign-in with
// a page whose form posts the signed SAMLResponse (and RelayState) to the ACS, submitted by an
// inline script its CSP allows by nonce, with a Continue button inside <noscript>.
//
// One browser, two contexts:
//   1. Scripts on: the AuthnRequest URL, Authrim's login page, filled in by keyboard (the
//      username field focused, typed, Tab, the password typed, Enter); the answer page's
//      script submits the form (this program never touches the page again) and the browser
//      lands on the ACS by a POST. Every form.submit() a page calls is recorded (an init
//      script wraps it), and every CSP violation a document reports. Then Back from the ACS:
//      what the browser shows and what it sends (reported, not judged, here: the script
//      submits while the page loads, so Chromium replaces the page's history entry and Back
//      goes to the AuthnRequest URL, which Authrim, the browser now signed in, answers with
//      the page again, whose script posts again).
//   2. Scripts off (javaScriptEnabled: false), with the first context's cookies (signed in):
//      the second AuthnRequest URL is answered with the page at once, which stays put until
//      its Continue button is reached by Tab and pressed with Enter. Back from the ACS there.
//
// Input, from the environment: ISSUER, USERNAME, PASSWORD, ACS (the ACS URL), URLS (JSON:
// {scripted, noscript}, AuthnRequest URLs), CHROMIUM, ARTIFACTS_DIR (screenshot and HTML on a
// failure) and WAIT_MS. Output: one line of JSON, what the browser saw. Any failed step exits 1
// with the console, CSP reports and the page on stderr.
import { chromium } from 'playwright-core';
import { env, giveUpAfter, runAndReport } from './report.mjs';
import { chromiumOptions, recordCspViolations, recordSubmits } from './shared.mjs';

const ISSUER = env('ISSUER');
const ACS = env('ACS');
const URLS = JSON.parse(env('URLS'));
const WAIT_MS = Number(process.env.WAIT_MS || 10000);

giveUpAfter(75);

const seen = { console: [], page_errors: [], csp_violations: [], submits: [] };
let browser;
let page;

const isAcs = (url) => url.split('?')[0] === ACS;
const isIssuer = (url) => new URL(url).origin === new URL(ISSUER).origin;
const heading = async () => ((await page.locator('h1').first().textContent({ timeout: WAIT_MS })) ?? '').trim();

// The answer page as the server sent it: the navigation response from Authrim whose CSP
// allows a script (the login page's does not name one by nonce).
const answerPage = () => page.waitForResponse((r) => r.request().isNavigationRequest() && isIssuer(r.url())
  && /script-src 'nonce-/.test(r.headers()['content-security-policy'] ?? ''));

async function answerRecord(res) {
  const headers = await res.allHeaders();
  return { url: res.url(), path: new URL(res.url()).pathname, status: res.status(), method: res.request().method(),
    content_type: headers['content-type'] ?? null, csp: headers['content-security-policy'] ?? null,
    cache_control: headers['cache-control'] ?? null,
    redirected_from: res.request().redirectedFrom() ? { url: res.request().redirectedFrom().url(),
      method: res.request().redirectedFrom().method() } : null };
}

// What the browser sent to the ACS.
function acsRequest(r) {
  const h = r.headers();
  return { url: r.url(), method: r.method(), content_type: h['content-type'] ?? null, body: r.postData(),
    navigation: r.isNavigationRequest(), main_frame: r.frame() === page.mainFrame() };
}

// The focused element, read at once (shared.focusedElement waits for a rendering update by a
// timer, which never fires in a page whose scripts are off).
const focusedElement = (p) => p.evaluate(() => {
  const e = document.activeElement;
  if (!e || e === document.body || e === document.documentElement) return null;
  return { tag: e.tagName.toLowerCase(), id: e.id || null, name: e.getAttribute('name'), type: e.getAttribute('type'),
    text: (e.innerText || '').replace(/\s+/g, ' ').trim().slice(0, 120) };
});

// Tab until `name`'s button has the focus (at most 10 presses); how many it took.
async function tabTo(name) {
  for (let i = 0; i <= 10; i++) {
    const f = await focusedElement(page);
    if (f?.tag === 'button' && f.text === name) return i;
    await page.keyboard.press('Tab');
  }
  throw new Error(`Tab never reaches the ${name} button`);
}

function track(context, into) {
  context.on('request', (r) => into.push({ url: r.url(), method: r.method(), navigation: r.isNavigationRequest() }));
}

function watch(p) {
  p.setDefaultTimeout(WAIT_MS);
  p.setDefaultNavigationTimeout(WAIT_MS);
  p.on('console', (m) => seen.console.push({ type: m.type(), text: m.text(), url: m.location().url }));
  p.on('pageerror', (e) => seen.page_errors.push(String(e)));
}

async function main() {
  browser = await chromium.launch(chromiumOptions());
  const out = {};

  // 1. Scripts on.
  const first = await browser.newContext();
  {
    await recordCspViolations(first, (v, frame) => seen.csp_violations.push({ ...v, frame: frame.url() }));
    await recordSubmits(first, (s, frame) => seen.submits.push({ ...s, frame: frame.url() }), { withDocument: true });
    const requests = [];
    track(first, requests);
    page = await first.newPage();
    watch(page);

    const login = await page.goto(URLS.scripted, { waitUntil: 'load' });
    const loginUrl = page.url();
    // (The browser focuses an autofocus field at a rendering update, which may come after load.)
    await page.waitForFunction(() => document.activeElement?.id === 'username', null, { timeout: 2000 }).catch(() => {});
    out.login_page = { status: login.status(), url: loginUrl, path: new URL(loginUrl).pathname, heading: await heading(),
      focused_on_load: await focusedElement(page),
      redirected_from: login.request().redirectedFrom()?.url() ?? null };
    // The keyboard only: the username field, typed, Tab, the password, Enter.
    await page.locator('#username').focus();
    await page.keyboard.type(env('USERNAME'));
    await page.keyboard.press('Tab');
    const onPassword = await focusedElement(page);
    await page.keyboard.type(env('PASSWORD'));
    const answer = answerPage();
    const posted = page.waitForRequest((r) => isAcs(r.url()) && r.method() === 'POST');
    await page.keyboard.press('Enter');
    const res = await answer;
    const answeredAt = Date.now();
    const acs = await posted;
    const postedAt = Date.now();
    await page.waitForURL((u) => isAcs(u.toString()), { waitUntil: 'load' });
    const historyLength = await page.evaluate(() => history.length);
    out.scripted = {
      history_length: historyLength,
      tab_focused: onPassword,
      answer: await answerRecord(res),
      acs: acsRequest(acs),
      landed: { url: page.url(), heading: await heading() },
      ms_to_post: postedAt - answeredAt,
      submits: seen.submits.filter((s) => s.url === res.url()),
      requests: requests.slice(),
    };

    // Back from the ACS: what comes back, and whatever the browser sends on its own.
    const before = requests.length;
    const backResponses = [];
    const onResponse = (r) => { if (r.request().isNavigationRequest()) backResponses.push({ url: r.url(), status: r.status(), method: r.request().method() }); };
    page.on('response', onResponse);
    let backError = null;
    let back = null;
    try {
      back = await page.goBack({ waitUntil: 'load' });
    } catch (e) {
      backError = String(e.message || e).split('\n')[0];
    }
    // Whatever page came back: if a script on it posts to the ACS, that post's page loaded;
    // if not, two seconds for it to have done so.
    await page.waitForURL((u) => isAcs(u.toString()), { waitUntil: 'load', timeout: 2000 }).catch(() => {});
    page.off('response', onResponse);
    let shown = null;
    try {
      shown = { heading: await page.locator('h1').first().textContent({ timeout: 1000 }),
        text: (await page.locator('body').innerText({ timeout: 1000 })).replace(/\s+/g, ' ').trim().slice(0, 300) };
    } catch (e) {
      shown = { error: String(e.message || e).split('\n')[0] };
    }
    const after = requests.slice(before);
    out.back = {
      response: back ? { url: back.url(), status: back.status(), method: back.request().method() } : null,
      error: backError,
      url: page.url(),
      shown,
      navigation_responses: backResponses,
      requests: after,
      posts_to_acs: after.filter((r) => isAcs(r.url) && r.method === 'POST').length,
      submits_after: seen.submits.length - out.scripted.submits.length,
    };
  }

  // 2. Scripts off, signed in (the first context's cookies): the page waits for Continue.
  {
    const context = await browser.newContext({ javaScriptEnabled: false, storageState: await first.storageState() });
    const requests = [];
    track(context, requests);
    page = await context.newPage();
    watch(page);
    const answer = answerPage();
    await page.goto(URLS.noscript, { waitUntil: 'load' });
    const res = await answer;
    await page.waitForTimeout(1000);
    const stayed = { url: page.url(), to_acs: requests.filter((r) => isAcs(r.url)).length, heading: await heading() };
    const button = page.getByRole('button', { name: 'Continue' });
    const shown = { buttons: await button.count(), visible: await button.isVisible() };
    const tabs = await tabTo('Continue');
    const posted = page.waitForRequest((r) => isAcs(r.url()) && r.method() === 'POST');
    await page.keyboard.press('Enter');
    const acs = await posted;
    await page.waitForURL((u) => isAcs(u.toString()), { waitUntil: 'load' });
    out.noscript = { answer: await answerRecord(res), stayed, shown, tabs_to_continue: tabs, acs: acsRequest(acs),
      landed: { url: page.url(), heading: await heading() }, history_length: await page.evaluate(() => history.length),
      requests: requests.slice() };

    // Back from the ACS, scripts still off.
    const before = requests.length;
    const back = await page.goBack({ waitUntil: 'load' });
    await page.waitForTimeout(1000);
    const after = requests.slice(before);
    out.noscript_back = { response: back ? { url: back.url(), status: back.status(), method: back.request().method() } : null,
      url: page.url(), heading: await heading(), requests: after,
      posts_to_acs: after.filter((r) => isAcs(r.url) && r.method === 'POST').length };
    await context.close();
  }
  await first.close();

  out.console = seen.console;
  out.page_errors = seen.page_errors;
  out.csp_violations = seen.csp_violations;
  return out;
}

await runAndReport(main, () => ({ page, seen }), async () => {
  await browser?.close().catch(() => {});
});
