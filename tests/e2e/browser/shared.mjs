// Shared by the browser programs (account_email.mjs, console.mjs, device.mjs, hrd.mjs,
// organizations.mjs, pages.mjs, passkeys.mjs, reset.mjs, signup.mjs): how Chromium is launched,
// RFC 6238 TOTP codes, axe-core runs, the text of a page with its languages, whether there is a
// font for Japanese, full-page screenshots, and walks through pages.
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { env } from './report.mjs';

/// Options for chromium.launch or chromium.launchPersistentContext: Debian's Chromium (the
/// CHROMIUM setting), headless.
export function chromiumOptions() {
  return {
    executablePath: env('CHROMIUM'),
    headless: true,
    timeout: 30_000,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  };
}

// RFC 6238 TOTP (HMAC-SHA1, 6 digits, 30 s steps) from an RFC 4648 base32 key (checked against
// RFC 6238 Appendix B below, and by test_console.py against test_mfa's helper).
export function base32(text) {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = 0;
  let value = 0;
  const out = [];
  for (const ch of text.replace(/=+$/, '').toUpperCase()) {
    const v = alphabet.indexOf(ch);
    if (v < 0) throw new Error(`not base32: ${text}`);
    value = (value << 5) | v;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      out.push((value >>> bits) & 0xff);
      value &= (1 << bits) - 1;
    }
  }
  return Buffer.from(out);
}
export function hotp(key, counter, digits = 6) {
  const message = Buffer.alloc(8);
  message.writeBigUInt64BE(BigInt(counter));
  const mac = createHmac('sha1', key).update(message).digest();
  const offset = mac[mac.length - 1] & 0x0f;
  return String((mac.readUInt32BE(offset) & 0x7fffffff) % 10 ** digits).padStart(digits, '0');
}
export const step = (at = Date.now()) => Math.floor(at / 1000 / 30);
// RFC 6238 Appendix B (SHA-1, T = 59 s), and the same seed through base32.
if (hotp(Buffer.from('12345678901234567890'), 1, 8) !== '94287082'
    || hotp(base32('GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ'), 1) !== '287082') {
  throw new Error('the TOTP helper does not match RFC 6238 Appendix B');
}

/// axe-core on `page` as it stands, in `scheme` (light or dark), with the rules of `tags`
/// (`script`: the path of axe.min.js, injected when the page does not have it yet).
export async function runAxe(page, scheme, { script, tags }) {
  await page.emulateMedia({ colorScheme: scheme });
  const theme = await page.evaluate(() => ({ dark: matchMedia('(prefers-color-scheme: dark)').matches,
    body_background: getComputedStyle(document.body).backgroundColor }));
  if (!(await page.evaluate(() => Boolean(window.axe)))) await page.addScriptTag({ path: script });
  const result = await page.evaluate(async (tags) => {
    const r = await window.axe.run(document, { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations', 'incomplete'] });
    const checks = (n) => [...n.any, ...n.all, ...n.none].filter((c) => c.data != null || c.message)
      .map((c) => ({ id: c.id, message: c.message, data: c.data }));
    const slim = (list) => list.map((v) => ({ id: v.id, impact: v.impact, help: v.help, help_url: v.helpUrl,
      tags: v.tags.filter((t) => t.startsWith('wcag')),
      nodes: v.nodes.map((n) => ({ target: n.target, html: n.html.slice(0, 300), summary: n.failureSummary ?? null, checks: checks(n) })) }));
    return { violations: slim(r.violations), incomplete: slim(r.incomplete), passes: r.passes.map((p) => p.id),
      engine: r.testEngine.version };
  }, tags);
  await page.emulateMedia({ colorScheme: 'light' });
  return { scheme, ...theme, ...result };
}

/// The browser context of the axe control (see axeControlRuns).
export const AXE_CONTROL_CONTEXT = { bypassCSP: true, colorScheme: 'light' };

/// The axe control: a page of its own in `page` with text faint in both themes, faint in the
/// dark theme only (.dark-only: #555 on #333), and a field without a label, checked by
/// `axe(scheme)` in light and dark; the violations each run found.
export async function axeControlRuns(page, axe) {
  await page.setContent(`<!doctype html><html lang="en"><head><title>axe control</title><style>
    body { background: #fff; color: #222; } .faint { color: #aaa; }
    @media (prefers-color-scheme: dark) { .dark-only { color: #555; background: #333; } }
    </style></head><body><main><h1>Control</h1><p class="faint">Faint in both themes</p>
    <p class="dark-only">Faint in the dark theme only</p><input type="text"></main></body></html>`);
  const runs = [await axe('light'), await axe('dark')];
  return runs.map((r) => ({ scheme: r.scheme, dark: r.dark,
    violations: r.violations.map((v) => ({ id: v.id, targets: v.nodes.map((n) => n.target.join(' ')) })) }));
}

/// Every piece of text a reader meets on `page` (visible text nodes; accessible names,
/// placeholders and titles from `attributes`; the document's title) with the language it is
/// marked as being in: the nearest lang attribute (WCAG 3.1.2, language of parts). Text inside
/// `skip` (a selector) is left out.
export const textParts = (page, { skip = 'script, style', attributes = ['aria-label', 'placeholder', 'alt', 'title'] } = {}) =>
  page.evaluate(({ skip, attributes }) => {
    const langOf = (el) => el.closest('[lang]')?.getAttribute('lang') ?? null;
    const out = [{ lang: document.documentElement.lang, text: document.title, attribute: 'title' }];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const t = n.textContent.replace(/\s+/g, ' ').trim();
      const el = n.parentElement;
      if (t && el && !el.closest(skip) && el.checkVisibility()) out.push({ lang: langOf(el), text: t });
    }
    for (const el of document.querySelectorAll(attributes.map((a) => `[${a}]`).join(', '))) {
      for (const a of attributes) {
        const v = el.getAttribute(a)?.trim();
        if (v) out.push({ lang: langOf(el), text: v, attribute: a });
      }
    }
    return out;
  }, { skip, attributes });

/// Whether this Chromium has a font for Japanese: two different kana drawn differently (with
/// no such font both are the same empty box, and the screenshots show boxes).
export const japaneseFont = (page) => page.evaluate(() => {
  const canvas = document.createElement('canvas');
  canvas.width = 40;
  canvas.height = 40;
  const g = canvas.getContext('2d');
  const draw = (ch) => {
    g.clearRect(0, 0, 40, 40);
    g.font = `32px ${getComputedStyle(document.body).fontFamily}`;
    g.fillText(ch, 2, 32);
    return g.getImageData(0, 0, 40, 40).data.join(',');
  };
  return draw('サ') !== draw('ン');
});

/// A full-page screenshot of `page` as `file` under `dir`, recorded in `seen.screenshots`.
export async function screenshot(page, seen, dir, file, timeout) {
  await page.screenshot({ path: join(dir, file), fullPage: true, timeout });
  seen.screenshots.push(file);
}

// ---------------------------------------------------------------------------------------------
// Walks through Authrim's pages (account_email.mjs, reset.mjs, signup.mjs): navigation, what a
// page shows, the browser context that reports what goes wrong, the test's checker, the
// client's request.

/// axe-core as the walks run it: its script, version, and the WCAG 2.0/2.1/2.2 A and AA rules.
const require = createRequire(import.meta.url);
export const AXE = { script: require.resolve('axe-core/axe.min.js'), version: require('axe-core/package.json').version,
  tags: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'] };

/// What a walk's browser reports, for the checks and for a failure's diagnosis.
export const newSeen = () => ({ walks: [], pages: [], facts: {}, console: [], page_errors: [], csp_violations: [],
  failed_requests: [], error_responses: [], screenshots: [], japanese_font: null, axe_control: null });

/// A page in a fresh (en-US) context of `browser`, each step bounded by `waitMs`, reporting into
/// `seen`: console messages, page errors, and navigations answered with an error status
/// (`error_responses`). For the walks that check a few things a page shows
/// (organizations.mjs, hrd.mjs, device.mjs).
export async function watchedPage(browser, seen, waitMs) {
  const context = await browser.newContext({ locale: 'en-US' });
  const page = await context.newPage();
  page.setDefaultTimeout(waitMs);
  page.on('console', (m) => seen.console.push({ type: m.type(), text: m.text(), url: m.location()?.url }));
  page.on('pageerror', (e) => seen.page_errors.push(String(e)));
  page.on('response', (r) => {
    if (r.request().isNavigationRequest() && r.status() >= 400) seen.error_responses.push({ url: r.url().split('?')[0], status: r.status() });
  });
  return page;
}

/// At the end, whatever happened: every context, then the browser.
export async function closeAll(contexts, browser) {
  for (const c of contexts) await c.close().catch(() => {});
  await browser?.close().catch(() => {});
}

/// The next main-frame navigation response of `page` whose URL passes `pred`.
export const navigation = (page, pred) => page.waitForResponse((r) => r.request().isNavigationRequest()
  && r.frame() === page.mainFrame() && pred(new URL(r.url())));

/// The redirects that led to `res`, first to last (`res` itself last): method, path, status.
export async function hops(res) {
  const list = [];
  for (let req = res.request(); req; req = req.redirectedFrom()) {
    const r = await req.response();
    list.unshift({ method: req.method(), path: new URL(req.url()).pathname, status: r?.status() ?? null });
  }
  return list;
}

/// Once the response `res` has arrived: its document committed and loaded (a redirect's
/// fragment, which the response's URL does not carry, aside).
export async function landed(page, res) {
  await page.waitForURL((u) => u.href.split('#')[0] === res.url().split('#')[0], { waitUntil: 'load' });
  return res;
}

/// Press (click) `selector` and return the navigation response passing `pred`, once loaded.
export async function press(page, selector, pred) {
  const next = navigation(page, pred);
  await page.locator(selector).click();
  return landed(page, await next);
}

/// Go to `url`; its response, once loaded.
export async function go(page, url) {
  const res = await page.goto(url, { waitUntil: 'load' });
  if (!res) throw new Error(`no response for ${url}`);
  return res;
}

/// The focused element, described: what a keyboard user is on. Read after the next rendering
/// update: the browser moves focus to an `autofocus` field when it flushes autofocus
/// candidates there, which can come after the `load` event on a busy machine (then the field
/// is not focused yet and a read at load sees the body).
export const focusedElement = (page) => page.evaluate(async () => {
  await new Promise((done) => {
    const timer = setTimeout(done, 1000);
    requestAnimationFrame(() => requestAnimationFrame(() => { clearTimeout(timer); done(); }));
  });
  const e = document.activeElement;
  if (!e || e === document.body || e === document.documentElement) return null;
  return { tag: e.tagName.toLowerCase(), id: e.id || null, name: e.getAttribute('name'), type: e.getAttribute('type'),
    role: e.getAttribute('role'), tabindex: e.getAttribute('tabindex'), class: e.getAttribute('class'),
    href: e.getAttribute('href'), form_action: e.form?.getAttribute('action') ?? null,
    text: (e.innerText || e.value || '').replace(/\s+/g, ' ').trim().slice(0, 120) };
});

/// Every visible form field in `main` with the text of its label(s) (and, with `values`, what
/// it holds), its hidden fields, visible buttons and links.
export const formFields = (page, { values = false } = {}) => page.evaluate((values) => {
  const visible = (e) => e.checkVisibility();
  return {
    inputs: [...document.querySelectorAll('main input, main select, main textarea')].filter((e) => e.type !== 'hidden' && visible(e))
      .map((e) => ({ id: e.id || null, name: e.name, type: e.type, autocomplete: e.getAttribute('autocomplete'),
        required: e.required, value_length: e.value.length, ...(values ? { value: e.value } : {}),
        labels: [...(e.labels ?? [])].map((l) => l.textContent.replace(/\s+/g, ' ').trim()) })),
    hidden: [...document.querySelectorAll('main input[type=hidden]')].map((e) => ({ name: e.name, has_value: e.value.length > 0 })),
    buttons: [...document.querySelectorAll('main button')].filter(visible)
      .map((b) => ({ text: b.textContent.replace(/\s+/g, ' ').trim(), type: b.type, form_action: b.form?.getAttribute('action') ?? null })),
    links: [...document.querySelectorAll('main a[href]')].filter(visible)
      .map((a) => ({ href: a.getAttribute('href'), text: a.textContent.replace(/\s+/g, ' ').trim() })),
  };
}, values);

/// Every Content-Security-Policy violation any document of `context` reports (its own frames
/// and theirs), handed to `record(violation, frame)`.
export async function recordCspViolations(context, record) {
  await context.exposeBinding('__authrimCspViolation', ({ frame }, v) => record(v, frame));
  await context.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => window.__authrimCspViolation({
      documentURI: e.documentURI, blockedURI: e.blockedURI, effectiveDirective: e.effectiveDirective,
      originalPolicy: e.originalPolicy, disposition: e.disposition, sourceFile: e.sourceFile, lineNumber: e.lineNumber,
    }));
  });
}

/// Every form.submit() a page of `context` calls, recorded before it is done and handed to
/// `record(submit, frame)`: which script called it (inline? its nonce, and the nonce
/// attribute as the DOM shows it), the form's action, method and fields, and, with
/// `withDocument`, the document as it stands then (an auto-submitting page moves on at once,
/// so this is where it is seen).
export async function recordSubmits(context, record, { withDocument = false } = {}) {
  await context.exposeBinding('__authrimSubmit', ({ frame }, s) => record(s, frame));
  await context.addInitScript((withDocument) => {
    const submit = HTMLFormElement.prototype.submit;
    HTMLFormElement.prototype.submit = function () {
      const script = document.currentScript;
      window.__authrimSubmit({
        url: location.href, action: this.action, method: this.method,
        fields: [...new FormData(this)].map(([k, v]) => [k, String(v)]),
        by_script: script ? { inline: !script.src, nonce: script.nonce, nonce_attribute: script.getAttribute('nonce') } : null,
        document: withDocument ? {
          forms: [...document.forms].map((f) => ({ action: f.action, method: f.method,
            fields: [...f.elements].filter((e) => e.name).map((e) => [e.name, e.type]) })),
          scripts: [...document.scripts].map((s) => ({ inline: !s.src, nonce: s.nonce })),
          noscripts: document.querySelectorAll('noscript').length,
          buttons: document.querySelectorAll('button').length,
          heading: document.querySelector('h1')?.textContent ?? null,
        } : undefined,
      });
      return submit.call(this);
    };
  }, withDocument);
}

/// A new context (`options`: Playwright's, light theme by default) and page in `browser`,
/// whose console messages, CSP violations, page errors, failed requests and error statuses go
/// to `seen` tagged with `tag` ({ walk, who }); `onRequest(request)` sees every request.
export async function openReporting(browser, seen, tag, options, { waitMs, onRequest } = {}) {
  const context = await browser.newContext({ colorScheme: 'light', ...options });
  context.setDefaultTimeout(waitMs);
  context.setDefaultNavigationTimeout(waitMs);
  await recordCspViolations(context, (v, frame) => seen.csp_violations.push({ ...tag, ...v, frame: frame.url() }));
  const page = await context.newPage();
  page.on('console', (m) => seen.console.push({ ...tag, type: m.type(), text: m.text(), url: m.location().url }));
  page.on('pageerror', (e) => seen.page_errors.push({ ...tag, error: String(e) }));
  page.on('requestfailed', (r) => seen.failed_requests.push({ ...tag, url: r.url(), error: r.failure()?.errorText }));
  page.on('response', (r) => {
    if (r.status() >= 400) seen.error_responses.push({ ...tag, method: r.request().method(), url: r.url(), status: r.status() });
  });
  if (onRequest) page.on('request', onRequest);
  return { context, page };
}

/// Ask the test's checker (an HTTP server of the Python test, `POST /check`) to do `body`'s op.
export async function askChecker(checker, body, waitMs) {
  const res = await fetch(new URL('/check', checker), { method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body), signal: AbortSignal.timeout(waitMs + 5000) });
  if (!res.ok) throw new Error(`the checker (${body.label}): ${res.status} ${await res.text()}`);
  return res.json();
}

/// A client's authorization request (code flow, PKCE S256) at `issuer` (`extra`: more
/// parameters): its URL, state, nonce and verifier.
export function authorizationRequest(issuer, { clientId, redirectUri, scope, extra = {} }) {
  const verifier = randomBytes(32).toString('base64url');
  const state = randomBytes(12).toString('base64url');
  const nonce = randomBytes(12).toString('base64url');
  const q = new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: redirectUri, scope, state, nonce,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256', ...extra });
  return { url: new URL(`/authorize?${q}`, issuer).toString(), state, nonce, verifier };
}

/// The login form filled in and sent; the navigation response passing `pred`.
export async function signIn(page, username, password, pred) {
  await page.locator('#username').fill(username);
  await page.locator('#password').fill(password);
  return press(page, 'form[action="/login"] button[type=submit]', pred);
}

/// What the page reached by `res` shows: its status and headers, language, title, heading,
/// text, focus, fields, alerts and statuses, and its text with the languages it is marked in.
export async function pageRecord(page, res, waitMs, { values = false } = {}) {
  return { path: new URL(page.url()).pathname, method: res.request().method(), status: res.status(),
    content_language: res.headers()['content-language'] ?? null, vary: res.headers().vary ?? null,
    content_type: res.headers()['content-type'] ?? null,
    html_lang: await page.locator('html').getAttribute('lang'), title: await page.title(),
    heading: ((await page.locator('h1').first().textContent({ timeout: waitMs })) ?? '').trim(),
    text: (await page.locator('body').innerText()).replace(/\s+/g, ' ').trim(),
    focused: await focusedElement(page), fields: await formFields(page, { values }),
    alerts: await page.locator('[role=alert]:visible').evaluateAll((l) => l.map((e) => e.textContent.replace(/\s+/g, ' ').trim())),
    statuses: await page.locator('[role=status]:visible').evaluateAll((l) => l.map((e) => e.textContent.trim())),
    parts: await textParts(page) };
}

/// The axe control (axeControlRuns) in a context of its own, closed afterwards; `axe(page,
/// scheme)` runs axe-core.
export async function axeControlIn(browser, axe) {
  const context = await browser.newContext(AXE_CONTROL_CONTEXT);
  try {
    const page = await context.newPage();
    return await axeControlRuns(page, (scheme) => axe(page, scheme));
  } finally {
    await context.close();
  }
}

/// The browser contexts' screens: a desktop's, and a phone's (390x844, touch, 2x pixels).
export const DESKTOP = { viewport: { width: 1280, height: 800 } };
export const PHONE = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 };

/// How wide `page` is on a phone: the document against the viewport (a phone widens its
/// viewport to what the page needs: innerWidth then grows past 390), what sticks out on the
/// right, and what holds content wider than itself that it lets show (text that does not wrap:
/// the element's own box stays inside, its text does not).
export const pageWidth = (page) => page.evaluate(() => {
  const root = document.documentElement;
  const name = (e) => `${e.tagName.toLowerCase()}${e.id ? `#${e.id}` : ''}${e.className ? `.${e.className}` : ''}`;
  const all = [...document.querySelectorAll('body *')];
  const out = all.filter((e) => e.getBoundingClientRect().right > root.clientWidth + 0.5).slice(0, 10).map(name);
  const overflowing = all.filter((e) => e.clientWidth > 0 && e.scrollWidth > e.clientWidth + 1
    && getComputedStyle(e).overflowX === 'visible').slice(0, 10).map(name);
  return { scroll_width: root.scrollWidth, client_width: root.clientWidth, inner_width: window.innerWidth, sticking_out: out,
    overflowing };
});

/// A page of `walk` reached by `res`, recorded in `seen.pages` as the walk's next (`n`): what
/// it shows (pageRecord; `values`: with what its fields hold), then, as the walk asks, how
/// wide it is (`walk.phone`), a full-page screenshot `<walk>-<nn>-<name>.png` under
/// `artifacts` (`walk.shots`), axe-core's findings in the light and then the dark theme
/// (`walk.axe`, for the names in `axePages`). The record, which the caller may add to.
export async function visitPage(page, seen, walk, name, res, { waitMs, artifacts, axePages, values = false }) {
  const n = seen.pages.filter((p) => p.walk === walk.name).length + 1;
  const rec = { walk: walk.name, n, name, ...(await pageRecord(page, res, waitMs, { values })) };
  if (walk.phone) rec.width = await pageWidth(page);
  if (walk.shots) await screenshot(page, seen, artifacts, `${walk.name}-${String(n).padStart(2, '0')}-${name}.png`, waitMs);
  if (walk.axe && axePages.has(name)) rec.axe = [await runAxe(page, 'light', AXE), await runAxe(page, 'dark', AXE)];
  seen.pages.push(rec);
  return rec;
}

/// What sticks out of its box sideways (issue 36: "Remove" buttons wider than their card):
/// each visible control, image, form, list item, code block and table region of `main`
/// against the nearest box that holds it (a table cell, a list item, a table's scrolling
/// region, the card), by more than half a pixel. A table's own region scrolls and clips, so
/// what is inside it is held to its cell, not to the region. Up to 20, described.
export const outOfBox = (page) => page.evaluate(() => {
  // (Attributes, not properties: a form's `id` property is its field named "id".)
  const name = (e) => {
    const id = e.getAttribute('id');
    const cls = (e.getAttribute('class') ?? '').trim();
    return `${e.tagName.toLowerCase()}${id ? `#${id}` : ''}${cls ? `.${cls.replace(/\s+/g, '.')}` : ''}`;
  };
  const out = [];
  const things = 'main button, main input:not([type=hidden]), main select, main textarea, main img, main a.button, main form, '
    + 'main li, main pre, main .table-wrap, main table';
  for (const e of document.querySelectorAll(things)) {
    if (!e.checkVisibility()) continue;
    const box = e.parentElement.closest('td, th, li, .table-wrap, main');
    if (!box || (box.classList.contains('table-wrap') && e.tagName === 'TABLE')) continue;
    const r = e.getBoundingClientRect();
    const b = box.getBoundingClientRect();
    if (r.left < b.left - 0.5 || r.right > b.right + 0.5) {
      out.push(`${name(e)} [${Math.round(r.left)}, ${Math.round(r.right)}] outside ${name(box)} [${Math.round(b.left)}, ${Math.round(b.right)}]`);
    }
  }
  return out.slice(0, 20);
});
