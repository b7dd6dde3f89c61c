// dashboard_open.mjs - the browser side of bench/dashboard.sh: one headless
// Debian chromium, kept running for the whole bench, whose one tab the bench
// switches between the dashboard and a blank page, so that the runs with the
// page open and without differ in the page alone (not in a browser starting
// or exiting next to them).
//
//   node bench/dashboard_open.mjs URL TOKEN  < commands
//
// Commands, one a line on stdin; each is answered by one line on stdout:
//   on   log in (the first time) or open the dashboard, wait for its first
//        render, answer "ready: ..." with how long it took
//   off  go to about:blank (the page, its watches and timers are gone),
//        answer "off"
// End of input closes the browser.
import { chromium } from 'playwright-core';
import { createInterface } from 'node:readline';

const [url, token] = process.argv.slice(2);
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
try {
  const page = await (await browser.newContext({ ignoreHTTPSErrors: true })).newPage();
  let loggedIn = false;

  async function open() {
    const t0 = Date.now();
    await page.goto(`${url}/ui/`);
    if (!loggedIn) { // the token is kept for the tab's session after this
      await page.fill('[data-testid=login-token]', token);
      await page.click('[data-testid=login-submit]');
      loggedIn = true;
    }
    await page.waitForSelector('[data-testid=ns-row]', { timeout: 30000 });
    // the page marks its first render once painted (performance mark)
    await page.waitForFunction(() => document.body.dataset.firstRenderMs, null, { timeout: 30000 });
    const first = await page.evaluate(() => Number(document.body.dataset.firstRenderMs));
    const rows = await page.locator('[data-testid=ns-row]').count();
    return `ready: open to rows ${Date.now() - t0} ms, first render ${first} ms from navigation, ${rows} rows shown`;
  }

  for await (const line of createInterface({ input: process.stdin })) {
    const cmd = line.trim();
    if (cmd === 'on') console.log(await open());
    else if (cmd === 'off') { await page.goto('about:blank'); console.log('off'); }
    else if (cmd) console.log(`unknown command ${cmd}`);
  }
} finally {
  await browser.close();
}
