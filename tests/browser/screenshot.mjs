// screenshot.mjs - the README's picture: log in to the dashboard of the
// allotd readme-screenshot.sh prepared, wait until the namespaces, the
// pending pod and the pool's quota are shown, and save the viewport (1280x800)
// to OUT.

import { chromium } from 'playwright-core';

const { ALLOT_URL, ALLOT_TOKEN, OUT } = process.env;
if (!ALLOT_URL || !ALLOT_TOKEN || !OUT) throw new Error('ALLOT_URL, ALLOT_TOKEN and OUT must be set');

const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
try {
  const page = await browser.newPage({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 800 } });
  await page.goto(ALLOT_URL + '/ui');
  await page.fill('[data-testid=login-token]', ALLOT_TOKEN);
  await page.click('[data-testid=login-submit]');
  await page.waitForFunction(() =>
    document.querySelector('[data-testid=pending-count]')?.textContent === '1' &&
    document.querySelector('[data-namespace=web-frontend] [data-quota=capsule-pool-web] [data-resource="requests.cpu"]') &&
    document.getElementById('conn')?.dataset.state === 'live', null, { timeout: 10000 });
  await page.screenshot({ path: OUT });
  console.log(`screenshot: ${OUT}`);
} finally {
  await browser.close();
}
