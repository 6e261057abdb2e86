// inspector_load.cjs: times the inspector's page (docs/inspector.md) in
// headless chromium, from navigation to the view drawn (the page's own
// performance.now() when it marks itself ready), each load in a fresh
// browser context (nothing cached). Views alternate between the namespaces
// given (A B A B ...) so that a change in the machine's load hits all.
// Prints one line per namespace and view: median and p90 in ms.
//   node inspector_load.cjs PUPPETEER_DIR CHROMIUM URL ROUNDS VIEW:NS...
const puppeteer = require(process.argv[2] + "/node_modules/puppeteer-core");
const [chromium, url, rounds, ...cases] = process.argv.slice(3);

async function once(browser, view, ns) {
  const ctx = await browser.createBrowserContext();
  const page = await ctx.newPage();
  await page.setViewport({ width: 1280, height: 800 });
  await page.goto(`${url}/ui#/${view}?ns=${encodeURIComponent(ns)}`);
  await page.waitForFunction(() => document.body.dataset.ready, { timeout: 30000 });
  const ms = Number(await page.evaluate(() => document.body.dataset.readyMs));
  const rows = await page.$$eval("tbody tr", (t) => t.length);
  const err = await page.$eval("#status", (e) => e.textContent);
  await ctx.close();
  if (err) throw new Error(`${view} ${ns}: ${err}`);
  return { ms, rows };
}

(async () => {
  const browser = await puppeteer.launch({ executablePath: chromium, headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"] });
  const times = {}, rows = {};
  for (let r = 0; r < Number(rounds); r++)
    for (const c of cases) {
      const [view, ns] = c.split(":", 2);
      const t = await once(browser, view, c.slice(view.length + 1));
      (times[c] = times[c] || []).push(t.ms);
      rows[c] = t.rows;
    }
  await browser.close();
  for (const c of cases) {
    const v = times[c].sort((a, b) => a - b);
    const q = (p) => v[Math.min(v.length - 1, Math.floor(p * v.length))];
    console.log(`${c} median_ms=${q(0.5).toFixed(1)} p90_ms=${q(0.9).toFixed(1)} rows=${rows[c]}`);
  }
})().catch((e) => { console.error(e.message); process.exit(1); });
