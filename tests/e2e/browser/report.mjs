// Shared by the browser programs: run `main`, print its JSON outcome on stdout, or, when it
// throws, what the browser saw (the page, a screenshot under ARTIFACTS_DIR, console and CSP
// reports) on stderr and exit 1. `state()` gives the current page and the seen reports;
// `cleanup()` closes the browser.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/// A required setting from the environment.
export function env(name) {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

/// The whole program is bounded, whatever hangs: exit 2 after `bound` seconds times
/// AUTHRIM_E2E_TIME_SCALE (conftest.py sets it: the number of pytest-xdist workers, whose
/// programs share the machine's cores).
export function giveUpAfter(bound) {
  const seconds = bound * (Number(process.env.AUTHRIM_E2E_TIME_SCALE) || 1);
  setTimeout(() => {
    process.stderr.write(`browser test: gave up after ${seconds} s\n`);
    process.exit(2);
  }, seconds * 1000).unref();
}

export async function runAndReport(main, state, cleanup) {
  const artifacts = process.env.ARTIFACTS_DIR;
  let code = 0;
  try {
    const out = await main();
    process.stdout.write(JSON.stringify(out) + '\n');
  } catch (e) {
    code = 1;
    const { page, seen } = state();
    process.stderr.write(`browser test failed: ${e.stack || e}\n`);
    if (page) {
      process.stderr.write(`at ${page.url()}\n`);
      try {
        const html = await page.content();
        process.stderr.write(`page: ${html.slice(0, 3000)}\n`);
        if (artifacts) {
          writeFileSync(join(artifacts, 'failure.html'), html);
          await page.screenshot({ path: join(artifacts, 'failure.png'), timeout: 5000 });
          process.stderr.write(`screenshot and HTML in ${artifacts}\n`);
        }
      } catch (inner) {
        process.stderr.write(`(no page content: ${inner.message})\n`);
      }
    }
    process.stderr.write(`browser console, CSP reports, errors: ${JSON.stringify(seen, null, 1)}\n`);
  } finally {
    await cleanup();
  }
  process.exit(code);
}
