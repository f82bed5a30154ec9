// Shared by the browser programs (console.mjs, pages.mjs, passkeys.mjs, reset.mjs): how
// Chromium is launched, RFC 6238 TOTP codes, axe-core runs, the text of a page with its
// languages, whether there is a font for Japanese, and full-page screenshots.
import { createHmac } from 'node:crypto';
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
