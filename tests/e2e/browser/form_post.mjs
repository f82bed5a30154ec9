// response_mode=form_post (OAuth 2.0 Form Post Response Mode) in a real browser: Debian's
// Chromium, headless, driven by Playwright (playwright-core only). Authrim answers with a page
// whose form posts the response to the client's redirect URI, submitted by an inline script
// its CSP allows by nonce, with a Continue button inside <noscript> for browsers without
// scripts. test_browser.py registers the client, runs the client's redirect URI (an HTTP
// server that records the form posts it receives), builds the authorization URLs and checks
// what this prints against what the server received.
//
// Two browser contexts:
//   1. Scripts on: /authorize, login, consent, Allow; the consent POST is answered with the
//      form_post page, whose script submits it (this program never touches the page again);
//      the browser lands on the client's page by a POST. Then a second authorization in the
//      same browser (consent remembered): GET /authorize answers the form_post page at once.
//      Every form.submit() a page calls is recorded (an init script wraps it), and every CSP
//      violation any document reports.
//   2. Scripts off (javaScriptEnabled: false): prompt=none without a session, answered with a
//      form_post page carrying error=login_required, which stays put (no script may run)
//      until Continue is pressed; then a sign-in (consent given in 1: the login POST is
//      answered with the page), whose code also goes by Continue.
//
// Input, from the environment: ISSUER, USERNAME, PASSWORD, CALLBACK (the redirect URI), URLS
// (JSON: {scripted, again, silent_noscript, noscript}, authorization URLs), CHROMIUM,
// ARTIFACTS_DIR (screenshot and HTML on failure) and WAIT_MS. Output: one line of JSON, what
// the browser saw. Any failed step exits 1 with the console, CSP reports and the page on stderr.
import { chromium } from 'playwright-core';
import { env, giveUpAfter, runAndReport } from './report.mjs';
import { recordCspViolations, recordSubmits } from './shared.mjs';

const ISSUER = env('ISSUER');
const CALLBACK = env('CALLBACK');
const URLS = JSON.parse(env('URLS'));
const WAIT_MS = Number(process.env.WAIT_MS || 10000);

giveUpAfter(75);

const seen = { console: [], page_errors: [], csp_violations: [], submits: [], requests: [] };
let browser;
let page;

const isCallback = (r) => r.url().split('?')[0] === CALLBACK;
const isIssuer = (url) => new URL(url).origin === new URL(ISSUER).origin;

// What the browser sent to the client's redirect URI.
function callbackRequest(r) {
  const h = r.headers();
  return { url: r.url(), method: r.method(), content_type: h['content-type'] ?? null,
    body: r.postData(), navigation: r.isNavigationRequest(), main_frame: r.frame() === page.mainFrame() };
}

// The form_post page as the server answered it: status, method, headers.
async function formPostResponse(res) {
  const headers = await res.allHeaders();
  return { url: res.url(), status: res.status(), method: res.request().method(),
    content_type: headers['content-type'] ?? null, csp: headers['content-security-policy'] ?? null,
    cache_control: headers['cache-control'] ?? null };
}

// The login form filled in and sent; returns the response the button's navigation gets.
async function signIn(next) {
  await page.fill('#username', env('USERNAME'));
  await page.fill('#password', env('PASSWORD'));
  await page.getByRole('button', { name: 'Sign in' }).click();
  return next;
}
const consentPage = () => page.waitForResponse((r) => r.request().isNavigationRequest() && new URL(r.url()).pathname === '/consent');

// The response to the navigation that shows the form_post page (a POST /consent or GET /authorize).
const formPostPage = () => page.waitForResponse((r) => r.request().isNavigationRequest() && isIssuer(r.url())
  && (r.headers()['content-security-policy'] ?? '').includes('script-src'));

async function main() {
  browser = await chromium.launch({
    executablePath: env('CHROMIUM'),
    headless: true,
    timeout: 30_000,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const out = {};

  // 1. Scripts on.
  {
    const context = await browser.newContext();
    await recordCspViolations(context, (v, frame) => seen.csp_violations.push({ ...v, frame: frame.url() }));
    // A page's own form.submit(), with the document as it stands then.
    await recordSubmits(context, (s, frame) => seen.submits.push({ ...s, frame: frame.url() }), { withDocument: true });
    page = await context.newPage();
    page.setDefaultTimeout(WAIT_MS);
    page.setDefaultNavigationTimeout(WAIT_MS);
    page.on('console', (m) => seen.console.push({ type: m.type(), text: m.text(), url: m.location().url }));
    page.on('pageerror', (e) => seen.page_errors.push(String(e)));
    context.on('request', (r) => seen.requests.push({ url: r.url(), method: r.method() }));

    const login = await page.goto(URLS.scripted);
    out.login_page = { status: login.status(), url: page.url() };
    await signIn(consentPage());
    await page.waitForLoadState('load');
    const formPost = formPostPage();
    const posted = page.waitForRequest((r) => isCallback(r) && r.method() === 'POST');
    await page.getByRole('button', { name: 'Allow' }).click();
    const res = await formPost;
    const answeredAt = Date.now();
    const cb = await posted;
    const postedAt = Date.now();
    await page.waitForURL((u) => u.toString().split('?')[0] === CALLBACK, { waitUntil: 'load' });
    out.scripted = {
      form_post: await formPostResponse(res),
      callback: callbackRequest(cb),
      landed: { url: page.url(), heading: await page.locator('h1').textContent() },
      ms_to_post: postedAt - answeredAt,
      submits: seen.submits.filter((s) => s.url === res.url()),
    };

    // Again, in the same browser: signed in and consented, so /authorize answers the page.
    const again = formPostPage();
    const postedAgain = page.waitForRequest((r) => isCallback(r) && r.method() === 'POST');
    await page.goto(URLS.again, { waitUntil: 'commit' });
    const res2 = await again;
    const cb2 = await postedAgain;
    await page.waitForURL((u) => u.toString().split('?')[0] === CALLBACK, { waitUntil: 'load' });
    out.again = {
      form_post: await formPostResponse(res2),
      callback: callbackRequest(cb2),
      submits: seen.submits.filter((s) => s.url === res2.url()),
    };
    out.requests = seen.requests;
    await context.close();
  }

  // 2. Scripts off: the page waits for Continue.
  {
    const context = await browser.newContext({ javaScriptEnabled: false });
    page = await context.newPage();
    page.setDefaultTimeout(WAIT_MS);
    page.setDefaultNavigationTimeout(WAIT_MS);
    page.on('console', (m) => seen.console.push({ type: m.type(), text: m.text(), url: m.location().url }));
    const requests = [];
    context.on('request', (r) => requests.push({ url: r.url(), method: r.method() }));

    // What the page shows, and that it stays: nothing goes to the client unasked.
    async function pressContinue(res) {
      const before = requests.length;
      await page.waitForTimeout(1000);
      const stayed = { url: page.url(), to_client: requests.slice(before).filter((r) => r.url.split('?')[0] === CALLBACK).length };
      const button = page.getByRole('button', { name: 'Continue' });
      const shown = { buttons: await button.count(), visible: await button.isVisible(), heading: await page.locator('h1').textContent() };
      const posted = page.waitForRequest((r) => isCallback(r) && r.method() === 'POST');
      await button.click();
      const cb = await posted;
      await page.waitForURL((u) => u.toString().split('?')[0] === CALLBACK, { waitUntil: 'load' });
      return { form_post: await formPostResponse(res), stayed, shown, callback: callbackRequest(cb), landed: page.url() };
    }

    const silent = formPostPage();
    await page.goto(URLS.silent_noscript);
    out.silent_noscript = await pressContinue(await silent);

    // The client was consented to in the first context: the login POST is answered with the page.
    await page.goto(URLS.noscript);
    out.noscript = await pressContinue(await signIn(formPostPage()));
    out.noscript_requests = requests;
    await context.close();
  }

  out.console = seen.console;
  out.page_errors = seen.page_errors;
  out.csp_violations = seen.csp_violations;
  return out;
}

await runAndReport(main, () => ({ page, seen }), async () => {
  await browser?.close().catch(() => {});
});
