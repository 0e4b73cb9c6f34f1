// n8n's chat widget in headless Chromium, pointed at `nodekit serve`'s hosted
// chat page: a message is typed, its answer must be seen arriving in pieces;
// after a reload, the previous session must come back from the workflow's
// memory. Saves a screenshot. Then, on a page whose widget copy was changed,
// the browser must refuse to run it (its integrity hash no longer matches).
// Usage: node browser.mjs CHAT_URL SCREENSHOT TAMPERED_CHAT_URL
import { chromium } from 'playwright-core';

const [url, screenshot, tampered] = process.argv.slice(2);
const check = (ok, what) => {
  console.log(`${ok ? 'ok  ' : 'FAIL'} browser: ${what}`);
  if (!ok) process.exitCode = 1;
};

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
try {
  const page = await browser.newPage({ viewport: { width: 900, height: 700 } });
  page.on('pageerror', (e) => console.error(`[page error] ${e.message}`));
  await page.goto(url);
  const input = page.locator('[data-test-id="chat-input"]');
  await input.waitFor({ timeout: 20000 });
  const question = 'Where does Ada live?';
  // Counted before sending: the typing indicator is a bot message too.
  const bot = page.locator('.chat-message-from-bot');
  const before = await bot.count();
  await input.fill(question);
  await input.press('Enter');

  // The answer's text as it grows, sampled every 40 ms. While it arrives,
  // the widget shows it before its typing indicator, another bot message.
  const seen = [];
  const end = Date.now() + 20000;
  while (Date.now() < end) {
    const texts = (await bot.allInnerTexts()).slice(before).map((t) => t.trim()).filter((t) => t);
    const text = texts.join(' | ');
    if (text && seen[seen.length - 1] !== text) seen.push(text);
    if (text.includes('(0 earlier questions)')) break;
    await page.waitForTimeout(40);
  }
  const final = seen[seen.length - 1] ?? '';
  check(final.includes(`You asked: ${question} Ada Lovelace lives in London.`), `the answer arrived: ${JSON.stringify(final)}`);
  check(seen.length >= 3, `it streamed in: ${seen.length} different texts were seen while it arrived`);

  await page.reload();
  await page.locator('.chat-message-from-user').first().waitFor({ timeout: 20000 });
  const users = await page.locator('.chat-message-from-user').allInnerTexts();
  const bots = await page.locator('.chat-message-from-bot').allInnerTexts();
  check(users.some((t) => t.includes(question)), `after a reload, the question is back: ${JSON.stringify(users)}`);
  check(bots.some((t) => t.includes('Ada Lovelace lives in London')), 'after a reload, the answer is back');
  await page.screenshot({ path: screenshot });
  console.log(`screenshot: ${screenshot}`);

  const changed = await browser.newPage();
  const messages = [];
  changed.on('console', (m) => messages.push(m.text()));
  changed.on('pageerror', (e) => messages.push(e.message));
  await changed.goto(tampered);
  await changed.waitForTimeout(3000);
  const shown = await changed.locator('[data-test-id="chat-input"]').count();
  check(shown === 0, 'a changed copy of the widget does not run');
  check(messages.some((m) => /integrity/i.test(m)), `the browser says why: ${JSON.stringify(messages.slice(0, 2))}`);
} finally {
  await browser.close();
}
