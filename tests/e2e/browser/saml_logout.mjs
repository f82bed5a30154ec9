// SAML 2.0 Single Logout by the HTTP-POST binding in a real browser: Debian's Chromium,
// headless, driven by Playwright (playwright-core only). pysaml2 is the service provider
// (test_saml_browser.py): its SingleLogoutService is HTTP-POST only, so Authrim cannot send
// its LogoutRequest in a URL; the logout page's hidden iframe loads Authrim's own page
// (/saml/slo/post?m=…, which only Authrim's pages may frame), whose inline script (allowed by
// its CSP nonce) posts the signed LogoutRequest to the SP's SLO URL, inside the iframe. The
// SP's ACS and SLO URL are paths of an HTTP server of the test that records every request.
//
// One browser context:
//   1. Sign-in: the LOGIN AuthnRequest URL (HTTP-Redirect), Authrim's login page filled in by
//      keyboard (username, Tab, password, Enter), the answer page's script posting the
//      Response to the ACS.
//   2. Logout with a way back: LOGOUT, /logout with an OpenID client's client_id, its
//      post_logout_redirect_uri and state (no id_token_hint, so Authrim asks first); "Sign
//      out" reached by Tab and pressed with Enter; the logout page (the response to POST
//      /logout/confirm) frames our page, which posts to the SLO URL in the iframe, and the
//      logout page's own script goes on to the post-logout URI once the iframe has loaded (or
//      after 5 s).
//   3. The AFTER AuthnRequest URL: the session is over, so the login page again; signed in
//      there as in 1 (a new session).
//   4. Logout without a way back: /logout alone, confirmed the same way; the signed-out page
//      (no script) stays while its iframe posts; the SP (pysaml2) answers this one with its
//      own page posting its LogoutResponse back to Authrim's /saml/slo in the same frame,
//      whose answer (the signed-out page, framable by Authrim's pages) loads there.
// Every request, response and failure of any frame is recorded (whether the page's own frame
// or a frame of it), every form.submit() a document calls (an init script wraps it), every
// CSP violation any document reports, the console, and what each document held once parsed.
//
// Input, from the environment: ISSUER, USERNAME, PASSWORD, ACS, SLO (the SP's URLs), LOGIN
// and AFTER (AuthnRequest URLs), LOGOUT (the /logout URL), NEXT (the post-logout redirect URI,
// without state), CHROMIUM, ARTIFACTS_DIR (screenshot and HTML on a failure) and WAIT_MS.
// Output: one line of JSON, what the browser saw. Any failed step exits 1 with the console,
// CSP reports and the page on stderr.
import { chromium } from 'playwright-core';
import { env, giveUpAfter, runAndReport } from './report.mjs';
import { chromiumOptions, recordCspViolations, recordSubmits } from './shared.mjs';

const ISSUER = env('ISSUER');
const ACS = env('ACS');
const SLO = env('SLO');
const NEXT = env('NEXT');
const WAIT_MS = Number(process.env.WAIT_MS || 10000);

giveUpAfter(75);

const seen = { console: [], page_errors: [], csp_violations: [], submits: [], documents: [], requests: [], responses: [],
  failed_requests: [] };
let browser;
let page;

const at = (url, base) => url.split('?')[0] === base;
const path = (url) => new URL(url).pathname;
const heading = async () => ((await page.locator('h1').first().textContent({ timeout: WAIT_MS })) ?? '').trim();
// Which frame a request or document is in: the page's own, a frame of it, or gone (a frame
// already detached when asked).
const where = (frame) => {
  if (!frame) return null;
  if (frame === page.mainFrame()) return 'main';
  return frame.parentFrame() === page.mainFrame() ? 'child' : 'other';
};
const frameOf = (r) => { try { return r.frame(); } catch { return null; } };

// The AuthnRequest URL `url`: Authrim's login page, filled in by keyboard (username, Tab,
// password, Enter); the answer page's script posts the Response to the ACS.
async function signIn(url) {
  const login = await page.goto(url, { waitUntil: 'load' });
  const loginPage = { status: login.status(), path: path(page.url()), heading: await heading(),
    username_field: await page.locator('#username').count() };
  await page.locator('#username').focus();
  await page.keyboard.type(env('USERNAME'));
  await page.keyboard.press('Tab');
  await page.keyboard.type(env('PASSWORD'));
  const posted = page.waitForRequest((r) => at(r.url(), ACS) && r.method() === 'POST');
  await page.keyboard.press('Enter');
  const acs = await posted;
  await page.waitForURL((u) => at(u.toString(), ACS), { waitUntil: 'load' });
  return { login_page: loginPage, acs_body: acs.postData(), landed: { url: page.url(), heading: await heading() } };
}

// Authrim's logout at `url`: asked first, "Sign out" reached by Tab and pressed with Enter;
// then the logout page, the response to POST /logout/confirm, whose iframe posts to the SLO
// URL. With `next`, the page goes on there by itself; without, it stays, and the walk waits
// for the iframe's page from the SP to have loaded.
async function logout(url, next) {
  const ask = await page.goto(url, { waitUntil: 'load' });
  const confirmPage = { status: ask.status(), url: page.url(), heading: await heading() };
  const focused = () => page.evaluate(() => document.activeElement?.textContent?.trim() ?? null);
  for (let i = 0; i < 5 && (await focused()) !== 'Sign out'; i++) await page.keyboard.press('Tab');
  if ((await focused()) !== 'Sign out') throw new Error('Tab never reaches the Sign out button');
  const before = { requests: seen.requests.length, responses: seen.responses.length, console: seen.console.length };
  const confirmed = page.waitForResponse((r) => r.request().isNavigationRequest() && r.frame() === page.mainFrame()
    && path(r.url()) === '/logout/confirm');
  // The post to the SLO URL, wherever the browser makes it, and how it ends.
  const toSlo = page.waitForRequest((r) => at(r.url(), SLO) && r.method() === 'POST');
  // Without a way on, the page stays: the SP's page in the iframe has time to post its
  // LogoutResponse back to Authrim's /saml/slo, in the same frame.
  const answeredBack = next ? null : page.waitForResponse((r) => at(r.url(), `${ISSUER}/saml/slo`) && r.request().method() === 'POST');
  const started = Date.now();
  await page.keyboard.press('Enter');
  const res = await confirmed;
  const headers = await res.allHeaders();
  const slo = await toSlo;
  const sloAt = Date.now() - started;
  const sloFrame = where(frameOf(slo));
  let answer = null;
  if (next) {
    await page.waitForURL((u) => at(u.toString(), next), { waitUntil: 'load' });
  } else {
    await page.getByRole('heading', { name: 'You are signed out' }).waitFor();
    await page.waitForLoadState('load');
    const back = await answeredBack;
    // The answer is in; the frame shows it once committed and loaded.
    const frame = frameOf(back.request());
    if (!frame) throw new Error('the answer to the SP\'s LogoutResponse belongs to no frame');
    await frame.waitForURL((u) => at(u.toString(), `${ISSUER}/saml/slo`), { waitUntil: 'load' });
    const h = await back.allHeaders();
    answer = { status: back.status(), frame: where(frameOf(back.request())), navigation: back.request().isNavigationRequest(),
      x_frame_options: h['x-frame-options'] ?? null, csp: h['content-security-policy'] ?? null,
      heading: ((await frame.locator('h1').first().textContent({ timeout: WAIT_MS })) ?? '').trim() };
  }
  const sloResponse = await slo.response().catch(() => null);
  return {
    answer_back: answer,
    confirm_page: confirmPage,
    status: res.status(), method: res.request().method(), url: res.url(),
    csp: headers['content-security-policy'] ?? null, x_frame_options: headers['x-frame-options'] ?? null,
    slo: { url: slo.url(), method: slo.method(), frame: sloFrame, navigation: slo.isNavigationRequest(), content_type: slo.headers()['content-type'] ?? null, body: slo.postData(),
      status: sloResponse?.status() ?? null, ms_after_enter: sloAt },
    ended: { url: page.url(), heading: await heading(), ms_after_enter: Date.now() - started,
      frames: page.frames().filter((f) => f !== page.mainFrame()).map((f) => f.url()),
      sign_in_again: await page.locator('#sign-in-again').count() },
    requests: seen.requests.slice(before.requests),
    responses: seen.responses.slice(before.responses),
    console: seen.console.slice(before.console),
  };
}

async function main() {
  browser = await chromium.launch(chromiumOptions());
  const context = await browser.newContext();
  await recordCspViolations(context, (v, frame) => seen.csp_violations.push({ ...v, frame: frame.url() }));
  await recordSubmits(context, (s, frame) => seen.submits.push({ ...s, frame: where(frame) }));
  // What each document held once parsed (the logout page moves on by itself, often before its
  // body could be read back, and the iframe's page is gone once its form is posted).
  await context.exposeBinding('__authrimDocument', ({ frame }, d) => seen.documents.push({ ...d, frame: where(frame) }));
  await context.addInitScript(() => {
    document.addEventListener('DOMContentLoaded', () => window.__authrimDocument({
      url: location.href,
      heading: document.querySelector('h1')?.textContent ?? null,
      iframes: [...document.querySelectorAll('iframe')].map((f) => ({ src: f.src, hidden: f.hidden })),
      forms: [...document.forms].map((f) => ({ action: f.action, method: f.method,
        fields: [...f.elements].filter((e) => e.name).map((e) => [e.name, e.type]) })),
      scripts: [...document.scripts].map((s) => ({ inline: !s.src, nonce: s.nonce })),
      next: document.getElementById('next')?.href ?? null,
    }));
  });
  context.on('request', (r) => seen.requests.push({ url: r.url(), method: r.method(), navigation: r.isNavigationRequest(),
    frame: where(frameOf(r)), content_type: r.headers()['content-type'] ?? null, body: r.method() === 'POST' ? r.postData() : null }));
  context.on('response', async (r) => {
    const record = { url: r.url(), status: r.status(), method: r.request().method(), navigation: r.request().isNavigationRequest(),
      frame: where(frameOf(r.request())) };
    seen.responses.push(record);
    try {
      const h = await r.allHeaders();
      Object.assign(record, { content_type: h['content-type'] ?? null, csp: h['content-security-policy'] ?? null,
        x_frame_options: h['x-frame-options'] ?? null, cache_control: h['cache-control'] ?? null });
    } catch (e) {
      record.headers_error = String(e.message || e).split('\n')[0];
    }
  });
  context.on('requestfailed', (r) => seen.failed_requests.push({ url: r.url(), method: r.method(), error: r.failure()?.errorText,
    frame: where(frameOf(r)) }));
  page = await context.newPage();
  page.setDefaultTimeout(WAIT_MS);
  page.setDefaultNavigationTimeout(WAIT_MS);
  page.on('console', (m) => seen.console.push({ type: m.type(), text: m.text(), url: m.location().url }));
  page.on('pageerror', (e) => seen.page_errors.push(String(e)));
  const out = {};

  // 1. Sign-in by keyboard; the answer page's script posts the Response to the ACS.
  out.signed_in = await signIn(env('LOGIN'));
  // 2. Authrim's logout with a way back: the page goes on by itself once its iframe loaded.
  out.logout = await logout(env('LOGOUT'), NEXT);
  // 3. The session is over: a new AuthnRequest is met by the login page, where the same
  //    person signs in again (a new session).
  out.signed_in_again = await signIn(env('AFTER'));
  // 4. Authrim's logout without a way back (/logout alone): the signed-out page stays, with
  //    no script; its iframe posts all the same, and the SP's answer comes back through it.
  out.logout_stays = await logout(new URL('/logout', ISSUER).toString(), null);

  await context.close();
  return { ...out, ...seen };
}

await runAndReport(main, () => ({ page, seen }), async () => {
  await browser?.close().catch(() => {});
});
