// Renders media/icon.svg to media/icon.png (128×128, transparent corners), the Marketplace icon
// named by package.json's "icon". Uses Debian's chromium (or $VOX_CHROMIUM) through
// playwright-core, both already needed by the tests; run it after changing the SVG and commit
// the PNG:   node scripts/render-icon.mjs
import * as fs from 'node:fs';
import * as path from 'node:path';
import { chromium } from 'playwright-core';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const svg = fs.readFileSync(path.join(root, 'media', 'icon.svg'), 'utf8');
const SIZE = 128;
const browser = await chromium.launch({
  executablePath: process.env.VOX_CHROMIUM || '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu'],
});
try {
  const page = await browser.newPage({ viewport: { width: SIZE, height: SIZE }, deviceScaleFactor: 1 });
  await page.setContent(`<!doctype html><html><body style="margin:0;background:transparent">${svg.replace(/width="\d+" height="\d+"/, `width="${SIZE}" height="${SIZE}"`)}</body></html>`);
  const out = path.join(root, 'media', 'icon.png');
  await page.locator('svg').screenshot({ path: out, omitBackground: true });
  process.stdout.write(`${path.relative(root, out)}: ${fs.statSync(out).size} bytes\n`);
} finally {
  await browser.close();
}
