// A theme of a logo and two colours in a real browser (Debian's Chromium, headless, driven by
// Playwright): test_theme.py starts three servers, "plain" (no theme), "themed" (the README's
// example: assets/logo.svg and an assets/style.css of two CSS variables, added after the
// built-in style sheet) and "replaced" (the same theme with AUTHRIM_THEME_CSS=replace), and
// checks what this prints.
//
// For each server, on a desktop (1280x800) and a phone (390x844, isMobile), the sign-in page
// (/account, through its own sign-in): the style sheets the page loaded, the boxes of the card,
// heading, fields and button (to the pixel), the computed colours of the page, the button and
// the card's corners and width, and the logo (its URL, size, and the SVG it is). The test
// compares the themed page's boxes with the plain one's (the layout kept) and its colours with
// the theme's.
//
// Input, from the environment: SERVERS (JSON: name -> issuer), CHROMIUM, ARTIFACTS_DIR
// (screenshots <server>-<screen>.png; on failure the page), WAIT_MS. Output: one line of JSON.
import { chromium } from 'playwright-core';
import { env, giveUpAfter, runAndReport } from './report.mjs';
import * as shared from './shared.mjs';
import { chromiumOptions, openReporting } from './shared.mjs';

const SERVERS = JSON.parse(env('SERVERS'));
const ARTIFACTS = env('ARTIFACTS_DIR');
const WAIT_MS = Number(process.env.WAIT_MS || 10000);

giveUpAfter(60);

const seen = shared.newSeen();
seen.measured = {};
let browser;
let page;
const contexts = [];

const measure = async () => {
  const m = await page.evaluate(() => {
  const rect = (sel) => {
    const e = document.querySelector(sel);
    if (!e) return null;
    const r = e.getBoundingClientRect();
    return [r.x, r.y, r.width, r.height].map((n) => Math.round(n));
  };
  const style = (sel, prop) => getComputedStyle(document.querySelector(sel))[prop];
  const submit = 'form[action="/login"] button[type=submit]';
  const logo = document.querySelector('.brand img');
  return {
    sheets: [...document.styleSheets].map((s) => new URL(s.href).pathname),
    geometry: { card: rect('main'), heading: rect('h1'), username: rect('#username'), password: rect('#password'),
      submit: rect(submit), brand_text: rect('.brand span') },
    colours: { body: style('body', 'backgroundColor'), button: style(submit, 'backgroundColor'),
      card: style('main', 'backgroundColor') },
    card: { radius: style('main', 'borderTopLeftRadius'), max_width: style('main', 'maxWidth') },
    logo: { url: logo.currentSrc, path: new URL(logo.currentSrc).pathname, size: [logo.naturalWidth, logo.naturalHeight] },
    scroll_width: document.documentElement.scrollWidth,
  };
  });
  // The SVG the logo is, fetched outside the page (its CSP allows it no fetch).
  m.logo.svg = await (await page.context().request.get(m.logo.url)).text();
  return m;
};

async function main() {
  browser = await chromium.launch(chromiumOptions());
  for (const [server, issuer] of Object.entries(SERVERS)) {
    for (const [screen, options] of [['desktop', shared.DESKTOP], ['phone', shared.PHONE]]) {
      const { context, page: p } = await openReporting(browser, seen, { walk: `${server}-${screen}` },
        { locale: 'en-US', ...options }, { waitMs: WAIT_MS });
      contexts.push(context);
      page = p;
      const res = await shared.go(page, new URL('/account', issuer).toString());
      seen.measured[`${server}-${screen}`] = { status: res.status(), path: new URL(page.url()).pathname, ...(await measure()) };
      await shared.screenshot(page, seen, ARTIFACTS, `${server}-${screen}.png`, WAIT_MS);
      await context.close();
      contexts.pop();
    }
  }
  return seen;
}

await runAndReport(main, () => ({ page, seen }), () => shared.closeAll(contexts, browser));
