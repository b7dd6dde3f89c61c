// dashboard_open.mjs - hold the dashboard open in headless Debian chromium
// for bench/dashboard.sh: log in, wait for the first render of the
// namespaces table, print how long it took, then keep the page open (its
// watches live) until stdin closes.
//
//   node bench/dashboard_open.mjs URL TOKEN
import { chromium } from 'playwright-core';

const [url, token] = process.argv.slice(2);
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
try {
  const page = await (await browser.newContext({ ignoreHTTPSErrors: true })).newPage();
  await page.goto(`${url}/ui/`);
  await page.fill('[data-testid=login-token]', token);
  const t0 = Date.now();
  await page.click('[data-testid=login-submit]');
  await page.waitForSelector('[data-testid=ns-row]', { timeout: 30000 });
  const rows = await page.locator('[data-testid=ns-row]').count();
  // first render from the page's own navigation start, after a reload (the
  // token is kept for the session): what a user opening the page waits
  await page.reload();
  await page.waitForSelector('[data-testid=ns-row]', { timeout: 30000 });
  const first = await page.evaluate(() => performance.now());
  console.log(`ready: login to rows ${Date.now() - t0} ms, first render after reload ${first.toFixed(0)} ms, ${rows} rows shown`);
  await new Promise((resolve) => { process.stdin.on('end', resolve); process.stdin.on('close', resolve); process.stdin.resume(); });
} finally {
  await browser.close();
}
